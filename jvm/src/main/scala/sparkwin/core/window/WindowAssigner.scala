package sparkwin.core.window

import sparkwin.core.{EventTime, Record, RecordError, TimerClocks}

/** What an assigner may ask of the operator: the current processing time. */
trait WindowAssignerContext {
  def currentProcessingTime: Long
}

/** Maps an element to the windows it belongs to. Assigners are stateless values. */
sealed trait WindowAssigner {

  /** The windows of an element with event timestamp `ts`. */
  def assignWindows(record: Record, ts: Long, ctx: WindowAssignerContext): Seq[Window]

  /** True when windows are defined by event time (lateness and watermark apply). */
  def isEventTime: Boolean

  /** True for session-like assigners whose windows merge. */
  def isMerging: Boolean = false

  /** The clocks of the timers the engine sets for this assigner's windows (their ends and their
    * cleanup), declared the way triggers declare theirs (`Trigger.ownClocks`): the assigner's own
    * clock by default. Runtimes ask this, never the assigner's class.
    */
  def ownClocks: TimerClocks = if (isEventTime) TimerClocks.Event else TimerClocks.Processing

  /** Whether the pipeline's trigger decides when windows fire (and so its clocks count). */
  def runsTrigger: Boolean = true

  /** Whether a pane's timing (EARLY, ON_TIME, LATE) is judged by the watermark rather than by
    * processing time: for event-time windows.
    */
  def panesByWatermark: Boolean = isEventTime
}

/** Assigners whose windows merge (sessions). */
sealed trait MergingWindowAssigner extends WindowAssigner {
  override def isMerging: Boolean = true

  /** Groups `windows` into merge sets; each result is (merged window, windows it covers).
    * Only groups of two or more windows are returned.
    */
  def mergeWindows(windows: Iterable[TimeWindow]): Seq[(TimeWindow, Seq[TimeWindow])] =
    TimeWindows.mergeOverlapping(windows)
}

/** Tumbling windows of `size`, aligned to the epoch shifted by `offset`. */
final case class TumblingWindows(size: Long, offset: Long, isEventTime: Boolean) extends WindowAssigner {
  require(size > 0, s"size must be positive, got $size")
  require(math.abs(offset) < size, s"|offset| must be smaller than size, got offset $offset")

  def assignWindows(record: Record, ts: Long, ctx: WindowAssignerContext): Seq[Window] = {
    val t = if (isEventTime) ts else ctx.currentProcessingTime
    val start = Window.alignedStart(t, offset, size)
    TimeWindow(start, start + size) :: Nil
  }
}

/** Sliding windows of `size` every `slide`; size need not be a multiple of slide. */
final case class SlidingWindows(size: Long, slide: Long, offset: Long, isEventTime: Boolean)
    extends WindowAssigner {
  require(size > 0, s"size must be positive, got $size")
  require(slide > 0, s"slide must be positive, got $slide")
  require(math.abs(offset) < slide, s"|offset| must be smaller than slide, got offset $offset")

  def assignWindows(record: Record, ts: Long, ctx: WindowAssignerContext): Seq[Window] = {
    val t = if (isEventTime) ts else ctx.currentProcessingTime
    val last = Window.alignedStart(t, offset, slide)
    val out = List.newBuilder[Window]
    var start = last
    while (start > t - size) {
      out += TimeWindow(start, start + size)
      start -= slide
    }
    out.result()
  }
}

/** The arithmetic of aligned windows of `size` every `slide`, shifted by `offset` (tumbling
  * windows slide by their size): which windows hold a time, without building them. The
  * assigners, the sliced algorithm and Spark's map-side combiner all count on it.
  */
final case class WindowGrid(size: Long, slide: Long, offset: Long) {

  /** The start of the last window holding `ts`. */
  @inline def lastStart(ts: Long): Long = Window.alignedStart(ts, offset, slide)

  /** The end of the last window holding `ts`. */
  @inline def lastEnd(ts: Long): Long = lastStart(ts) + size

  /** The end of the first window holding `ts`. */
  @inline def firstEnd(ts: Long): Long = Window.alignedStart(ts - size, offset, slide) + slide + size

  /** How many windows hold `ts` (0 in the gaps of windows that slide further than their size).
    * With a size that is not a multiple of the slide, times with the same last window can differ
    * in how many earlier ones they are in.
    */
  def windowsHolding(ts: Long): Int = {
    val last = lastStart(ts)
    // The starts are last, last - slide, ... while start > ts - size.
    (java.lang.Math.floorDiv(last - ts + size - 1, slide) + 1).max(0L).toInt
  }

  /** The end of the last window that ends by `time` + 1 (every window due at `time`). */
  def lastEndBy(time: Long): Long = Window.alignedStart(time + 1 - size, offset, slide) + size
}

/** Tumbling or sliding windows as one grid: (size, slide, offset, isEventTime); tumbling
  * windows slide by their size.
  */
object AlignedWindows {

  /** The grid of an aligned assigner. */
  def grid(assigner: WindowAssigner): Option[WindowGrid] = unapply(assigner).map {
    case (size, slide, offset, _) =>
      WindowGrid(size, slide, offset)
  }

  def unapply(assigner: WindowAssigner): Option[(Long, Long, Long, Boolean)] = assigner match {
    case TumblingWindows(size, offset, eventTime) => Some((size, size, offset, eventTime))
    case SlidingWindows(size, slide, offset, eventTime) => Some((size, slide, offset, eventTime))
    case _ => None
  }
}

/** Session windows: each element opens `[t, t + gap)`; overlapping ones merge. The gap is
  * fixed, or read per element from a column of milliseconds (`gapColumn`).
  */
final case class SessionWindows(gap: Long, gapColumn: Int, isEventTime: Boolean)
    extends MergingWindowAssigner {
  require(gapColumn >= 0 || gap > 0, s"gap must be positive, got $gap")

  def assignWindows(record: Record, ts: Long, ctx: WindowAssignerContext): Seq[Window] = {
    val t = if (isEventTime) ts else ctx.currentProcessingTime
    val g = if (gapColumn < 0) gap else SessionWindows.dynamicGap(record, gapColumn)
    TimeWindow(t, t + g) :: Nil
  }
}

object SessionWindows {
  def dynamicGap(record: Record, column: Int): Long = {
    if (record.isNullAt(column))
      throw new RecordError("the dynamic session gap is null")
    val g = record.getLong(column)
    if (g <= 0) throw new RecordError(s"a dynamic session gap must be positive, got $g ms")
    if (g > EventTime.MaxSpan)
      throw new RecordError(s"a dynamic session gap must be at most ${EventTime.MaxSpan} ms, got $g ms")
    g
  }
}

/** Every element in the one global window; pair it with a trigger (default: never fire). */
case object GlobalWindows extends WindowAssigner {
  private val only: Seq[Window] = GlobalWindow :: Nil
  def assignWindows(record: Record, ts: Long, ctx: WindowAssignerContext): Seq[Window] = only
  def isEventTime: Boolean = false

  /** Its window never ends, so it needs no timer of its own: only its trigger sets them. */
  override def ownClocks: TimerClocks = TimerClocks.None

  /** Beam's rule: the global window's panes are timed by the watermark (its end is the end of
    * event time).
    */
  override def panesByWatermark: Boolean = true
}

/** A user's assigner (`sparkwin.api.WindowAssigner`, from the user's jar): non-merging time
  * windows. A window it makes that is empty or could overflow the engine's arithmetic (beyond
  * [[EventTime.MaxSpan]] of Spark's timestamp range) sends the element to the errors output,
  * as a bad record does, rather than failing the query. `description` is how the pipeline named
  * it.
  */
final class ExtensionWindows(val impl: sparkwin.api.WindowAssigner, description: String)
    extends WindowAssigner {
  val isEventTime: Boolean = impl.isEventTime

  def assignWindows(record: Record, ts: Long, ctx: WindowAssignerContext): Seq[Window] = {
    val out = List.newBuilder[Window]
    impl.assignWindows(
      record,
      ts,
      new sparkwin.api.WindowAssigner.Context {
        def currentProcessingTime: Long = ctx.currentProcessingTime
        def addWindow(start: Long, end: Long): Unit = out += Window.checkedSpan(start, end, description)
      }
    )
    out.result()
  }

  override def toString: String = description
}

/** Windows of one calendar unit (a day, an ISO week from Monday, a month, a year) in the time
  * zone `zone`: each starts at the local midnight that begins its unit, as Spark's `date_trunc`
  * gives it with that session time zone. Across daylight saving a day is 23 or 25 hours long,
  * and where midnight does not exist the window starts at the first instant after the gap.
  */
final case class CalendarWindows(unit: CalendarUnit, zone: java.time.ZoneId, isEventTime: Boolean)
    extends WindowAssigner {

  def assignWindows(record: Record, ts: Long, ctx: WindowAssignerContext): Seq[Window] = {
    val t = if (isEventTime) ts else ctx.currentProcessingTime
    val day = java.time.Instant.ofEpochMilli(t).atZone(zone).toLocalDate
    val first = unit.first(day)
    Window.checkedSpan(millisAt(first), millisAt(unit.next(first)), toString) :: Nil
  }

  private def millisAt(day: java.time.LocalDate): Long = day.atStartOfDay(zone).toInstant.toEpochMilli

  override def toString: String = s"CalendarWindows(${unit.name}, $zone)"
}

/** A calendar unit: the first day of the unit holding a day, and the first day of the next. */
sealed abstract class CalendarUnit(val name: String) {
  def first(day: java.time.LocalDate): java.time.LocalDate
  def next(first: java.time.LocalDate): java.time.LocalDate
}

object CalendarUnit {
  case object Day extends CalendarUnit("day") {
    def first(day: java.time.LocalDate): java.time.LocalDate = day
    def next(first: java.time.LocalDate): java.time.LocalDate = first.plusDays(1)
  }
  case object Week extends CalendarUnit("week") { // ISO weeks, Monday first, as date_trunc('week')
    def first(day: java.time.LocalDate): java.time.LocalDate =
      day.minusDays(day.getDayOfWeek.getValue - 1L)
    def next(first: java.time.LocalDate): java.time.LocalDate = first.plusWeeks(1)
  }
  case object Month extends CalendarUnit("month") {
    def first(day: java.time.LocalDate): java.time.LocalDate = day.withDayOfMonth(1)
    def next(first: java.time.LocalDate): java.time.LocalDate = first.plusMonths(1)
  }
  case object Year extends CalendarUnit("year") {
    def first(day: java.time.LocalDate): java.time.LocalDate = day.withDayOfYear(1)
    def next(first: java.time.LocalDate): java.time.LocalDate = first.plusYears(1)
  }
  val all: Seq[CalendarUnit] = Seq(Day, Week, Month, Year)
  def named(name: String): Option[CalendarUnit] = all.find(_.name == name)
}

/** Windows computed from the row: `column` holds each window's start and end in epoch
  * milliseconds, one after the other (`[start0, end0, start1, end1, ...]`), which Spark computed
  * from the user's Columns before the engine. An empty list puts the element in no window (a
  * counted drop); a null, an odd length or an empty window sends it to the errors output.
  */
final case class ComputedWindows(column: Int) extends WindowAssigner {
  def isEventTime: Boolean = true

  def assignWindows(record: Record, ts: Long, ctx: WindowAssignerContext): Seq[Window] =
    record.get(column) match {
      case null => throw new RecordError("the computed windows are null")
      case bounds: scala.collection.Seq[_] =>
        if (bounds.size % 2 != 0)
          throw new RecordError(s"the computed windows hold ${bounds.size} bounds, not start-end pairs")
        bounds
          .grouped(2)
          .map { pair =>
            (pair.head, pair(1)) match {
              case (s: java.lang.Number, e: java.lang.Number) =>
                Window.checkedSpan(s.longValue, e.longValue, "a computed window")
              case _ => throw new RecordError("a computed window's start or end is null")
            }
          }
          .toList
      case other =>
        throw new IllegalStateException(s"computed windows column holds ${other.getClass.getName}")
    }
}

/** A Storm window length or sliding interval: a number of tuples or a duration. */
sealed trait StormSize
object StormSize {
  final case class Count(n: Long) extends StormSize {
    require(n > 0, s"a Storm count must be positive, got $n")
  }
  final case class Duration(millis: Long) extends StormSize {
    require(millis > 0, s"a Storm duration must be positive, got $millis ms")
  }
}

/** Storm's event-time windows: a length and a sliding interval, each a count or a duration,
  * with a lag that lets tuples up to `lag` past a window's end wait for the next window.
  * Windows are made by the Storm algorithms of the operator, not by assignment.
  */
/** Storm's windows: in event time with a lag (a timestamp field), or, with `isEventTime` false,
  * in arrival order and processing time (Storm's default, without a timestamp field).
  */
final case class StormWindows(length: StormSize, slide: StormSize, lag: Long, isEventTime: Boolean = true)
    extends WindowAssigner {
  require(lag >= 0, s"lag must not be negative, got $lag")
  def assignWindows(record: Record, ts: Long, ctx: WindowAssignerContext): Seq[Window] =
    throw new UnsupportedOperationException("Storm windows are built by the Storm algorithms")

  /** In event time, watermark timers; in arrival order, processing-time timers only for a
    * duration (a slide, or a length's expiry): counts fire as tuples arrive.
    */
  override def ownClocks: TimerClocks =
    if (isEventTime) TimerClocks.Event
    else if (slide.isInstanceOf[StormSize.Duration] || length.isInstanceOf[StormSize.Duration])
      TimerClocks.Processing
    else TimerClocks.None

  /** Storm's windows fire by their own policies, never by a trigger. */
  override def runsTrigger: Boolean = false
}

object TimeWindows {

  /** Sorts by start and sweeps, covering every window that overlaps or touches the run. */
  def mergeOverlapping(windows: Iterable[TimeWindow]): Seq[(TimeWindow, Seq[TimeWindow])] = {
    val sorted = windows.toArray.sortBy(w => (w.start, w.end))
    val out = Seq.newBuilder[(TimeWindow, Seq[TimeWindow])]
    var i = 0
    while (i < sorted.length) {
      var cover = sorted(i)
      val members = List.newBuilder[TimeWindow]
      members += sorted(i)
      var n = 1
      var j = i + 1
      while (j < sorted.length && cover.intersects(sorted(j))) {
        cover = cover.cover(sorted(j))
        members += sorted(j)
        n += 1
        j += 1
      }
      if (n > 1) out += ((cover, members.result()))
      i = j
    }
    out.result()
  }
}
