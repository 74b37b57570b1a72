package sparkwin.runtime

import sparkwin.plan.Plan
import sparkwin.core.window.{GlobalWindows, StormSize, StormWindows}

/** Which clocks the engine's timers run on for a pipeline (its assigner and its triggers). */
sealed trait TimerDomains extends Serializable
object TimerDomains {
  case object EventOnly extends TimerDomains
  case object ProcessingOnly extends TimerDomains
  case object Both extends TimerDomains
  case object Neither extends TimerDomains

  def of(event: Boolean, processing: Boolean): TimerDomains = (event, processing) match {
    case (true, true) => Both
    case (true, false) => EventOnly
    case (false, true) => ProcessingOnly
    case (false, false) => Neither
  }
}

/** How a live stream's key group is woken for event time: by Spark's own event-time timers
  * (its watermark), or never by Spark (event time is the group's own, or there is none).
  */
sealed trait SparkTimers extends Serializable
object SparkTimers {
  case object OnWatermark extends SparkTimers
  case object NoTimers extends SparkTimers
}

/** Everything about time a runtime needs for one plan, decided once from it (DESIGN.md, "One
  * owner of time"): the clocks of the engine's timers, where event time comes from, whether a
  * key's rows meet the previous batch's watermark, which bad-record checks apply, and how a live
  * stream wakes. Every runtime asks it; none decides again.
  *
  * On a live stream there are two ways to be woken, one per clock:
  *   - event time: Spark's event-time timers, one per key group at its earliest engine
  *     event-time timer, when the watermark is Spark's ([[sparkTimers]]); with channels the
  *     group's own watermarks move as summaries arrive, which every data batch brings to every
  *     group;
  *   - processing time (engine processing-time timers, and channels' idle deadlines): the clock
  *     source ([[needsClock]]), which starts a micro-batch only when the earliest reported
  *     wake-up has come. Spark's processing-time timers are never used: Spark runs a batch every
  *     trigger interval forever for a processor in processing-time mode.
  */
final case class TimePolicy(
    domains: TimerDomains,
    channels: Boolean,
    idleness: Boolean,
    inheritsWatermark: Boolean
) {
  def eventTimers: Boolean = domains == TimerDomains.EventOnly || domains == TimerDomains.Both
  def processingTimers: Boolean = domains == TimerDomains.ProcessingOnly || domains == TimerDomains.Both

  /** Spark's timers follow its watermark only when the engine's event time is Spark's. */
  def sparkTimers: SparkTimers =
    if (eventTimers && !channels) SparkTimers.OnWatermark else SparkTimers.NoTimers

  /** A live stream reads the clock source: something must happen as processing time passes. */
  def needsClock: Boolean = processingTimers || (channels && idleness)

  /** A key's rows meet the watermark of the batch before, and the batch's own follows them
    * (channels: the group's valve moves after its rows; a chained pipeline: its upstream's
    * results arrive before the watermark that closed their windows).
    */
  def splitsBatch: Boolean = channels || inheritsWatermark

  /** Rows without a channel are bad records (routed to errors) only with channels. */
  def checksChannel: Boolean = channels

  /** Whether a key whose next wake-ups are `eventAt` / `processingAt` is due at these clocks. */
  def isDue(eventAt: Long, processingAt: Long, watermark: Long, processingTime: Long): Boolean =
    (eventTimers && eventAt <= watermark) || (processingTimers && processingAt <= processingTime)

  /** The processing time a group asks the clock for: its keys' earliest processing-time wake-up
    * and, while event-time windows wait on channels that may go idle, the next idle deadline.
    */
  def processingWake(earliestProcessing: Long, waitsOnEventTime: Boolean, idleDeadline: => Long): Long = {
    val timers = if (processingTimers) earliestProcessing else Long.MaxValue
    if (channels && idleness && waitsOnEventTime) math.min(timers, idleDeadline) else timers
  }

  /** The Spark event-time timer a group wants for its keys' earliest event-time wake-up: strictly
    * after the current watermark (a timer at or before it would fire at the end of this batch
    * in Spark, but at the next advance in the engine's semantics). Long.MinValue: none.
    */
  def sparkTimer(earliestEvent: Long, watermark: Long): Long =
    if (sparkTimers != SparkTimers.OnWatermark || earliestEvent == Long.MaxValue) Long.MinValue
    else math.max(earliestEvent, watermark + 1)
}

object TimePolicy {

  def of(plan: Plan): TimePolicy = TimePolicy(
    domains(plan),
    channels = plan.channelColumn.isDefined,
    idleness = plan.watermark.exists(_.idleTimeout.isDefined),
    inheritsWatermark = plan.channelColumn.isEmpty && plan.inheritsWatermark
  )

  /** The clocks of the engine's timers: the assigner's and every trigger's of the tree (each
    * trigger declares its own, `Trigger.ownClocks`).
    */
  def domains(plan: Plan): TimerDomains = plan.spec.assigner match {
    // Storm in arrival order: processing-time timers for a duration (slide, or a length's
    // expiry); counts fire as tuples arrive.
    case s: StormWindows if !s.isEventTime =>
      val timed = s.slide.isInstanceOf[StormSize.Duration] || s.length.isInstanceOf[StormSize.Duration]
      TimerDomains.of(event = false, processing = timed)
    case assigner =>
      val trigger = plan.spec.trigger
      TimerDomains.of(
        event = assigner.isEventTime || trigger.usesEventTime,
        processing = (!assigner.isEventTime && assigner != GlobalWindows) || trigger.usesProcessingTime
      )
  }
}
