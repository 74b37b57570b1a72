package sparkwin.runtime.harness

import org.apache.spark.sql.types._

import sparkwin.operator.ElementFate
import sparkwin.plan.Contract

/** The harness says what became of each element as the engine decided it, not by comparing
  * counters: accepted, late, dropped (late, in no window, in a closed window) or error.
  */
class HarnessFateSuite extends munit.FunSuite {
  private val schema = StructType(
    Seq(StructField("user", StringType), StructField("ts", LongType), StructField("gap", LongType))
  )

  private def harness(assigner: String, trigger: String = "null", late: String = "null"): Harness =
    new Harness(
      s"""{"planVersion": 1, "inputSchema": ${schema.json}, "timestamp": "ts", "keys": ["user"],
          "watermark": null, "arrival": null, "channel": null, "channels": null,
          "assigner": $assigner, "trigger": $trigger, "evictor": null, "allowedLatenessMs": 0,
          "lateOutputTag": $late, "accumulationMode": "accumulating", "ansi": true,
          "function": {"kind": "aggregate", "aggregates": [{"fn": "count", "alias": "n"}]}}""",
      1,
      false
    )

  private val tumbling = """{"kind": "tumbling", "sizeMs": 10, "offsetMs": 0, "eventTime": true}"""
  private def row(ts: Any, gap: Any = 5) = s"""{"user": "a", "ts": $ts, "gap": $gap}"""

  test("the fates' names are the contract's") {
    assertEquals(ElementFate.all.map(_.name), Contract.elementFates)
  }

  test("accepted, late to the side output, and without one dropped") {
    val withSide = harness(tumbling, late = "\"late\"")
    assertEquals(withSide.processElement(row(1), 0), "accepted")
    withSide.processWatermark(20, 0)
    assertEquals(withSide.processElement(row(2), 0), "late")
    val without = harness(tumbling)
    without.processWatermark(20, 0)
    assertEquals(without.processElement(row(2), 0), "dropped")
    assertEquals(without.processElement(row(25), 0), "accepted")
  }

  test("an element in no window, and one in a window its trigger closed, are dropped") {
    val gaps =
      harness("""{"kind": "sliding", "sizeMs": 5, "slideMs": 10, "offsetMs": 0, "eventTime": true}""")
    assertEquals(gaps.processElement(row(3), 0), "accepted")
    assertEquals(gaps.processElement(row(7), 0), "dropped")
    // Beam's AfterPane without Repeatedly finishes: the window takes nothing after its pane.
    val once = harness(tumbling, trigger = """{"kind": "afterPane", "count": 1}""")
    assertEquals(once.processElement(row(1), 0), "accepted")
    assertEquals(once.processElement(row(2), 0), "dropped")
  }

  test("a bad timestamp and a bad dynamic gap are errors, as the engine decided") {
    val sessions = harness("""{"kind": "session", "gapColumn": "gap", "eventTime": true}""")
    assertEquals(sessions.processElement(row("null"), 0), "error")
    assertEquals(sessions.processElement(row(1, gap = -1), 0), "error")
    assertEquals(sessions.processElement(row(1), 0), "accepted")
  }
}
