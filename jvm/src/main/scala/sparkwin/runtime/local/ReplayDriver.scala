package sparkwin.runtime.local

import scala.collection.mutable.ArrayBuffer

import sparkwin.runtime.TimeMove
import sparkwin.core.{ArrayRecord, Record}
import sparkwin.operator.ClockMove
import sparkwin.core.time.{SourceWatermarks, WatermarkStrategy}

/** Where something happens in a replayed stream. At one arrival time, periodic watermark ticks
  * come first, then processing-time timers, then the elements that arrive then (in channel,
  * then input order): exactly the order a live runner (and the harness) takes them in.
  */
final case class Position(time: Long, phase: Int, channel: Int, ordinal: Long) extends Ordered[Position] {
  def compare(o: Position): Int = {
    var c = java.lang.Long.compare(time, o.time)
    if (c == 0) c = Integer.compare(phase, o.phase)
    if (c == 0) c = Integer.compare(channel, o.channel)
    if (c == 0) c = java.lang.Long.compare(ordinal, o.ordinal)
    c
  }
}

object Position {
  val Tick = 0
  val ProcessingTimer = 1
  val Element = 2
  def tick(time: Long): Position = Position(time, Tick, -1, -1L)
  def timer(time: Long): Position = Position(time, ProcessingTimer, -1, -1L)
  def element(arrival: Long, channel: Int, ordinal: Long): Position =
    Position(arrival, Element, channel, ordinal)
  val End: Position = Position(Long.MaxValue, Int.MaxValue, Int.MaxValue, Long.MaxValue)
}

/** What the watermark pass needs of a channel's elements: one entry per element that can
  * change the channel's generator (a marker for punctuated strategies) or per run of elements
  * between two periodic ticks: its first position, the last arrival in it (the time the
  * generator sees) and the largest event time.
  */
final case class ChannelActivity(first: Position, lastArrival: Long, maxTimestamp: Long, marker: Boolean)

/** The elements of one channel between two periodic ticks, summarised for the watermark pass:
  * the run itself, and for punctuated strategies each marker with the largest event time seen
  * in the run up to and including it.
  */
final case class BucketSummary(
    channel: Int,
    bucket: Long,
    first: Position,
    lastArrival: Long,
    maxTimestamp: Long,
    markers: Seq[(Position, Long, Long)] // position, arrival, running max within the bucket
)

object Activity {

  /** The tick interval an arrival falls in: ticks at multiples of `interval` see only
    * elements that arrived strictly before them.
    */
  def bucket(arrival: Long, interval: Long): Long = java.lang.Math.floorDiv(arrival, interval)

  /** Summarises one channel's elements of one bucket (any order). */
  def summarize(channel: Int, bucket: Long, elements: Iterator[(Position, Long, Boolean)]): BucketSummary = {
    val sorted = elements.toArray.sortBy(_._1)
    var max = Long.MinValue
    val markers = ArrayBuffer.empty[(Position, Long, Long)]
    for ((pos, ts, marker) <- sorted) {
      if (ts > max) max = ts
      if (marker) markers += ((pos, pos.time, max))
    }
    BucketSummary(channel, bucket, sorted.head._1, sorted.last._1.time, max, markers.toSeq)
  }

  /** The activity list of the watermark pass: markers carry the running maximum over all
    * earlier buckets of their channel too.
    */
  def merge(summaries: Seq[BucketSummary], punctuated: Boolean): Seq[(Int, ChannelActivity)] = {
    val out = ArrayBuffer.empty[(Int, ChannelActivity)]
    for ((channel, buckets) <- summaries.groupBy(_.channel)) {
      var before = Long.MinValue
      for (b <- buckets.sortBy(_.bucket)) {
        out += ((channel, ChannelActivity(b.first, b.lastArrival, b.maxTimestamp, marker = false)))
        if (punctuated)
          for ((pos, arrival, runningMax) <- b.markers)
            out += ((channel, ChannelActivity(pos, arrival, math.max(before, runningMax), marker = true)))
        before = math.max(before, b.maxTimestamp)
      }
    }
    out.toSeq
  }
}

/** The valve's output over a replayed input: watermark `watermarks(i)` holds from
  * `positions(i)` on. Both arrays ascend.
  */
final class WatermarkTimeline(val positions: Array[Position], val watermarks: Array[Long])
    extends Serializable {
  def size: Int = positions.length

  /** The first entry at or after `from` whose watermark reaches `ts`, or -1. */
  def firstReaching(ts: Long, from: Int): Int = {
    var lo = from
    var hi = watermarks.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (watermarks(mid) >= ts) hi = mid else lo = mid + 1
    }
    if (lo < watermarks.length) lo else -1
  }

  /** The number of entries strictly before `p`. */
  def countBefore(p: Position): Int = {
    var lo = 0
    var hi = positions.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (positions(mid) < p) lo = mid + 1 else hi = mid
    }
    lo
  }
}

object WatermarkTimeline {

  /** The first pass: the stream's watermarks ([[SourceWatermarks]], as the live driver's), run
    * over the channels' activity in position order, with periodic ticks every `strategy.interval` of arrival time counted
    * from `start` (only ticks where something can change are visited: the first after new
    * elements, and idleness deadlines; between them every tick would emit the same values).
    */
  def compute(
      strategy: WatermarkStrategy,
      channels: Int,
      activity: Seq[(Int, ChannelActivity)],
      start: Long
  ): WatermarkTimeline = {
    val positions = ArrayBuffer.empty[Position]
    val marks = ArrayBuffer.empty[Long]
    var at: Position = Position.tick(start)
    // What a punctuated generator reads from an element: the marker flag, at its column.
    val markerColumn = strategy.kind match {
      case WatermarkStrategy.Punctuated(col, _) => col
      case _ => 0
    }
    val record = (marker: Boolean) => {
      val values = new Array[Any](markerColumn + 1)
      values(markerColumn) = marker
      new ArrayRecord(values): Record
    }
    val onAdvance: Long => Unit = wm => {
      if (positions.nonEmpty && positions.last == at) marks(marks.size - 1) = wm
      else { positions += at; marks += wm }
    }
    val watermarks = new SourceWatermarks(Some(strategy), channels, start, onAdvance)

    def ticksUpTo(limit: Long): Unit = {
      var t = watermarks.nextTick(limit)
      while (t != Long.MaxValue) {
        at = Position.tick(t)
        watermarks.tick(t)
        t = watermarks.nextTick(limit)
      }
    }

    val ordered = activity.sortBy(_._2.first)
    for ((c, a) <- ordered) {
      ticksUpTo(a.first.time)
      at = a.first
      val ts = if (a.marker || !isPunctuated(strategy)) a.maxTimestamp else Long.MinValue
      watermarks.onElement(c, record(a.marker), ts, a.lastArrival)
    }
    val end = if (ordered.isEmpty) start else ordered.map(_._2.lastArrival).max
    ticksUpTo(end)
    new WatermarkTimeline(positions.toArray, marks.toArray)
  }

  private def isPunctuated(s: WatermarkStrategy): Boolean =
    s.kind.isInstanceOf[WatermarkStrategy.Punctuated]
}

/** The second pass for one key: its elements in arrival order, with event time following the
  * timeline and processing time following arrival, so every timer fires where it would have
  * fired in the live stream. `firedAt` tells the emitter the arrival time of each firing.
  */
object ReplayDriver {

  final class Clock { var firedAt: Long = Long.MinValue }

  /** Runs one key's elements through `driver`, whose backend holds that key (made current by
    * the caller) and keeps timers per key (not the packed layouts: see `LocalBackend`).
    */
  def run(
      driver: sparkwin.runtime.Driver,
      timeline: WatermarkTimeline,
      elements: Iterator[(Position, Record, Long)],
      lastArrival: Long,
      clock: Clock
  ): Unit = {
    var next = 0 // the next timeline entry not yet applied
    val processing = driver.timePolicy.processingTimers
    def timerAt(time: Long): Option[Long] = if (time == Long.MaxValue) None else Some(time)

    def applyUpTo(count: Int): Unit =
      if (count > next) {
        val i = count - 1
        next = count
        driver.moveClocks(TimeMove.Clocks(ClockMove.Keep, timeline.positions(i).time, ClockMove.Set))
        clock.firedAt = timeline.positions(i).time
        driver.moveClocks(TimeMove.Clocks(timeline.watermarks(i), ClockMove.Keep, ClockMove.Advance))
      }

    // Everything that happens before `limit`: timeline entries, firing event-time timers where
    // the watermark first reaches them, and processing-time timers, in position order.
    def drain(limit: Position, timerLimit: Long): Unit = {
      var going = true
      while (going) {
        val before = timeline.countBefore(limit)
        val event = timerAt(driver.operator.nextEventTimer)
          .map(t => timeline.firstReaching(t, next))
          .filter(i => i >= 0 && i < before)
        // Processing-time timers only where the plan's policy says its timers use that clock.
        val proc = timerAt(if (processing) driver.operator.nextProcessingTimer else Long.MaxValue)
          .filter(p => p <= timerLimit && Position.timer(p) < limit)
        (event, proc) match {
          case (Some(i), Some(p)) if timeline.positions(i) < Position.timer(p) => applyUpTo(i + 1)
          case (Some(i), None) => applyUpTo(i + 1)
          case (_, Some(p)) =>
            applyUpTo(timeline.countBefore(Position.timer(p)))
            clock.firedAt = p
            driver.moveClocks(TimeMove.Clocks(ClockMove.Keep, p, ClockMove.Advance))
          case (None, None) =>
            applyUpTo(before)
            going = false
        }
      }
    }

    for ((pos, record, ts) <- elements) {
      drain(pos, pos.time)
      driver.moveClocks(TimeMove.Clocks(ClockMove.Keep, pos.time, ClockMove.Set))
      clock.firedAt = pos.time
      driver.processElement(record, ts)
    }
    drain(Position.End, lastArrival)
  }
}
