package sparkwin.core.time

import sparkwin.core.Record

/** Where a generator sends what it decides; the channel wrapper drops non-increasing values. */
trait WatermarkOutput {
  def emitWatermark(watermark: Long): Unit
  def markIdle(): Unit
  def markActive(): Unit
}

/** Decides a channel's watermark from the elements it sees and the passing of time. */
trait WatermarkGenerator {
  def onEvent(record: Record, timestamp: Long, output: WatermarkOutput): Unit
  def onPeriodicEmit(processingTime: Long, output: WatermarkOutput): Unit
}

/** `maxSeenTimestamp - bound - 1`, emitted periodically. Bound 0 gives monotonous timestamps. */
final class BoundedOutOfOrdernessGenerator(bound: Long) extends WatermarkGenerator {
  require(bound >= 0, s"the out-of-orderness bound must not be negative, got $bound")
  private var maxSeen = Long.MinValue + bound + 1

  def onEvent(record: Record, timestamp: Long, output: WatermarkOutput): Unit =
    if (timestamp > maxSeen) maxSeen = timestamp

  def onPeriodicEmit(processingTime: Long, output: WatermarkOutput): Unit =
    output.emitWatermark(maxSeen - bound - 1)

  def currentValue: Long = maxSeen - bound - 1
}

/** Emits `maxSeenTimestamp - bound - 1` on every element whose marker field is true; nothing
  * periodically. The marker element itself is already counted in the maximum.
  */
final class PunctuatedGenerator(markerColumn: Int, bound: Long) extends WatermarkGenerator {
  require(bound >= 0, s"the out-of-orderness bound must not be negative, got $bound")
  private var maxSeen = Long.MinValue + bound + 1

  def onEvent(record: Record, timestamp: Long, output: WatermarkOutput): Unit = {
    if (timestamp > maxSeen) maxSeen = timestamp
    if (!record.isNullAt(markerColumn) && record.get(markerColumn) == true)
      output.emitWatermark(maxSeen - bound - 1)
  }

  def onPeriodicEmit(processingTime: Long, output: WatermarkOutput): Unit = ()
}

/** Storm's lag watermark: `maxSeenTimestamp - lag`, emitted periodically. */
final class LagGenerator(lag: Long) extends WatermarkGenerator {
  require(lag >= 0, s"the lag must not be negative, got $lag")
  private var maxSeen = Long.MinValue + lag

  def onEvent(record: Record, timestamp: Long, output: WatermarkOutput): Unit =
    if (timestamp > maxSeen) maxSeen = timestamp

  def onPeriodicEmit(processingTime: Long, output: WatermarkOutput): Unit =
    output.emitWatermark(maxSeen - lag)
}

/** No watermarks at all (processing-time pipelines, or watermarks fed by hand). */
object NoWatermarksGenerator extends WatermarkGenerator {
  def onEvent(record: Record, timestamp: Long, output: WatermarkOutput): Unit = ()
  def onPeriodicEmit(processingTime: Long, output: WatermarkOutput): Unit = ()
}

/** Wraps a generator: a channel with no element for `timeout` of processing time is idle at
  * the next periodic emission (`now - lastElementTime >= timeout`; before any element, counted
  * from the channel's start). An element makes the channel active again.
  */
final class IdlenessGenerator(inner: WatermarkGenerator, timeout: Long, startTime: Long)
    extends WatermarkGenerator {
  require(timeout > 0, s"the idleness timeout must be positive, got $timeout")
  private var lastActivity = startTime
  private var idle = false
  private var now = startTime

  /** The processing time of the latest element, as the runtime reports it. */
  def setCurrentTime(time: Long): Unit = if (time > now) now = time

  def onEvent(record: Record, timestamp: Long, output: WatermarkOutput): Unit = {
    lastActivity = now
    if (idle) { idle = false; output.markActive() }
    inner.onEvent(record, timestamp, output)
  }

  def onPeriodicEmit(processingTime: Long, output: WatermarkOutput): Unit = {
    setCurrentTime(processingTime)
    if (processingTime - lastActivity >= timeout) {
      if (!idle) { idle = true; output.markIdle() }
    } else inner.onPeriodicEmit(processingTime, output)
  }
}

/** A pipeline's watermark strategy: how each input channel's watermark is generated. */
final case class WatermarkStrategy(
    kind: WatermarkStrategy.Kind,
    idleTimeout: Option[Long],
    interval: Long
) {
  require(interval > 0, s"the watermark interval must be positive, got $interval")

  def newGenerator(startTime: Long): WatermarkGenerator = {
    val base = kind match {
      case WatermarkStrategy.BoundedOutOfOrderness(b) => new BoundedOutOfOrdernessGenerator(b)
      case WatermarkStrategy.Punctuated(col, b) => new PunctuatedGenerator(col, b)
      case WatermarkStrategy.StormLag(lag) => new LagGenerator(lag)
      case WatermarkStrategy.NoWatermarks => NoWatermarksGenerator
    }
    idleTimeout.fold(base)(t => new IdlenessGenerator(base, t, startTime))
  }

  /** Spark's watermark is `max - delay`; ours is `max - bound - 1` (Storm's `max - lag`). */
  def sparkDelayMillis: Option[Long] = kind match {
    case WatermarkStrategy.BoundedOutOfOrderness(b) => Some(b + 1)
    case WatermarkStrategy.Punctuated(_, b) => Some(b + 1)
    case WatermarkStrategy.StormLag(lag) => Some(lag)
    case WatermarkStrategy.NoWatermarks => None
  }
}

object WatermarkStrategy {
  sealed trait Kind
  final case class BoundedOutOfOrderness(bound: Long) extends Kind
  final case class Punctuated(markerColumn: Int, bound: Long) extends Kind
  final case class StormLag(lag: Long) extends Kind
  case object NoWatermarks extends Kind

  val DefaultInterval = 200L

  def forBoundedOutOfOrderness(bound: Long): WatermarkStrategy =
    WatermarkStrategy(BoundedOutOfOrderness(bound), None, DefaultInterval)
  def forMonotonousTimestamps(): WatermarkStrategy = forBoundedOutOfOrderness(0)
  def noWatermarks(): WatermarkStrategy = WatermarkStrategy(NoWatermarks, None, DefaultInterval)
}

/** One input channel of a runtime: its generator, and an output that only lets increasing
  * watermarks through to the valve (a generator emits only when its value grows).
  */
final class WatermarkChannel(
    val index: Int,
    generator: WatermarkGenerator,
    valve: StatusWatermarkValve,
    onValveAdvance: Long => Unit
) extends WatermarkOutput {
  private var lastEmitted = Long.MinValue

  def onEvent(record: Record, ts: Long, processingTime: Long): Unit = {
    generator match {
      case g: IdlenessGenerator => g.setCurrentTime(processingTime)
      case _ =>
    }
    generator.onEvent(record, ts, this)
  }

  def onPeriodicEmit(processingTime: Long): Unit = generator.onPeriodicEmit(processingTime, this)

  def emitWatermark(watermark: Long): Unit =
    if (watermark > lastEmitted) {
      lastEmitted = watermark
      if (valve.isChannelIdle(index)) valve.markActive(index)
      valve.inputWatermark(watermark, index).foreach(onValveAdvance)
    }

  def markIdle(): Unit = valve.markIdle(index).foreach(onValveAdvance)

  def markActive(): Unit = valve.markActive(index)
}
