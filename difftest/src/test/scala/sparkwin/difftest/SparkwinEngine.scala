package sparkwin.difftest

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** The one place that touches sparkwin: its test harness (`sparkwin.runtime.harness.Harness`,
  * the engine behind `sparkwin.testing.WindowHarness`), driven with a JSON plan (docs/plan.md)
  * and JSON rows. Everything else in the differential tests speaks the neutral model, so the
  * engine's packages can move without touching them.
  *
  * Input rows are `{k: string, ts: long, v: long}`; the pipeline aggregates
  * `count(*), sum(v), min(v), max(v)`.
  */
final class SparkwinEngine private (planJson: String, generateWatermarks: Boolean, channels: Int) {
  import SparkwinEngine._

  private val harness = new sparkwin.runtime.harness.Harness(planJson, channels, generateWatermarks)
  private val hasLate = planJson.contains("\"lateOutputTag\":\"late\"")

  def element(e: Ev): Unit =
    harness.processElement(s"""{"k":${quote(e.key)},"ts":${e.ts},"v":${e.value}}""", 0)
  def watermark(wm: Long, channel: Int = 0): Unit = harness.processWatermark(wm, channel)
  def markIdle(channel: Int): Unit = harness.markIdle(channel)
  def markActive(channel: Int): Unit = harness.markActive(channel)
  def processingTime(t: Long): Unit = harness.setProcessingTime(t)
  def endOfInput(): Unit = harness.endOfInput()
  def currentWatermark: Long = harness.currentWatermark()
  def numStateEntries: Int = harness.numStateEntries()

  def metrics: Map[String, Long] =
    mapper.readTree(harness.metrics()).properties().asScala.map(e => e.getKey -> e.getValue.asLong).toMap

  /** Panes and late elements since the last call. */
  def drain(): StepOut[Pane] = {
    val panes = mapper.readTree(harness.extractOutput()).elements().asScala.map(pane).toVector
    val late =
      if (!hasLate) Vector.empty
      else mapper.readTree(harness.extractSideOutput("late")).elements().asScala.map(row).toVector
    val errors = mapper.readTree(harness.extractSideOutput("errors"))
    require(errors.isEmpty, s"sparkwin reported errors: $errors")
    StepOut(panes, late)
  }
}

object SparkwinEngine {
  private val mapper = new ObjectMapper()

  def flink(p: Pipeline): SparkwinEngine = new SparkwinEngine(plan(p), generateWatermarks = false, p.channels)

  /** Storm's windows with its lag watermark, generated every `interval` of processing time. */
  def storm(p: StormPipeline, interval: Long): SparkwinEngine =
    new SparkwinEngine(stormPlan(p, interval), generateWatermarks = true, 1)

  /** Storm's windows without a timestamp field: arrival order, no watermark. */
  def stormArrival(p: StormPipeline): SparkwinEngine = {
    val assigner = s"""{"kind":"storm","length":${stormSize(p.length)},"slide":${stormSize(p.slide)},""" +
      s""""lagMs":0,"eventTime":false}"""
    val plan = planOf("null", assigner, "null", "null", 0, late = false, countSum = false, timestamp = "null")
    new SparkwinEngine(plan, generateWatermarks = false, 1)
  }

  private def quote(s: String): String = mapper.writeValueAsString(s)

  private def opt(n: JsonNode): Option[Long] = if (n == null || n.isNull) None else Some(n.asLong)

  private def pane(n: JsonNode): Pane =
    Pane(
      n.get("k").asText,
      opt(n.get("window_start")),
      opt(n.get("window_end")),
      n.get("cnt").asLong,
      opt(n.get("sum_v")),
      opt(n.get("min_v")),
      opt(n.get("max_v")),
      n.get("pane_timing").asText,
      n.get("pane_index").asLong,
      n.get("pane_is_first").asBoolean,
      n.get("pane_is_last").asBoolean
    )

  private def row(n: JsonNode): Ev = Ev(n.get("k").asText, n.get("ts").asLong, n.get("v").asLong)

  private val schema =
    """{"type":"struct","fields":[""" +
      Seq("k" -> "string", "ts" -> "long", "v" -> "long")
        .map { case (n, t) => s"""{"name":"$n","type":"$t","nullable":true,"metadata":{}}""" }
        .mkString(",") + "]}"

  private def aggregates(countSum: Boolean): String =
    """{"kind":"aggregate","aggregates":[{"fn":"count","column":null,"alias":"cnt"},""" +
      """{"fn":"sum","column":"v","alias":"sum_v"}""" +
      (if (countSum) ""
       else """,{"fn":"min","column":"v","alias":"min_v"},{"fn":"max","column":"v","alias":"max_v"}""") +
      "]}"

  private def assigner(a: Assigner): String = a match {
    case Assigner.Tumbling(size, offset, et) =>
      s"""{"kind":"tumbling","sizeMs":$size,"offsetMs":$offset,"eventTime":$et}"""
    case Assigner.Sliding(size, slide, offset, et) =>
      s"""{"kind":"sliding","sizeMs":$size,"slideMs":$slide,"offsetMs":$offset,"eventTime":$et}"""
    case Assigner.Session(gap) => s"""{"kind":"session","gapMs":$gap,"gapColumn":null,"eventTime":true}"""
    case Assigner.DynamicSession => """{"kind":"session","gapMs":null,"gapColumn":"v","eventTime":true}"""
    case Assigner.Global => """{"kind":"global"}"""
  }

  private def trigger(t: TriggerSpec): String = t match {
    case TriggerSpec.EventTime => """{"kind":"eventTime"}"""
    case TriggerSpec.ProcessingTime => """{"kind":"processingTime"}"""
    case TriggerSpec.Count(n) => s"""{"kind":"count","count":$n}"""
    case TriggerSpec.Purging(nested) => s"""{"kind":"purging","nested":${trigger(nested)}}"""
    case TriggerSpec.ContinuousEventTime(i) => s"""{"kind":"continuousEventTime","intervalMs":$i}"""
    case TriggerSpec.ContinuousProcessingTime(i) => s"""{"kind":"continuousProcessingTime","intervalMs":$i}"""
    case TriggerSpec.ProcessingTimeout(nested, timeout, reset, clear) =>
      s"""{"kind":"processingTimeout","nested":${trigger(nested)},"timeoutMs":$timeout,""" +
        s""""resetTimerOnNewRecord":$reset,"shouldClearOnTimeout":$clear}"""
  }

  private def evictor(e: EvictorSpec): String = e match {
    case EvictorSpec.CountEv(max, after) => s"""{"kind":"count","maxCount":$max,"doEvictAfter":$after}"""
    case EvictorSpec.TimeEv(size, after) => s"""{"kind":"time","windowSizeMs":$size,"doEvictAfter":$after}"""
  }

  private def planOf(
      watermark: String,
      assignerJson: String,
      triggerJson: String,
      evictorJson: String,
      lateness: Long,
      late: Boolean,
      countSum: Boolean,
      timestamp: String = "\"ts\""
  ): String =
    s"""{"planVersion":1,"inputSchema":$schema,"timestamp":$timestamp,"keys":["k"],""" +
      s""""watermark":$watermark,"arrival":null,"channel":null,"assigner":$assignerJson,""" +
      s""""trigger":$triggerJson,"evictor":$evictorJson,"allowedLatenessMs":$lateness,""" +
      s""""lateOutputTag":${if (late) "\"late\"" else "null"},"accumulationMode":"accumulating",""" +
      s""""function":${aggregates(countSum)}}"""

  def plan(p: Pipeline): String =
    planOf(
      "null",
      assigner(p.assigner),
      p.trigger.map(trigger).getOrElse("null"),
      p.evictor.map(evictor).getOrElse("null"),
      p.lateness,
      p.sideOutput,
      p.countSum
    )

  private def stormSize(s: StormSize): String = s match {
    case StormSize.Count(n) => s"""{"count":$n}"""
    case StormSize.Duration(ms) => s"""{"durationMs":$ms}"""
  }

  def stormPlan(p: StormPipeline, interval: Long): String =
    planOf(
      s"""{"kind":"stormLag","lagMs":${p.lag},"idleTimeoutMs":null,"intervalMs":$interval}""",
      s"""{"kind":"storm","length":${stormSize(p.length)},"slide":${stormSize(p.slide)},"lagMs":${p.lag}}""",
      "null",
      "null",
      0,
      p.lateStream,
      countSum = false
    )
}
