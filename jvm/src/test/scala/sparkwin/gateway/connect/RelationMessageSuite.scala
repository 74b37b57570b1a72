package sparkwin.gateway.connect

import java.io.ByteArrayOutputStream

import org.apache.spark.connect.proto.{Range, Relation}
import org.sparkproject.connect.protobuf.{Any => ProtoAny, ByteString, CodedOutputStream}

import sparkwin.plan.{Contract, PlanException}

class RelationMessageSuite extends munit.FunSuite {

  /** A SparkwinRelation written by protobuf's own encoder, field by field, plus what the test
    * adds (unknown fields of a newer client).
    */
  private def written(extra: CodedOutputStream => Unit, fields: (Int, ByteString)*): ByteString = {
    val bytes = new ByteArrayOutputStream()
    val out = CodedOutputStream.newInstance(bytes)
    fields.foreach { case (number, value) => out.writeBytes(number, value) }
    extra(out)
    out.flush()
    ByteString.copyFrom(bytes.toByteArray)
  }

  private def utf8(s: String) = ByteString.copyFromUtf8(s)

  private val input =
    Relation.newBuilder().setRange(Range.newBuilder().setStart(0).setEnd(10).setStep(1)).build()

  test("the three fields, in any order, and the input relation parses back") {
    val plan = """{"planVersion": 1, "keys": ["ü"]}"""
    val bytes = written(_ => (), 3 -> input.toByteString, 2 -> utf8(plan), 1 -> utf8("windowed"))
    val message = RelationMessage.decode(bytes)
    assertEquals(message.operation, "windowed")
    assertEquals(message.planJson, plan)
    assertEquals(RelationMessage.parseRelation(message.input.get, 1024), input)
  }

  test("absent fields are proto3 defaults; unknown fields are skipped") {
    val bytes = written(
      out => { out.writeInt64(7, 42L); out.writeString(9, "later"); out.writeFixed32(10, 1) },
      1 -> utf8("version")
    )
    assertEquals(RelationMessage.decode(bytes), RelationMessage("version", "", None))
  }

  test("the Any is unpacked only with sparkwin's type URL") {
    val value = written(_ => (), 1 -> utf8("describe"), 2 -> utf8("{}"))
    val ours = ProtoAny.newBuilder().setTypeUrl(RelationMessage.TypeUrl).setValue(value).build()
    assertEquals(RelationMessage.unpack(ours.toByteArray), Some(RelationMessage("describe", "{}", None)))
    val other = ours.toBuilder.setTypeUrl("type.googleapis.com/delta.connect.DeltaRelation").build()
    assertEquals(RelationMessage.unpack(other.toByteArray), None)
  }

  test("whether the input is a stream travels as a bool, for validate") {
    val bytes = written(out => out.writeBool(4, true), 1 -> utf8("validate"), 2 -> utf8("{}"))
    assertEquals(RelationMessage.decode(bytes), RelationMessage("validate", "{}", None, streaming = true))
    assertEquals(RelationMessage.Validate, "validate")
  }

  test("the type URL, the operations and the field numbers are contract.json's") {
    assertEquals(RelationMessage.TypeUrl, Contract.connectTypeUrl)
    assertEquals(
      Seq("operation", "plan_json", "input", "streaming").map(Contract.connectField),
      Seq(1 -> "string", 2 -> "string", 3 -> "relation", 4 -> "bool")
    )
    intercept[IllegalStateException](Contract.connectOperation("explode"))
  }

  test("bytes that are not protobuf are a PlanException that names the likely cause") {
    val truncated = written(_ => (), 2 -> utf8("{" * 50)).substring(0, 20)
    val e = intercept[PlanException](RelationMessage.decode(truncated))
    assert(e.getMessage.contains("different versions"), e.getMessage)
  }
}
