package sparkwin.operator

import sparkwin.core._
import sparkwin.operator.store._

import sparkwin.core.window.{AlignedWindows, Window}

/** Window arithmetic for aligned windows cut into slices of `gcd(size, slide)`: every window is
  * a run of whole slices, and a slice is named by its start.
  */
final class SliceGrid(spec: OperatorSpec) {
  val (size, slide, offset) = spec.assigner match {
    case AlignedWindows(s, sl, o, _) => (s, sl, o)
    case other => throw new IllegalArgumentException(s"not an aligned assigner: $other")
  }
  val width: Long = spec.sliceWidth

  /** The start of the slice holding `ts`. */
  @inline def sliceOf(ts: Long): Long = Window.alignedStart(ts, offset, width)

  /** The end of the last window holding the slice that starts at `s`. */
  @inline def lastEnd(s: Long): Long =
    if (width == slide) s + size else Window.alignedStart(s, offset, slide) + size

  /** The end of the first window holding the slice that starts at `s`. */
  @inline def firstEnd(s: Long): Long = Window.alignedStart(s - size, offset, slide) + slide + size

  /** The end of the first window holding slice `s` that is not late at `watermark` (caller: one
    * exists).
    */
  def firstLiveEnd(s: Long, watermark: Long): Long = {
    var e = firstEnd(s)
    if (e - 1 <= watermark) e += ((watermark - e + 1) / slide + 1) * slide
    e
  }

  /** The end of the last window that ends by `time` + 1 (every window due at `time`). */
  def lastEndBy(time: Long): Long = Window.alignedStart(time + 1 - size, offset, slide) + size
}
