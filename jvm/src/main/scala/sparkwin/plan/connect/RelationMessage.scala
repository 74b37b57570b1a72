package sparkwin.plan.connect

import org.sparkproject.connect.protobuf.{Any => ProtoAny, ByteString, CodedInputStream, WireFormat}

import sparkwin.plan.PlanException

/** What a sparkwin client asks a Spark Connect server for: an operation, a plan, and for
  * "windowed" the input relation, still as its serialized `spark.connect.Relation`. The wire
  * format is `SparkwinRelation` in jvm/src/main/protobuf/sparkwin_connect.proto; nothing is
  * generated from that file, this object reads the few fields by hand with the protobuf classes
  * Spark Connect ships (shaded).
  */
final case class RelationMessage(operation: String, planJson: String, input: Option[ByteString])

object RelationMessage {
  val TypeUrl = "type.googleapis.com/sparkwin.plan.connect.SparkwinRelation"

  val Windowed = "windowed"
  val Describe = "describe"
  val Version = "version"

  private val OperationField = 1
  private val PlanJsonField = 2
  private val InputField = 3

  /** The message inside a serialized `google.protobuf.Any`, or None when the Any carries
    * another plugin's message.
    */
  def unpack(serializedAny: Array[Byte]): Option[RelationMessage] = {
    val any = ProtoAny.parseFrom(serializedAny)
    if (any.getTypeUrl != TypeUrl) None else Some(decode(any.getValue))
  }

  def decode(bytes: ByteString): RelationMessage = {
    val in = bytes.newCodedInput()
    var operation = ""
    var planJson = ""
    var input: Option[ByteString] = None
    var done = false
    try {
      while (!done) {
        val tag = in.readTag()
        val field = WireFormat.getTagFieldNumber(tag)
        val lengthDelimited = WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED
        if (tag == 0) done = true
        else if (field == OperationField && lengthDelimited) operation = in.readStringRequireUtf8()
        else if (field == PlanJsonField && lengthDelimited) planJson = in.readStringRequireUtf8()
        else if (field == InputField && lengthDelimited) input = Some(in.readBytes())
        else in.skipField(tag) // a field of a newer client: proto3 readers ignore what they don't know
      }
    } catch {
      case e: java.io.IOException =>
        throw new PlanException(
          s"the sparkwin Connect relation is not valid protobuf (${e.getMessage}); the client's " +
            "sparkwin and the server's jar may be of different versions"
        )
    }
    RelationMessage(operation, planJson, input)
  }

  /** A Relation read with the recursion limit the Connect server uses for its own requests:
    * protobuf's default (100) is less than a long DataFrame chain needs.
    */
  def parseRelation(bytes: ByteString, recursionLimit: Int): org.apache.spark.connect.proto.Relation = {
    val in: CodedInputStream = bytes.newCodedInput()
    in.setRecursionLimit(recursionLimit)
    in.setSizeLimit(Int.MaxValue)
    val relation = org.apache.spark.connect.proto.Relation.parseFrom(in)
    in.checkLastTagWas(0)
    relation
  }
}
