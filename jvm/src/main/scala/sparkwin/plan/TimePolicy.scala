package sparkwin.plan

import sparkwin.operator.OperatorSpec

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

/** How a stream runs on Spark: in micro-batches, or in real-time mode (`trigger(realTime=...)`:
  * one long batch, rows handed over one at a time). Part of a [[TimePolicy]], which every runtime
  * asks; the Python boolean `realTime` becomes one at the gateway ([[RunMode.of]]).
  */
sealed abstract class RunMode(val name: String) extends Serializable
object RunMode {
  case object MicroBatch extends RunMode("microBatch")
  case object RealTime extends RunMode("realTime")

  def of(realTime: Boolean): RunMode = if (realTime) RealTime else MicroBatch
}

/** How Spark wakes a live stream's key group: by its event-time timers (its watermark), by its
  * processing-time timers (real-time mode only), or never (event time is the group's own and
  * processing time comes from sparkwin's clock, or neither is needed).
  */
sealed trait SparkTimers extends Serializable
object SparkTimers {
  case object OnWatermark extends SparkTimers
  case object OnProcessingTime extends SparkTimers
  case object NoTimers extends SparkTimers
}

/** Everything about time a runtime needs for one plan, decided once from it (DESIGN.md, "One
  * owner of time"): the clocks of the engine's timers, where event time comes from, whether a
  * key's rows meet the previous batch's watermark, which bad-record checks apply, and how a live
  * stream wakes. Every runtime asks it; none decides again. It is built once per plan, with the
  * plan ([[Plan.time]], [[Plan.timeIn]]), and speaks no Spark API: the Spark line's shim turns
  * [[sparkTimers]] into Spark's own time mode. It lives with the plan so that the plan, the
  * runtimes and the gateways all reach it without importing a runtime.
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
  *
  * In real-time mode (`realTime`: one long batch, rows handed over one at a time) neither way
  * works: Spark's watermark moves only between batches, and the clock is a micro-batch source,
  * which real-time mode refuses. There a watermarked pipeline's event time is always the key
  * groups' own ([[ownWatermark]]: the map side's summaries, a channel per source partition
  * without `channel=`), and processing time (engine timers, idle deadlines) wakes a group through Spark's
  * processing-time timers, which real-time mode checks after every row a partition receives and
  * at the batch's end (DESIGN.md, "Real-time mode").
  */
final case class TimePolicy(
    domains: TimerDomains,
    channels: Boolean,
    idleness: Boolean,
    inheritsWatermark: Boolean,
    watermarked: Boolean = false,
    mode: RunMode = RunMode.MicroBatch
) {

  /** The stream runs in Spark's real-time mode. */
  def realTime: Boolean = mode == RunMode.RealTime

  def eventTimers: Boolean = domains == TimerDomains.EventOnly || domains == TimerDomains.Both
  def processingTimers: Boolean = domains == TimerDomains.ProcessingOnly || domains == TimerDomains.Both

  /** Event time is the key groups' own channel watermarks, moved by the map side's summaries:
    * with `channel=`, and in real-time mode for every pipeline with a watermark strategy.
    */
  def ownWatermark: Boolean = channels || (realTime && watermarked)

  /** A real-time pipeline without `channel=` reads its watermark per source partition. */
  def partitionChannels: Boolean = ownWatermark && !channels

  /** In micro-batch mode Spark's timers follow its watermark only when the engine's event time
    * is Spark's; in real-time mode they are processing-time timers, wanted whenever something
    * must happen as processing time passes.
    */
  def sparkTimers: SparkTimers =
    if (realTime) {
      if (processingTimers || (ownWatermark && idleness)) SparkTimers.OnProcessingTime
      else SparkTimers.NoTimers
    } else if (eventTimers && !channels) SparkTimers.OnWatermark
    else SparkTimers.NoTimers

  /** A live micro-batch stream reads the clock source: something must happen as processing time
    * passes. Real-time mode never does (Spark's processing-time timers do it there).
    */
  def needsClock: Boolean = !realTime && (processingTimers || (channels && idleness))

  /** A key's rows meet the watermark of the batch before, and the batch's own follows them
    * (channels: the group's valve moves after its rows; a chained pipeline: its upstream's
    * results arrive before the watermark that closed their windows).
    */
  def splitsBatch: Boolean = ownWatermark || inheritsWatermark

  /** A key group keeps the watermark its last call ended at: a chained pipeline's rows meet it,
    * and on Spark's watermark with processing-time timers a key's timers due at a batch's start
    * fire at it, before the batch's watermark moves the key, as the harness and Flink order them.
    */
  def keepsWatermark: Boolean =
    inheritsWatermark || (!ownWatermark && !realTime && processingTimers && eventTimers)

  /** Where a key group's event time comes from, put together in one place: the watermark its
    * keys' rows meet and the one they move to in this call. With [[ownWatermark]], the group's
    * own channel watermarks before and after this call's summaries (`own`, asked only then);
    * else Spark's watermark (`spark`: 0 before any data, the engine's "none yet" is -inf), which
    * a chained pipeline's rows meet only after the watermark its previous call moved to
    * (`previous`, asked only then).
    */
  def groupWatermarks(own: => (Long, Long), spark: Long, previous: => Long): (Long, Long) =
    if (ownWatermark) own
    else {
      val engine = if (spark > 0) spark else Long.MinValue
      if (inheritsWatermark) (math.min(previous, engine), engine) else (engine, engine)
    }

  /** Rows without a channel are bad records (routed to errors) only with `channel=`. */
  def checksChannel: Boolean = channels

  /** Whether a key whose next wake-ups are `eventAt` / `processingAt` is due at these clocks. */
  def isDue(eventAt: Long, processingAt: Long, watermark: Long, processingTime: Long): Boolean =
    (eventTimers && eventAt <= watermark) || (processingTimers && processingAt <= processingTime)

  /** The processing time a group asks the clock for: its keys' earliest processing-time wake-up
    * and, while event-time windows wait on channels that may go idle, the next idle deadline.
    */
  def processingWake(earliestProcessing: Long, waitsOnEventTime: Boolean, idleDeadline: => Long): Long = {
    val timers = if (processingTimers) earliestProcessing else Long.MaxValue
    if (ownWatermark && idleness && waitsOnEventTime) math.min(timers, idleDeadline) else timers
  }

  /** The Spark event-time timer a group wants for its keys' earliest event-time wake-up: strictly
    * after the current watermark (a timer at or before it would fire at the end of this batch
    * in Spark, but at the next advance in the engine's semantics). Long.MinValue: none.
    */
  def sparkTimer(earliestEvent: Long, watermark: Long): Long =
    if (sparkTimers != SparkTimers.OnWatermark || earliestEvent == Long.MaxValue) Long.MinValue
    else math.max(earliestEvent, watermark + 1)

  /** The Spark processing-time timer a group wants in real-time mode for its processing-time
    * wake-up ([[processingWake]]): strictly after `now`, since what is due at `now` this call
    * has done. Long.MinValue: none.
    */
  def sparkProcessingTimer(wake: Long, now: Long): Long =
    if (sparkTimers != SparkTimers.OnProcessingTime || wake == Long.MaxValue) Long.MinValue
    else math.max(wake, now + 1)

  /** The Spark timer a group wants at the end of a call, on whichever clock Spark wakes it by. */
  def sparkTimer(earliestEvent: Long, watermark: Long, processingWake: Long, now: Long): Long =
    sparkTimers match {
      case SparkTimers.OnWatermark => sparkTimer(earliestEvent, watermark)
      case SparkTimers.OnProcessingTime => sparkProcessingTimer(processingWake, now)
      case SparkTimers.NoTimers => Long.MinValue
    }

  /** Spark's name of the time mode the key groups' operator runs in. */
  def sparkTimeMode: String = sparkTimers match {
    case SparkTimers.OnWatermark => "EventTime"
    case SparkTimers.OnProcessingTime => "ProcessingTime"
    case SparkTimers.NoTimers => "None"
  }

}

object TimePolicy {

  /** The policy of `plan` run in `mode`: the plan's own, built once ([[Plan.timeIn]]). */
  def of(plan: Plan, mode: RunMode = RunMode.MicroBatch): TimePolicy = plan.timeIn(mode)

  /** The one place a policy is decided from a plan; [[Plan]] calls it once per mode. */
  private[plan] def decide(plan: Plan, mode: RunMode): TimePolicy = {
    val policy = TimePolicy(
      domains(plan.spec),
      channels = plan.channelColumn.isDefined,
      idleness = plan.watermark.exists(_.idleTimeout.isDefined),
      inheritsWatermark = plan.channelColumn.isEmpty && plan.inheritsWatermark,
      watermarked = plan.watermark.exists(_.sparkDelayMillis.isDefined),
      mode = mode
    )
    if (policy.realTime) PlanRules.refuseInRealTime(plan, policy)
    policy
  }

  /** The policy of an operator run by the engine alone from a spec built by hand (tests and
    * benchmarks without a plan): its timers' clocks, and none of a live stream's concerns.
    */
  def ofSpec(spec: OperatorSpec): TimePolicy =
    TimePolicy(domains(spec), channels = false, idleness = false, inheritsWatermark = false)

  /** The clocks of the engine's timers: the assigner's and, when its trigger decides when
    * windows fire, every trigger's of the tree. Each declares its own (`WindowAssigner.ownClocks`,
    * `Trigger.ownClocks`); no class is asked.
    */
  def domains(spec: OperatorSpec): TimerDomains = {
    val assigner = spec.assigner
    val trigger = spec.trigger
    val clocks = assigner.ownClocks
    TimerDomains.of(
      event = clocks.event || (assigner.runsTrigger && trigger.usesEventTime),
      processing = clocks.processing || (assigner.runsTrigger && trigger.usesProcessingTime)
    )
  }
}
