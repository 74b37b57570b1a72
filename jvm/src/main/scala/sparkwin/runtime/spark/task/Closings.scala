package sparkwin.runtime.spark.task

import sparkwin.core.window.{AlignedWindows, Window, WindowGrid}
import sparkwin.plan.Plan

/** Where a real-time map side's channel watermarks close windows, so that the summary that closes
  * one leaves at once instead of waiting for the summary interval (DESIGN.md, "Real-time mode").
  *
  * Only event-time tumbling and sliding windows close at times known ahead (every slide); a
  * window `[s, e)` fires once the watermark reaches `e - 1`. A channel's watermark is its largest
  * time less the strategy's delay, as the key groups' valve computes it. A partition's watermark
  * is its slowest channel's, so a summary is urgent only when that one crosses a window's end:
  * the partition keeps how many of its channels stand at each closed end (an ordered count, so a
  * crossing costs a log of the channels, not a scan).
  */
final class Closings(grid: WindowGrid, delay: Long) {
  private val levels = new java.util.TreeMap[java.lang.Long, Integer]()

  /** The end of the last window a channel whose largest time is `maxTs` has closed. */
  def closedEnd(maxTs: Long): Long = {
    val watermark = maxTs - delay
    Window.alignedStart(watermark + 1 - grid.size, grid.offset, grid.slide) + grid.size
  }

  /** A channel's largest time moved from `before` (null: first seen) to `after`; whether the
    * partition's slowest channel now closes a window it did not close before. A new channel is
    * counted but never urgent: it can only hold the partition back, and its first summary goes
    * on the interval.
    */
  def moved(before: java.lang.Long, after: Long): Boolean = {
    val to = closedEnd(after)
    if (before == null) {
      levels.merge(to, 1, (a: Integer, b: Integer) => a + b)
      false
    } else {
      val from = closedEnd(before)
      if (from == to) false
      else {
        val slowest = levels.firstKey.longValue
        val left = levels.get(from) - 1
        if (left == 0) levels.remove(from) else levels.put(from, left)
        levels.merge(to, 1, (a: Integer, b: Integer) => a + b)
        levels.firstKey.longValue > slowest
      }
    }
  }
}

object Closings {

  /** The closings of a plan's windows, when its assigner and watermark make them known ahead. */
  def of(plan: Plan): Option[Closings] =
    for {
      grid <- AlignedWindows.unapply(plan.spec.assigner).collect { case (size, slide, offset, true) =>
        WindowGrid(size, slide, offset)
      }
      strategy <- plan.watermark
      delay <- strategy.sparkDelayMillis
    } yield new Closings(grid, delay)
}
