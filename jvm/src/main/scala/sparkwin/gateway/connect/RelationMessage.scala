package sparkwin.gateway.connect

import org.sparkproject.connect.protobuf.{Any => ProtoAny, ByteString, CodedInputStream, WireFormat}

import sparkwin.plan.{Contract, PlanException}

/** What a sparkwin client asks a Spark Connect server for: an operation, a plan, for
  * "windowed" the input relation, still as its serialized `spark.connect.Relation`, and for
  * "validate" whether that input is a stream. The wire layout is contract.json's `connect`
  * (which Python's writer reads too); nothing is generated, this object reads the few fields
  * by hand with the protobuf classes Spark Connect ships (shaded).
  */
final case class RelationMessage(
    operation: String,
    planJson: String,
    input: Option[ByteString],
    streaming: Boolean = false,
    argumentsJson: String = ""
)

object RelationMessage {
  val TypeUrl: String = Contract.connectTypeUrl

  val Windowed: String = Contract.connectOperation("windowed")
  val Describe: String = Contract.connectOperation("describe")
  val Version: String = Contract.connectOperation("version")
  val Validate: String = Contract.connectOperation("validate")
  val StateRead: String = Contract.connectOperation("stateRead")
  val StateBatch: String = Contract.connectOperation("stateBatch")

  private val OperationField = field("operation", "string")
  private val PlanJsonField = field("plan_json", "string")
  private val InputField = field("input", "relation")
  private val StreamingField = field("streaming", "bool")
  private val ArgumentsField = field("arguments_json", "string")

  /** A field's number, the contract's type checked against what this reader reads it as. */
  private def field(name: String, readAs: String): Int = {
    val (number, kind) = Contract.connectField(name)
    if (kind != readAs)
      throw new IllegalStateException(s"contract.json's connect field $name is $kind; the jar reads $readAs")
    number
  }

  /** The message inside a serialized `google.protobuf.Any`, or None when the Any carries
    * another plugin's message.
    */
  def unpack(serializedAny: Array[Byte]): Option[RelationMessage] = {
    val any =
      try ProtoAny.parseFrom(serializedAny)
      catch { case e: java.io.IOException => throw notProtobuf("relation extension", e) }
    if (any.getTypeUrl != TypeUrl) None else Some(decode(any.getValue))
  }

  private def notProtobuf(what: String, e: Exception) =
    new PlanException(
      s"the sparkwin Connect $what is not valid protobuf (${e.getMessage}); the client's " +
        "sparkwin and the server's jar may be of different versions"
    )

  def decode(bytes: ByteString): RelationMessage = {
    val in = bytes.newCodedInput()
    var operation = ""
    var planJson = ""
    var input: Option[ByteString] = None
    var streaming = false
    var arguments = ""
    var done = false
    try {
      while (!done) {
        val tag = in.readTag()
        val field = WireFormat.getTagFieldNumber(tag)
        val lengthDelimited = WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED
        val varint = WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_VARINT
        if (tag == 0) done = true
        else if (field == OperationField && lengthDelimited) operation = in.readStringRequireUtf8()
        else if (field == PlanJsonField && lengthDelimited) planJson = in.readStringRequireUtf8()
        else if (field == InputField && lengthDelimited) input = Some(in.readBytes())
        else if (field == StreamingField && varint) streaming = in.readBool()
        else if (field == ArgumentsField && lengthDelimited) arguments = in.readStringRequireUtf8()
        else in.skipField(tag) // a field of a newer client: proto3 readers ignore what they don't know
      }
    } catch {
      case e: java.io.IOException => throw notProtobuf("relation", e)
    }
    RelationMessage(operation, planJson, input, streaming, arguments)
  }

  /** A Relation read with the recursion limit the Connect server uses for its own requests:
    * protobuf's default (100) is less than a long DataFrame chain needs. Protobuf reads nesting
    * recursively, and the plugin reads it inside Spark's own planning, so a relation within the
    * limit may still be deeper than the thread's stack holds: that is refused as well, the
    * server keeps serving.
    */
  def parseRelation(bytes: ByteString, recursionLimit: Int): org.apache.spark.connect.proto.Relation =
    try {
      val in: CodedInputStream = bytes.newCodedInput()
      in.setRecursionLimit(recursionLimit)
      in.setSizeLimit(Int.MaxValue)
      val relation = org.apache.spark.connect.proto.Relation.parseFrom(in)
      in.checkLastTagWas(0)
      relation
    } catch {
      case e: java.io.IOException =>
        throw new PlanException(s"the input of a sparkwin relation is not a valid Relation: $e")
      case _: StackOverflowError =>
        throw new PlanException(
          s"the input of a sparkwin relation nests deeper than this server's thread can read (it takes " +
            s"up to $recursionLimit levels, spark.connect.grpc.marshallerRecursionLimit): build the " +
            "input DataFrame with fewer steps, or save it and read it back"
        )
    }
}
