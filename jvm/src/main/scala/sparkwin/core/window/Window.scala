package sparkwin.core.window

/** A window: the namespace that window contents, trigger state and timers are scoped to. */
sealed trait Window extends Ordered[Window] with sparkwin.api.Window {

  /** The largest timestamp that still belongs to the window; results carry it. */
  def maxTimestamp: Long

  /** Windows are ordered so that timers with equal timestamps fire in a stable order. */
  final def compare(that: Window): Int = Window.ordering.compare(this, that)
}

/** `[start, end)` in epoch milliseconds. */
final case class TimeWindow(start: Long, end: Long) extends Window {
  require(start < end, s"a TimeWindow needs start < end, got [$start, $end)")

  def maxTimestamp: Long = end - 1

  /** Session windows merge when they overlap or touch. */
  def intersects(other: TimeWindow): Boolean = start <= other.end && end >= other.start

  def cover(other: TimeWindow): TimeWindow =
    TimeWindow(math.min(start, other.start), math.max(end, other.end))

  override def toString: String = s"TimeWindow[$start, $end)"

  // Windows key hash maps on the hot path; the generic product hash boxes both fields.
  // Windows sit on a regular grid, so a linear combination of the bounds collides: mix them.
  override def hashCode: Int = {
    var h = start * 0x9e3779b97f4a7c15L + end
    h = (h ^ (h >>> 32)) * 0xd6e8feb86659fd93L
    (h ^ (h >>> 32)).toInt
  }
  override def equals(o: Any): Boolean = o match {
    case w: TimeWindow => w.start == start && w.end == end
    case _ => false
  }
}

/** A window of Storm's windowing: `(start, end]`, data-aligned. `start` is Long.MinValue for
  * count-length windows, which have no start.
  */
final case class StormWindow(start: Long, end: Long) extends Window {
  def maxTimestamp: Long = end
  def hasStart: Boolean = start != Long.MinValue
  override def toString: String = s"StormWindow(${if (hasStart) start.toString else ""}, $end]"
}

/** The one window of global windowing; it never ends on its own. */
case object GlobalWindow extends Window {
  def start: Long = Long.MinValue
  def end: Long = Long.MaxValue
  def maxTimestamp: Long = Long.MaxValue
}

object Window {
  val ordering: Ordering[Window] = new Ordering[Window] {
    // Timers compare windows on every queue operation: no tuples, no boxing.
    private def rank(w: Window): Int = w match {
      case _: TimeWindow => 0
      case _: StormWindow => 1
      case _ => 2
    }

    def compare(a: Window, b: Window): Int = a match {
      case x: TimeWindow =>
        b match {
          case y: TimeWindow =>
            val c = java.lang.Long.compare(x.start, y.start)
            if (c != 0) c else java.lang.Long.compare(x.end, y.end)
          case _ => -1
        }
      case x: StormWindow =>
        b match {
          case y: StormWindow =>
            val c = java.lang.Long.compare(x.end, y.end)
            if (c != 0) c else java.lang.Long.compare(x.start, y.start)
          case _ => Integer.compare(1, rank(b))
        }
      case _ => Integer.compare(2, rank(b))
    }
  }

  /** The aligned start of the window of `size` (shifted by `offset`) holding `ts`.
    * A non-negative modulo keeps negative timestamps in the right window.
    */
  def alignedStart(ts: Long, offset: Long, size: Long): Long =
    ts - java.lang.Math.floorMod(ts - offset, size)

  /** The window [start, end) an assigner that computes bounds made (a user's class, a calendar,
    * a row's Columns), or a [[sparkwin.core.RecordError]] sending the element to the errors
    * output when it is empty or could overflow the engine's arithmetic (beyond
    * [[sparkwin.core.EventTime.MaxSpan]] of Spark's timestamp range). `who` names the assigner.
    */
  def checkedSpan(start: Long, end: Long, who: String): TimeWindow = {
    import sparkwin.core.{EventTime, RecordError}
    if (start >= end)
      throw new RecordError(s"$who assigned the window [$start, $end), which is empty")
    if (start < EventTime.Min - EventTime.MaxSpan || end > EventTime.Max + EventTime.MaxSpan)
      throw new RecordError(
        s"$who assigned the window [$start, $end), beyond 0001-01-01..9999-12-31 by more " +
          s"than ${EventTime.MaxSpan} ms"
      )
    TimeWindow(start, end)
  }
}
