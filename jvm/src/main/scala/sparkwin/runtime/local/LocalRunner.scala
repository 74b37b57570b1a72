package sparkwin.runtime.local

import sparkwin.operator.{Emitter, Operator, OperatorSpec}
import sparkwin.core.Record
import sparkwin.core.time.{PeriodicTicks, StatusWatermarkValve, WatermarkChannel, WatermarkStrategy}

/** Drives the engine over in-memory input channels with a real watermark valve.
  *
  * Elements arrive on a channel; watermarks either arrive by hand (`processWatermark`) or are
  * generated per channel from the pipeline's strategy (`generateWatermarks`), periodically as
  * processing time passes and per element for punctuated strategies. The valve's output drives
  * the operator's event time. Processing time only moves when the caller moves it.
  */
final class LocalRunner(
    spec: OperatorSpec,
    keyOf: Record => Any,
    channels: Int,
    strategy: Option[WatermarkStrategy],
    output: Emitter,
    startProcessingTime: Long = 0L
) {
  val backend = new LocalBackend
  val operator: Operator = Operator(spec, backend, output)
  val valve = new StatusWatermarkValve(channels)
  private val advance: Long => Unit = wm => operator.advanceWatermark(wm)
  private val generators: Array[WatermarkChannel] = strategy match {
    case Some(s) =>
      Array.tabulate(channels)(i =>
        new WatermarkChannel(i, s.newGenerator(startProcessingTime), valve, advance)
      )
    case None => null
  }
  private val ticks =
    strategy.map(s => new PeriodicTicks(s.interval, startProcessingTime, channels, s.idleTimeout))
  operator.setProcessingTime(startProcessingTime)

  def processElement(record: Record, timestamp: Long, channel: Int = 0): Unit = {
    checkChannel(channel)
    backend.setCurrentKey(keyOf(record))
    operator.processElement(record, timestamp)
    if (generators != null) {
      val now = operator.currentProcessingTime
      generators(channel).onEvent(record, timestamp, now)
      ticks.foreach(_.onElement(channel, now))
    }
  }

  def processWatermark(watermark: Long, channel: Int = 0): Unit =
    valve.inputWatermark(watermark, channel).foreach(advance)

  def markIdle(channel: Int): Unit = valve.markIdle(channel).foreach(advance)

  def markActive(channel: Int): Unit = valve.markActive(channel)

  /** Moves processing time to `time`: periodic watermark emissions (at the ticks where they
    * can change something, see [[PeriodicTicks]]) and processing-time timers happen in time
    * order along the way; a tick and a timer at the same instant: the tick first.
    */
  def setProcessingTime(time: Long): Unit = {
    var done = false
    while (!done) {
      val timerAt = backend.processingTimers.peek.map(_.timestamp).filter(_ <= time)
      val tick = ticks.map(_.next(timerAt.getOrElse(time))).getOrElse(Long.MaxValue)
      if (tick != Long.MaxValue) {
        operator.setProcessingTime(tick)
        generators.foreach(_.onPeriodicEmit(tick))
        ticks.foreach(_.visited(tick))
      } else if (timerAt.isDefined) operator.advanceProcessingTime(timerAt.get)
      else done = true
    }
    operator.advanceProcessingTime(time)
  }

  /** End of a bounded input: the watermark jumps to +infinity and every window fires. */
  def endOfInput(): Unit = operator.advanceWatermark(Long.MaxValue)

  def currentWatermark: Long = valve.currentWatermark

  def currentProcessingTime: Long = operator.currentProcessingTime

  def numStateEntries: Int = backend.numStateEntries

  private def checkChannel(channel: Int): Unit =
    if (channel < 0 || channel >= channels)
      throw new IllegalArgumentException(s"channel must be in [0, $channels), got $channel")
}
