package sparkwin.gateway.connect

import java.io.ByteArrayOutputStream

import org.apache.spark.connect.proto.{Range, Relation}
import org.scalacheck.Gen
import org.sparkproject.connect.protobuf.{Any => ProtoAny, ByteString, CodedOutputStream}

import sparkwin.Fuzz
import sparkwin.gateway.PythonEntryPoint
import sparkwin.plan.PlanException

/** The Connect relation from clients sparkwin does not trust: valid messages (each operation,
  * an input relation, a plan) mutated as bytes are unpacked, their input parsed and their plan's
  * rules asked, as the server plugin does, to a result or a [[PlanException]]: never another
  * exception, a hang, or an allocation the message cannot back.
  */
class RelationFuzzSuite extends munit.FunSuite {
  private val plan =
    """{"planVersion": 1, "inputSchema": {"type": "struct", "fields": [{"name": "user", "type": "string",
      |"nullable": true, "metadata": {}}, {"name": "ts", "type": "long", "nullable": true, "metadata": {}}]},
      |"timestamp": "ts", "keys": ["user"], "assigner": {"kind": "tumbling", "sizeMs": 10, "offsetMs": 0,
      |"eventTime": true}, "allowedLatenessMs": 0, "accumulationMode": "accumulating",
      |"function": {"kind": "aggregate", "aggregates": [{"fn": "count", "alias": "n"}]}}""".stripMargin

  private val input =
    Relation.newBuilder().setRange(Range.newBuilder().setStart(0).setEnd(10).setStep(1)).build()

  private def message(operation: String, withInput: Boolean, streaming: Boolean): Array[Byte] = {
    val inner = new ByteArrayOutputStream()
    val out = CodedOutputStream.newInstance(inner)
    out.writeString(1, operation)
    out.writeString(2, plan)
    if (withInput) out.writeBytes(3, input.toByteString)
    if (streaming) out.writeBool(4, true)
    out.flush()
    ProtoAny
      .newBuilder()
      .setTypeUrl(RelationMessage.TypeUrl)
      .setValue(ByteString.copyFrom(inner.toByteArray))
      .build()
      .toByteArray
  }

  private val valid = Seq(
    message("validate", withInput = false, streaming = true),
    message("windowed", withInput = true, streaming = false),
    message("describe", withInput = false, streaming = false)
  )

  test("fuzz the Connect relation: a mutated message is read, or refused with a PlanException") {
    Fuzz.bytes(
      "Connect relation",
      Fuzz.cases(2000),
      Gen.frequency(9 -> Fuzz.mutatedBytes(valid), 1 -> Fuzz.randomBytes),
      (length: Int) => (64L << 20) + 4096L * length
    )(e => e.isInstanceOf[PlanException] && e.getCause == null) { b =>
      RelationMessage.unpack(b).foreach { m =>
        m.input.foreach(RelationMessage.parseRelation(_, 1024))
        if (m.operation == RelationMessage.Validate) PythonEntryPoint.validate(m.planJson, m.streaming)
      }
    }
  }
}
