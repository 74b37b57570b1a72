package sparkwin.runtime

import sparkwin.core.{Record, RecordError, Values}
import sparkwin.core.agg.Accumulator
import sparkwin.core.time.{SourceWatermarks, WatermarkStrategy}
import sparkwin.operator.{ClockMove, ElementFate, Emitter, Operator, OperatorSpec}
import sparkwin.operator.algorithms.Algorithms
import sparkwin.operator.store.KeyedBackend
import sparkwin.plan.TimePolicy

/** The one loop that feeds an operator: every runtime (Spark streaming, batch, replay, the local
  * runner and the harness) drives its operator through a driver.
  *
  * Elements come in as records: the driver finds the key, reads the timestamp and turns a record
  * the engine cannot take (a null timestamp, a bad dynamic gap) into an error row instead of
  * failing. Time moves through one door, [[moveClocks]] (a [[TimeMove]]): watermarks come in per
  * input channel and meet in a valve ([[StatusWatermarkValve]]), or are generated per channel
  * from the pipeline's strategy, periodically as processing time passes and per element for
  * punctuated strategies ([[SourceWatermarks]], which replay's watermark pass runs too).
  * Processing time moves when the runtime moves it, firing periodic emissions and
  * processing-time timers in time order. A channel's idle or active status ([[markIdle]],
  * [[markActive]]) is not a clock: it is the valve's input, as Flink's watermark
  * status is an element of its own beside watermarks; the valve decides whether event time then
  * moves, and such a move enters the operator as every other.
  *
  * @param keyOf the pipeline's key of a record (`plan.Keys`: one constant for windowAll)
  * @param timestampColumn the event-time column, for [[processRecord]] (negative: none, and an
  *   element's time is the processing time it arrives at)
  * @param policy the plan's decisions about time ([[sparkwin.plan.Plan.time]]); null for an
  *   operator run from a spec alone, which gets the spec's ([[TimePolicy.ofSpec]])
  */
class Driver(
    val spec: OperatorSpec,
    keyOf: Record => Any,
    timestampColumn: Int,
    val backend: KeyedBackend,
    output: Emitter,
    channels: Int = 1,
    strategy: Option[WatermarkStrategy] = None,
    startProcessingTime: Long = 0L,
    policy: TimePolicy = null
) {
  require(channels > 0, s"a driver needs at least one channel, got $channels")

  /** The plan's policy, or (`policy` null) the spec's: what the driver asks about time. */
  val timePolicy: TimePolicy = if (policy != null) policy else TimePolicy.ofSpec(spec)

  val operator: Operator = Algorithms.operator(spec, backend, output)
  private val advance: Long => Unit = wm => operator.moveClocks(wm, ClockMove.Keep, ClockMove.Advance)
  private val watermarks = new SourceWatermarks(strategy, channels, startProcessingTime, advance)
  val valve = watermarks.valve
  operator.moveClocks(ClockMove.Keep, startProcessingTime, ClockMove.Set)

  // ---------------------------------------------------------------------------------------
  // Elements

  /** A record as it arrived on `channel`: its timestamp read from the event-time column.
    * Returns what became of it.
    */
  final def processRecord(record: Record, channel: Int = 0, channelMissing: Boolean = false): ElementFate = {
    val ts = timestampOf(record, channelMissing)
    if (ts != null) processElement(record, ts.longValue, channel) else ElementFate.Error
  }

  /** The record's event time, or null after routing the record to the error output with the
    * reason [[BadRecords]] gives (`channelMissing`: the runtime found its channel null).
    */
  final def timestampOf(record: Record, channelMissing: Boolean = false): java.lang.Long = {
    val why = BadRecords.reason(record, timestampColumn, arrivalMissing = false, channelMissing)
    if (why != null) { output.emitError(record, why); null }
    else if (timestampColumn < 0) java.lang.Long.valueOf(operator.currentProcessingTime) // no event time
    else java.lang.Long.valueOf(Values.toMillis(record.get(timestampColumn)))
  }

  /** An element with its event time, on `channel`; what became of it. */
  def processElement(record: Record, timestamp: Long, channel: Int = 0): ElementFate = {
    checkChannel(channel)
    select(keyOf(record))
    val fate =
      try operator.processElement(record, timestamp)
      catch { case e: RecordError => output.emitError(record, e.getMessage); ElementFate.Error }
    // Without a strategy the channels' watermarks come from outside: nothing to do per element.
    if (watermarks.generates) watermarks.onElement(channel, record, timestamp, operator.currentProcessingTime)
    fate
  }

  /** `count` elements of `key` pre-aggregated into `partial` (see `Selection.combinable`). */
  final def processPartial(key: Any, timestamp: Long, partial: Array[Accumulator], count: Long): Unit = {
    select(key)
    operator.processPartial(timestamp, partial, count)
  }

  /** Makes `key` current in the backend (a no-op where the runtime loaded the key itself). */
  protected def select(key: Any): Unit = ()

  // ---------------------------------------------------------------------------------------
  // Time

  /** The one door for time: every move of every runtime ([[TimeMove]]), each turned into moves
    * of the operator's own door ([[Operator.moveClocks]]).
    */
  final def moveClocks(move: TimeMove): Unit = move match {
    case TimeMove.Watermark(watermark, channel) => watermarks.inputWatermark(watermark, channel)
    case TimeMove.ProcessingTime(to) => passProcessingTime(to)
    case TimeMove.EnterKey(now, watermark, settled) => enterKey(now, watermark, settled)
    case TimeMove.EndOfInput => operator.moveClocks(Long.MaxValue, ClockMove.Keep, ClockMove.Advance)
    case TimeMove.Clocks(watermark, processingTime, how) =>
      operator.moveClocks(watermark, processingTime, how)
  }

  /** Channel `channel` went idle; the valve may then release a watermark (DESIGN.md, the valve). */
  final def markIdle(channel: Int): Unit = watermarks.markIdle(channel)

  /** Channel `channel` is active again: the valve waits for it; no clock moves. */
  final def markActive(channel: Int): Unit = watermarks.markActive(channel)

  /** Periodic watermark emissions (at the ticks where they can change something, see
    * [[PeriodicTicks]]) and processing-time timers happen in time order on the way to `to`; a tick
    * and a timer at the same instant: the tick first.
    */
  private def passProcessingTime(to: Long): Unit = {
    var done = false
    while (!done) {
      // None at Long.MaxValue: "no timer"; one due then still fires with the final advance.
      val next = if (timePolicy.processingTimers) operator.nextProcessingTimer else Long.MaxValue
      val timerAt = if (next <= to && next != Long.MaxValue) Some(next) else None
      val tick = watermarks.nextTick(timerAt.getOrElse(to))
      if (tick != Long.MaxValue) {
        operator.moveClocks(ClockMove.Keep, tick, ClockMove.Set)
        watermarks.tick(tick)
      } else if (timerAt.isDefined) operator.moveClocks(ClockMove.Keep, timerAt.get, ClockMove.Advance)
      else done = true
    }
    operator.moveClocks(ClockMove.Keep, to, ClockMove.Advance)
  }

  /** The current key (loaded by a micro-batch runtime) meets this batch's clocks, as the policy
    * says: due timers fire before its new elements, as when a watermark precedes the elements
    * that follow it (once per key and micro-batch). When the batch splits (channels, chained
    * pipelines) the key starts from `watermark`, the one its rows meet, without firing what it
    * already fired; the runtime moves it on after the rows. Otherwise its processing-time timers
    * fire at `settled` when known: the engine's clock is one for all keys of a task, and a key
    * loaded after another of the same batch would find the batch's watermark there already.
    */
  private def enterKey(now: Long, watermark: Long, settled: Long): Unit = {
    if (timePolicy.splitsBatch) operator.moveClocks(watermark, now, ClockMove.Restore)
    else if (settled != TimeMove.Unsettled) operator.moveClocks(settled, now, ClockMove.Restore)
    else operator.moveClocks(ClockMove.Keep, now, ClockMove.Set)
    if (timePolicy.processingTimers) operator.moveClocks(ClockMove.Keep, now, ClockMove.Advance)
    // A watermark of Long.MinValue (none yet) is ClockMove.Keep: nothing moves.
    if (!timePolicy.splitsBatch) operator.moveClocks(watermark, ClockMove.Keep, ClockMove.Advance)
  }

  // ---------------------------------------------------------------------------------------

  /** The watermark the inputs' channels give (the valve's); the operator's own clock
    * (`operator.currentWatermark`) is ahead of it after a direct move (the end of input).
    */
  final def inputWatermark: Long = watermarks.current
  final def currentProcessingTime: Long = operator.currentProcessingTime
  final def metrics = operator.metrics

  private def checkChannel(channel: Int): Unit =
    if (channel < 0 || channel >= channels)
      throw new IllegalArgumentException(s"channel must be in [0, $channels), got $channel")
}
