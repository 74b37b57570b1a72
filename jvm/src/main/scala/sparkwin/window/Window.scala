package sparkwin.window

/** A window: the namespace that window contents, trigger state and timers are scoped to. */
sealed trait Window extends Ordered[Window] {

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
  def maxTimestamp: Long = Long.MaxValue
}

object Window {
  val ordering: Ordering[Window] = new Ordering[Window] {
    def compare(a: Window, b: Window): Int = (a, b) match {
      case (x: TimeWindow, y: TimeWindow) =>
        val c = java.lang.Long.compare(x.start, y.start)
        if (c != 0) c else java.lang.Long.compare(x.end, y.end)
      case (x: StormWindow, y: StormWindow) =>
        val c = java.lang.Long.compare(x.end, y.end)
        if (c != 0) c else java.lang.Long.compare(x.start, y.start)
      case (_: TimeWindow, _) => -1
      case (_, _: TimeWindow) => 1
      case (_: StormWindow, _) => -1
      case (_, _: StormWindow) => 1
      case (GlobalWindow, GlobalWindow) => 0
    }
  }

  /** The aligned start of the window of `size` (shifted by `offset`) holding `ts`.
    * A non-negative modulo keeps negative timestamps in the right window.
    */
  def alignedStart(ts: Long, offset: Long, size: Long): Long =
    ts - java.lang.Math.floorMod(ts - offset, size)
}
