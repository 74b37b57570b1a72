package sparkwin.local

import sparkwin.engine.{Emitter, Operator, OperatorSpec, Record}
import sparkwin.time.{StatusWatermarkValve, WatermarkChannel, WatermarkStrategy}

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
  private val interval = strategy.map(_.interval).getOrElse(Long.MaxValue)
  private var nextTick = startProcessingTime + interval
  operator.setProcessingTime(startProcessingTime)

  def processElement(record: Record, timestamp: Long, channel: Int = 0): Unit = {
    checkChannel(channel)
    backend.setCurrentKey(keyOf(record))
    operator.processElement(record, timestamp)
    if (generators != null) generators(channel).onEvent(record, timestamp, operator.currentProcessingTime)
  }

  def processWatermark(watermark: Long, channel: Int = 0): Unit =
    valve.inputWatermark(watermark, channel).foreach(advance)

  def markIdle(channel: Int): Unit = valve.markIdle(channel).foreach(advance)

  def markActive(channel: Int): Unit = valve.markActive(channel)

  /** Moves processing time to `time`: periodic watermark emissions and processing-time timers
    * happen in time order along the way. Ticks with nothing in between are equivalent to the
    * last of them, so a long jump costs one emission per timer, not one per interval.
    */
  def setProcessingTime(time: Long): Unit = {
    var done = false
    while (!done) {
      val timerAt = backend.processingTimers.peek.map(_.timestamp).filter(_ <= time)
      val limit = timerAt.getOrElse(time)
      if (generators != null && nextTick <= limit) {
        val tick = nextTick + ((limit - nextTick) / interval) * interval
        operator.setProcessingTime(tick)
        generators.foreach(_.onPeriodicEmit(tick))
        nextTick = tick + interval
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
