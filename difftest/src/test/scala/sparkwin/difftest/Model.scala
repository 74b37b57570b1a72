package sparkwin.difftest

/** The vocabulary shared by the three systems under comparison: pipelines, input sequences and
  * what comes out. Nothing here knows sparkwin, Flink or Storm; each runner translates.
  */
final case class Ev(key: String, ts: Long, value: Long) {
  def code: String = s"""Ev("$key", ${Code.long(ts)}, $value)"""
}

/** One input action. A watermark is the valve's output (already monotone). */
sealed trait Step { def code: String }
object Step {
  final case class Element(ev: Ev) extends Step {
    def code: String = s"""El("${ev.key}", ${Code.long(ev.ts)}, ${ev.value})"""
  }
  final case class Watermark(wm: Long) extends Step { def code: String = s"Wm(${Code.long(wm)})" }
  final case class ProcessingTime(t: Long) extends Step { def code: String = s"Pt(${Code.long(t)})" }

  /** Storm: processing time passes one watermark interval (a periodic watermark emission). */
  case object Tick extends Step { def code: String = "Tick" }

  /** Several input channels: a channel's watermark, and its idleness, go through the valve. */
  final case class ChannelWatermark(wm: Long, channel: Int) extends Step {
    def code: String = s"CWm(${Code.long(wm)}, $channel)"
  }
  final case class Idle(channel: Int) extends Step { def code: String = s"Idle($channel)" }
  final case class Active(channel: Int) extends Step { def code: String = s"Active($channel)" }
}

// ----------------------------------------------------------------------------------------------
// Flink-style pipelines

sealed trait Assigner { def code: String }
object Assigner {
  final case class Tumbling(size: Long, offset: Long, eventTime: Boolean) extends Assigner {
    def code = s"Tumbling($size, $offset, $eventTime)"
  }
  final case class Sliding(size: Long, slide: Long, offset: Long, eventTime: Boolean) extends Assigner {
    def code = s"Sliding($size, $slide, $offset, $eventTime)"
  }
  final case class Session(gap: Long) extends Assigner { def code = s"Session($gap)" }

  /** Event-time sessions whose gap is each element's value (`withDynamicGap`). */
  case object DynamicSession extends Assigner { def code = "DynamicSession" }
  case object Global extends Assigner { def code = "Global" }
}

sealed trait TriggerSpec { def code: String }
object TriggerSpec {
  case object EventTime extends TriggerSpec { def code = "EventTimeT" }
  case object ProcessingTime extends TriggerSpec { def code = "ProcessingTimeT" }
  final case class Count(n: Long) extends TriggerSpec { def code = s"CountT($n)" }
  final case class Purging(nested: TriggerSpec) extends TriggerSpec { def code = s"PurgingT(${nested.code})" }
  final case class ContinuousEventTime(interval: Long) extends TriggerSpec {
    def code = s"ContinuousT($interval)"
  }
  final case class ContinuousProcessingTime(interval: Long) extends TriggerSpec {
    def code = s"ContinuousPT($interval)"
  }
  final case class ProcessingTimeout(
      nested: TriggerSpec,
      timeout: Long,
      reset: Boolean,
      clearOnTimeout: Boolean
  ) extends TriggerSpec {
    def code = s"TimeoutT(${nested.code}, $timeout, $reset, $clearOnTimeout)"
  }
}

sealed trait EvictorSpec { def code: String }
object EvictorSpec {
  final case class CountEv(max: Long, after: Boolean) extends EvictorSpec {
    def code = s"CountEv($max, $after)"
  }
  final case class TimeEv(size: Long, after: Boolean) extends EvictorSpec {
    def code = s"TimeEv($size, $after)"
  }
}

/** `keyBy(k).window(assigner).trigger(..).evictor(..).allowedLateness(..)
  * .sideOutputLateData("late").aggregate(count, sum, min, max)`. No trigger: the assigner's own.
  * `countSum`: aggregate only count and sum (sparkwin's local runtime then packs the state of
  * sliced windows and sessions into primitive arrays: another operator). `channels`: input
  * channels whose watermarks meet in a valve (Flink's `StatusWatermarkValve`, sparkwin's own).
  */
final case class Pipeline(
    assigner: Assigner,
    trigger: Option[TriggerSpec] = None,
    evictor: Option[EvictorSpec] = None,
    lateness: Long = 0,
    sideOutput: Boolean = false,
    countSum: Boolean = false,
    channels: Int = 1
) {
  def eventTime: Boolean = assigner match {
    case Assigner.Tumbling(_, _, e) => e
    case Assigner.Sliding(_, _, _, e) => e
    case Assigner.Session(_) | Assigner.DynamicSession => true
    case Assigner.Global => false
  }
  def code: String =
    s"Pipeline(${assigner.code}, ${trigger.map(t => s"Some(${t.code})").getOrElse("None")}, " +
      s"${evictor.map(e => s"Some(${e.code})").getOrElse("None")}, $lateness, $sideOutput, $countSum, $channels)"
}

// ----------------------------------------------------------------------------------------------
// Storm pipelines

sealed trait StormSize { def code: String }
object StormSize {
  final case class Count(n: Int) extends StormSize { def code = s"SCount($n)" }
  final case class Duration(ms: Int) extends StormSize { def code = s"SDuration($ms)" }
}

/** A windowed bolt with a timestamp field (or, `timestamps = false`, Storm's plain count
  * windows), one per key: `withWindow(length, slide).withLag(lag).withWatermarkInterval(..)`.
  */
final case class StormPipeline(length: StormSize, slide: StormSize, lag: Int, lateStream: Boolean) {
  def code: String = s"StormPipeline(${length.code}, ${slide.code}, $lag, $lateStream)"
}

// ----------------------------------------------------------------------------------------------
// Results

/** A fired window's result. `start`/`end` are None for global windows (and `start` for Storm's
  * count windows); min/max/sum are None for an empty pane. Pane fields follow DESIGN.md.
  */
final case class Pane(
    key: String,
    start: Option[Long],
    end: Option[Long],
    count: Long,
    sum: Option[Long],
    min: Option[Long],
    max: Option[Long],
    timing: String,
    index: Long,
    first: Boolean,
    last: Boolean
) {
  def window: (String, Option[Long], Option[Long]) = (key, start, end)
  def values: (Long, Option[Long], Option[Long], Option[Long]) = (count, sum, min, max)
  override def toString: String =
    s"$key[${start.getOrElse("-")},${end.getOrElse("-")}) n=$count sum=${sum.getOrElse("-")} " +
      s"min=${min.getOrElse("-")} max=${max.getOrElse("-")} $timing#$index${if (first) " first" else ""}" +
      s"${if (last) " last" else ""}"
}

object Pane {
  def of(key: String, start: Option[Long], end: Option[Long], vs: Seq[Long]): Pane =
    Pane(
      key,
      start,
      end,
      vs.size.toLong,
      if (vs.isEmpty) None else Some(vs.sum),
      vs.minOption,
      vs.maxOption,
      "ON_TIME",
      0,
      first = true,
      last = true
    )
}

/** What a system did for one step: panes in emission order, and late elements. */
final case class StepOut[P](panes: Vector[P], late: Vector[Ev])

/** Scala source for a value, so a failure prints a sequence that can be pasted into a test. */
object Code {
  def long(v: Long): String =
    if (v == Long.MaxValue) "Long.MaxValue" else if (v == Long.MinValue) "Long.MinValue" else s"${v}L"
  def steps(steps: Seq[Step]): String = steps.map(_.code).mkString("Vector(", ", ", ")")
}
