package sparkwin.plan

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.spark.sql.types._

/** The rules on how a plan's pieces combine ([[PlanRules]]): each refuses what it should, names
  * the pieces as JSON pointers, speaks only of pieces the plan so far has, and the decoder asks
  * them of every whole plan.
  */
class PlanRulesSuite extends munit.FunSuite {
  private val mapper = new ObjectMapper()

  private val marked = new MetadataBuilder().putBoolean(Contract.eventTimeMetadata, true).build()
  private val schema = StructType(
    Seq(
      StructField("user", StringType),
      StructField("ts", LongType),
      StructField("price", DoubleType),
      StructField("part", IntegerType),
      StructField("pane_index", LongType)
    )
  )
  // A sparkwin result on a stream: window_time is marked as its event time.
  private val result = StructType(
    Seq(
      StructField("user", StringType),
      StructField("window_start", TimestampType),
      StructField("window_end", TimestampType),
      StructField("window_time", TimestampType, nullable = true, marked),
      StructField("pane_timing", StringType)
    )
  )
  // EARLIEST/LATEST results: window_time is data, not marked.
  private val combined = StructType(result.fields.map(f => f.copy(metadata = Metadata.empty)))

  private val tumbling = """{"kind": "tumbling", "sizeMs": 1000, "offsetMs": 0, "eventTime": true}"""
  private val session = """{"kind": "session", "gapMs": 1000, "eventTime": true}"""
  private val storm =
    """{"kind": "storm", "length": {"count": 3}, "slide": null, "lagMs": 0, "eventTime": true}"""
  private val arrivalStorm =
    """{"kind": "storm", "length": {"count": 3}, "slide": null, "lagMs": 0, "eventTime": false}"""
  private val bounded =
    """{"kind": "boundedOutOfOrderness", "boundMs": 0, "idleTimeoutMs": null, "intervalMs": 200}"""
  private val punctuated = """{"kind": "punctuated", "markerColumn": "m", "boundMs": 0, "intervalMs": 200}"""
  private val count = """{"kind": "count", "count": 3}"""
  private val delta = """{"kind": "delta", "threshold": 1.0, "columns": ["price"]}"""
  private val sum = """{"fn": "sum", "column": "price", "alias": "total"}"""

  /** A whole, acceptable plan, with `changes` (a field set to JSON; "-" removes it). */
  private def plan(changes: (String, String)*): ObjectNode = plan(schema, changes: _*)

  private def plan(input: StructType, changes: (String, String)*): ObjectNode = {
    val node = mapper
      .readTree(s"""{"planVersion": 1, "inputSchema": ${input.json}, "timestamp": "ts", "keys": ["user"],
           "watermark": $bounded, "arrival": null, "channel": null, "channels": null,
           "assigner": $tumbling, "trigger": null, "evictor": null, "allowedLatenessMs": 0,
           "lateOutputTag": null, "accumulationMode": "accumulating", "ansi": true,
           "function": {"kind": "aggregate", "aggregates": [$sum]}}""")
      .asInstanceOf[ObjectNode]
    changes.foreach {
      case (field, "-") => node.remove(field)
      case (field, json) => node.set(field, mapper.readTree(json))
    }
    node
  }

  private def refusal(p: ObjectNode, streaming: Option[Boolean] = Some(false)) = PlanRules.check(p, streaming)

  /** (rule, plan, streaming, words of its message). */
  private val cases: Seq[(String, ObjectNode, Boolean, String)] = Seq(
    (
      "durationsWithinTheSpan",
      plan("allowedLatenessMs" -> s"${Long.MaxValue - 1}"),
      false,
      s"allowedLatenessMs is ${Long.MaxValue - 1} ms; a duration or time of a plan is at most ${Limits.MaxSpanMs} ms"
    ),
    (
      "aggregatesAtMost",
      plan(
        "function" -> s"""{"kind": "aggregate", "aggregates": [${(0 until 10000)
            .map(i => sum.replace("total", s"t$i"))
            .mkString(", ")}]}"""
      ),
      false,
      "aggregate(): 10000 aggregates; a pipeline computes at most 1000"
    ),
    (
      "triggersNestAtMost",
      plan("trigger" -> ((1 to 40).foldLeft(count)((t, _) => s"""{"kind": "repeatedly", "nested": $t}"""))),
      false,
      "trigger: triggers nest more than 32 deep (the one at /trigger" + "/nested" * 32 + " is 33 deep)"
    ),
    (
      "windowsPerElementAtMost",
      plan(
        "assigner" -> """{"kind": "sliding", "sizeMs": 1000001, "slideMs": 1, "offsetMs": 0, "eventTime": false}"""
      ),
      false,
      "window: {/assigner} gives 1000001 windows per element"
    ),
    (
      "declaredChannelsAtMost",
      plan("channel" -> "\"part\"", "channels" -> (0 to 10000).map(i => s""""$i"""").mkString("[", ",", "]")),
      false,
      "channels: 10001 channels declared; at most 10000"
    ),
    (
      "timeInputsNeedATimestamp",
      plan("timestamp" -> "null", "watermark" -> "null", "channel" -> "\"part\""),
      false,
      "channel: a stream without a timestamp"
    ),
    (
      "arrivalIsForReplay",
      plan("arrival" -> "\"part\""),
      true,
      "arrival is for replaying a bounded DataFrame"
    ),
    (
      "combinedTimeIsNotEventTime",
      plan(combined, "timestamp" -> "\"window_time\"", "keys" -> "[]", "watermark" -> "null"),
      true,
      "timestamp: {/timestamp} of results with an EARLIEST or LATEST timestamp combiner"
    ),
    (
      "windowBoundIsNotEventTime",
      plan(result, "timestamp" -> "\"window_end\"", "keys" -> "[]", "watermark" -> "null"),
      true,
      "its event time is 'window_time'"
    ),
    (
      "inheritedTakesNoWatermark",
      plan(result, "timestamp" -> "\"window_time\"", "keys" -> "[]"),
      true,
      "inherits the upstream watermark"
    ),
    (
      "inheritedTakesNoChannel",
      plan(
        result,
        "timestamp" -> "\"window_time\"",
        "keys" -> "[]",
        "watermark" -> "null",
        "channel" -> "\"user\""
      ),
      true,
      "give channel= to the upstream pipeline"
    ),
    (
      "channelsOnAStreamNeedAStrategy",
      plan("channel" -> "\"part\"", "watermark" -> "null"),
      true,
      "channel= on a streaming"
    ),
    (
      "noPunctuatedChannelsOnAStream",
      plan("channel" -> "\"part\"", "watermark" -> punctuated),
      true,
      "punctuated"
    ),
    ("declaredChannelsNeedAChannel", plan("channels" -> "[\"0\"]"), false, "channels: declares the values"),
    (
      "keysAreNotOutputColumns",
      plan("keys" -> "[\"user\", \"pane_index\"]"),
      false,
      "key column {/keys/1} collides"
    ),
    (
      "noTimestampTakesOnlyStormWindows",
      plan("timestamp" -> "null", "watermark" -> "null"),
      false,
      "timestamp: {/assigner} needs an event-time column"
    ),
    (
      "noLagWithoutTimestamp",
      plan(
        "timestamp" -> "null",
        "watermark" -> "null",
        "assigner" -> arrivalStorm.replace("\"lagMs\": 0", "\"lagMs\": 5")
      ),
      false,
      "{/assigner}: a lag is for event time"
    ),
    ("stormWindowsNeedWatermarks", plan("assigner" -> storm, "watermark" -> "null"), false, "noWatermarks()"),
    (
      "eventTimeOnAStreamNeedsAWatermark",
      plan("watermark" -> "null"),
      true,
      "is an event-time assigner and the DataFrame is streaming"
    ),
    ("stormTakesNoTrigger", plan("assigner" -> storm, "trigger" -> count), false, "trigger: Storm windows"),
    (
      "mergingWindowsNeedAMergingTrigger",
      plan("assigner" -> session, "trigger" -> delta),
      false,
      "trigger: {/trigger} cannot merge"
    ),
    (
      "stormTakesNoEvictor",
      plan("assigner" -> storm, "evictor" -> """{"kind": "count", "maxCount": 2, "doEvictAfter": false}"""),
      false,
      "evictor: Storm windows"
    ),
    (
      "stormTakesNoLateness",
      plan("assigner" -> storm, "allowedLatenessMs" -> "10"),
      false,
      "lateness: Storm windows"
    ),
    (
      "combinerNeedsATimestamp",
      plan(
        "timestamp" -> "null",
        "watermark" -> "null",
        "assigner" -> arrivalStorm,
        "function" -> """{"timestampCombiner": "latest"}"""
      ),
      false,
      "no event time to combine"
    ),
    (
      "combinerIsForAggregates",
      plan(
        "function" -> """{"kind": "process", "outputSchema": {"type": "struct", "fields": []}, "timestampCombiner": "earliest"}"""
      ),
      false,
      "withTimestampCombiner is for aggregate()"
    ),
    (
      "resultColumnsAreDistinct",
      plan("function" -> s"""{"kind": "aggregate", "aggregates": [$sum, ${sum.replace("total", "user")}]}"""),
      false,
      "alias {/function/aggregates/1/alias} of {/function/aggregates/1} collides with the key column"
    ),
    (
      "piecesDecode",
      plan(
        "assigner" -> """{"kind": "calendar", "unit": "day", "zone": "Mars/Olympus", "eventTime": true}"""
      ),
      false,
      "CalendarWindows: zone 'Mars/Olympus' is not a time zone"
    )
  )

  test("every rule refuses what it is about, and only that") {
    assertEquals(cases.map(_._1).sorted, PlanRules.names.sorted)
    for ((rule, p, streaming, words) <- cases) {
      val found = refusal(p, Some(streaming))
      assertEquals(found.map(_.rule), Some(rule), p.toString)
      assert(found.get.message.contains(words), found.get.message)
    }
  }

  test("a plan within every limit, each at its limit, is accepted") {
    val at = plan(
      "allowedLatenessMs" -> s"${Limits.MaxSpanMs}",
      "assigner" -> """{"kind": "sliding", "sizeMs": 10000, "slideMs": 1, "offsetMs": 0, "eventTime": true}""",
      "function" -> s"""{"kind": "aggregate", "aggregates": [${(0 until Limits.MaxAggregates)
          .map(i => sum.replace("total", s"t$i"))
          .mkString(", ")}]}"""
    )
    assertEquals(refusal(at), None)
    val e = intercept[PlanException](
      PlanDecoder.decode(s"""{"planVersion": 1, "x": "${"a" * Limits.MaxPlanChars}"}""")
    )
    assert(e.getMessage.contains(s"a plan is at most ${Limits.MaxPlanChars}"), e.getMessage)
  }

  test("a whole plan that follows every rule, on a stream and bounded, is accepted") {
    assertEquals(refusal(plan(), Some(true)), None)
    assertEquals(refusal(plan(), Some(false)), None)
    assertEquals(refusal(plan("assigner" -> session, "trigger" -> count)), None)
  }

  test("a plan so far is judged on the pieces it has: a stream without a window yet") {
    val soFar = plan("timestamp" -> "null", "watermark" -> "null")
    Seq(
      "keys",
      "assigner",
      "trigger",
      "evictor",
      "allowedLatenessMs",
      "lateOutputTag",
      "accumulationMode",
      "ansi",
      "function"
    )
      .foreach(soFar.remove)
    assertEquals(refusal(soFar), None)
    soFar.set("assigner", mapper.readTree(tumbling))
    assertEquals(refusal(soFar).map(_.rule), Some("noTimestampTakesOnlyStormWindows"))
  }

  test("rules about a stream stay silent where nobody said whether the input is one") {
    assertEquals(refusal(plan("watermark" -> "null"), None), None)
    assertEquals(refusal(plan("arrival" -> "\"part\""), None), None)
    assertEquals(refusal(plan("assigner" -> storm, "watermark" -> "null"), None), None)
  }

  test("the innermost trigger that cannot merge is the one named, inside the whole") {
    val nested = s"""{"kind": "repeatedly", "nested": {"kind": "purging", "nested": $delta}}"""
    val found = refusal(plan("assigner" -> session, "trigger" -> nested)).get
    assert(
      found.message.startsWith("trigger: {/trigger/nested/nested} (inside {/trigger}) cannot merge"),
      found.message
    )
    val either =
      s"""{"kind": "afterFirst", "triggers": [$count, {"kind": "processingTimeout", "nested": $count,
      "timeoutMs": 5, "resetTimerOnNewRecord": false, "shouldClearOnTimeout": true}]}"""
    assert(
      refusal(plan("assigner" -> session, "trigger" -> either)).get.message
        .contains("{/trigger/triggers/1} (inside")
    )
    assertEquals(
      refusal(plan("assigner" -> session, "trigger" -> s"""{"kind": "purging", "nested": $count}""")),
      None
    )
  }

  test("the JVM renders the pieces a refusal names as the plan's JSON") {
    val p = plan("assigner" -> session, "trigger" -> delta)
    assert(
      refusal(p).get
        .rendered(p)
        .startsWith("""trigger: {"kind":"delta","threshold":1.0,"columns":["price"]} cannot"""),
      refusal(p).get.rendered(p)
    )
    val keys = plan("keys" -> "[\"pane_index\"]")
    assert(refusal(keys).get.rendered(keys).contains("key column 'pane_index' collides"))
  }

  test("the decoder asks the rules of every whole plan, with what it knows of the input") {
    val broken = plan("assigner" -> storm, "trigger" -> count).toString
    val e = intercept[PlanException](PlanDecoder.decode(broken))
    assert(e.getMessage.startsWith("trigger: Storm windows fire each window once"), e.getMessage)
    val stream = plan("watermark" -> "null").toString
    PlanDecoder.decode(stream) // streaming or not: unknown, so accepted
    val onStream = intercept[PlanException](PlanDecoder.decode(stream, Some(true)))
    assert(onStream.getMessage.contains("""watermark: {"kind":"tumbling""""), onStream.getMessage)
  }

  test("a replay needs a bounded input, event time, arrivals and a strategy") {
    def replay(p: ObjectNode, streaming: Boolean = false) =
      intercept[PlanException](PlanRules.refuseReplay(PlanDecoder.decode(p.toString), streaming)).getMessage
    assert(replay(plan("arrival" -> "\"part\""), streaming = true).contains("needs a bounded DataFrame"))
    assert(replay(plan()).contains("needs the arrival order"))
    assert(
      replay(plan("arrival" -> "\"part\"", "watermark" -> "null")).contains("needs a watermark strategy")
    )
    val arrivalOrder = plan("timestamp" -> "null", "watermark" -> "null", "assigner" -> arrivalStorm)
    assert(replay(arrivalOrder).contains("needs event time"))
    PlanRules.refuseReplay(PlanDecoder.decode(plan("arrival" -> "\"part\"").toString), streaming = false)
  }

  test("the decoder gives Storm windows in event time on a bounded input Storm's lag watermark") {
    val lagged = storm.replace("\"lagMs\": 0", "\"lagMs\": 2000")
    val silent = plan("assigner" -> lagged, "watermark" -> "-")
    val decoded = PlanDecoder.decode(silent.toString, Some(false))
    assertEquals(decoded.watermark.map(_.kind), Some(sparkwin.core.time.WatermarkStrategy.StormLag(2000)))
    assertEquals(decoded.watermark.map(_.interval), Some(PlanDecoder.StormLagIntervalMs))
    assert(decoded.json.contains("\"stormLag\""), decoded.json) // what executors decode again
    assertEquals(PlanDecoder.decode(silent.toString).watermark.isDefined, true) // not a marked ts
    // null is noWatermarks(): refused on a bounded input, not replaced.
    assertEquals(
      refusal(plan("assigner" -> lagged, "watermark" -> "null")).map(_.rule),
      Some("stormWindowsNeedWatermarks")
    )
    // Silent where it may not decide: a stream needs one chosen, a chained one may inherit.
    assertEquals(PlanDecoder.defaultWatermark(silent, Some(true)), None)
    val chained = plan(result, "timestamp" -> "\"window_time\"", "assigner" -> lagged, "watermark" -> "-")
    assertEquals(PlanDecoder.defaultWatermark(chained, None), None)
    assert(PlanDecoder.defaultWatermark(chained, Some(false)).isDefined)
    // Other assigners, and Storm windows in arrival order, get none.
    assertEquals(PlanDecoder.defaultWatermark(plan("watermark" -> "-"), Some(false)), None)
    val arrivalOrder = plan("timestamp" -> "null", "watermark" -> "-", "assigner" -> arrivalStorm)
    assertEquals(PlanDecoder.defaultWatermark(arrivalOrder, Some(false)), None)
    assertEquals(PlanDecoder.decode(plan("watermark" -> "-").toString).watermark, None)
  }
}
