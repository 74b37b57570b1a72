package sparkwin.core.time

import sparkwin.core.Record

/** The watermark of a stream read element by element from several input channels, as Flink's
  * source reader makes it: a generator per channel ([[WatermarkChannel]]), periodic emission at
  * the ticks that can change anything ([[PeriodicTicks]]), idleness, and the valve over them
  * ([[StatusWatermarkValve]]), whose every advance goes to `onAdvance`. Without a strategy the
  * channels' watermarks come from outside ([[inputWatermark]]) and there are no ticks.
  *
  * The live driver (and so the harness and the local runner) and replay's watermark pass
  * (`WatermarkTimeline`) run this one; a stream read in batches (Spark's key groups) keeps its
  * channels in [[ChannelWatermarks]], over the same valve.
  */
final class SourceWatermarks(
    strategy: Option[WatermarkStrategy],
    channels: Int,
    start: Long,
    onAdvance: Long => Unit
) {
  require(channels >= 0, s"a stream cannot have $channels channels")

  val valve = new StatusWatermarkValve(channels)
  private val generators: Array[WatermarkChannel] = strategy match {
    case Some(s) =>
      Array.tabulate(channels)(i => new WatermarkChannel(i, s.newGenerator(start), valve, onAdvance))
    case None => null
  }
  private val ticks: PeriodicTicks =
    strategy.map(s => new PeriodicTicks(s.interval, start, channels, s.idleTimeout)).orNull

  /** Whether the channels' watermarks are generated here (a strategy), not given from outside. */
  def generates: Boolean = generators != null

  /** An element of event time `ts` arrived on `channel` at processing time `now`. */
  def onElement(channel: Int, record: Record, ts: Long, now: Long): Unit =
    if (generators != null) {
      generators(channel).onEvent(record, ts, now)
      ticks.onElement(channel, now)
    }

  /** The next periodic tick at or before `limit` that can change anything (Long.MaxValue: none). */
  def nextTick(limit: Long): Long = if (ticks == null) Long.MaxValue else ticks.next(limit)

  /** The tick at `time` ([[nextTick]]'s): every generator emits. */
  def tick(time: Long): Unit = {
    generators.foreach(_.onPeriodicEmit(time))
    ticks.visited(time)
  }

  /** A watermark from outside for `channel`. */
  def inputWatermark(watermark: Long, channel: Int): Unit =
    valve.inputWatermark(watermark, channel).foreach(onAdvance)

  /** Channel `channel` went idle; the valve may then release a watermark. */
  def markIdle(channel: Int): Unit = valve.markIdle(channel).foreach(onAdvance)

  /** Channel `channel` is active again: the valve waits for it; nothing moves. */
  def markActive(channel: Int): Unit = valve.markActive(channel)

  /** The valve's last output (Long.MinValue before the first). */
  def current: Long = valve.currentWatermark
}
