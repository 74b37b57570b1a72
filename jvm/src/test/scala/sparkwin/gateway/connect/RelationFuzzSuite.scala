package sparkwin.gateway.connect

import java.io.ByteArrayOutputStream

import org.apache.spark.connect.proto.{Project, Range, Relation}
import org.scalacheck.Gen
import org.sparkproject.connect.protobuf.{Any => ProtoAny, ByteString, CodedOutputStream}

import sparkwin.Fuzz
import sparkwin.gateway.PythonEntryPoint
import sparkwin.plan.{Limits, PlanException}

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

  /** An input relation of `depth` projections, each two messages deep (the limit the plugin
    * reads with, 1,024, is about 512 of them).
    */
  private def projections(depth: Int): Relation =
    (1 to depth).foldLeft(input)((r, _) =>
      Relation.newBuilder().setProject(Project.newBuilder().setInput(r)).build()
    )

  private def message(
      operation: String,
      withInput: Boolean,
      streaming: Boolean,
      planJson: String = plan,
      relation: Relation = input
  ): Array[Byte] = {
    val inner = new ByteArrayOutputStream()
    val out = CodedOutputStream.newInstance(inner)
    out.writeString(1, operation)
    out.writeString(2, planJson)
    if (withInput) out.writeBytes(3, relation.toByteString)
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

  private def nested(depth: Int) =
    plan.replaceFirst("\"keys\":", "\"extra\": " + "[" * depth + "]" * depth + ", \"keys\":")

  /** Messages at the limits: an input relation nested about as deep as the plugin reads, plans
    * nested about as deep as a plan may be, a plan with more after it.
    */
  private val atTheLimits = Seq(
    message("windowed", withInput = true, streaming = false, relation = projections(508)),
    message("windowed", withInput = true, streaming = false, relation = projections(520)),
    message("validate", withInput = false, streaming = true, planJson = nested(Limits.MaxPlanNesting - 2)),
    message("describe", withInput = false, streaming = false, planJson = nested(Limits.MaxPlanNesting)),
    message("validate", withInput = false, streaming = false, planJson = nested(900)),
    message("describe", withInput = false, streaming = false, planJson = plan + " " + plan)
  )

  test("fuzz the Connect relation: a mutated message is read, or refused with a PlanException") {
    // Spark's schema reader initialises its classes at its first plan, and its error messages
    // at its first refusal (2.5 s on a loaded machine): not an input's time to answer, and a class
    // whose initialiser the time limit interrupts stays broken.
    PythonEntryPoint.describe(plan, false)
    PythonEntryPoint.validate(plan, true)
    PythonEntryPoint.validate(plan.replace("nullable", "nqllable"), false)
    Fuzz.bytes(
      "Connect relation",
      Fuzz.cases(2000),
      Gen.frequency(
        7 -> Fuzz.mutatedBytes(valid),
        1 -> Gen.oneOf(atTheLimits),
        1 -> Fuzz.mutatedBytes(atTheLimits),
        1 -> Fuzz.randomBytes
      ),
      (length: Int) => (64L << 20) + 4096L * length
    )(e => e.isInstanceOf[PlanException] && e.getCause == null) { b =>
      RelationMessage.unpack(b).foreach { m =>
        m.input.foreach(RelationMessage.parseRelation(_, 1024))
        if (m.operation == RelationMessage.Validate) PythonEntryPoint.validate(m.planJson, m.streaming)
        if (m.operation == RelationMessage.Describe) PythonEntryPoint.describe(m.planJson, false)
      }
    }
  }
}
