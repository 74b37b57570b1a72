package sparkwin.operator.slice

import sparkwin.core.window.{AlignedWindows, Window, WindowGrid}
import sparkwin.operator.{Selection, WindowAlgorithm, WindowContext}

/** Aligned windows cut into slices of `gcd(size, slide)`: every window is a run of whole slices,
  * and a slice is named by its start. Window arithmetic is the assigner's [[WindowGrid]].
  */
final class SliceGrid(spec: sparkwin.operator.OperatorSpec) {
  private val windows: WindowGrid = AlignedWindows
    .grid(spec.assigner)
    .getOrElse(throw new IllegalArgumentException(s"not an aligned assigner: ${spec.assigner}"))
  val size: Long = windows.size
  val slide: Long = windows.slide
  val width: Long = Selection.sliceWidth(spec)

  /** The start of the slice holding `ts`. */
  @inline def sliceOf(ts: Long): Long = Window.alignedStart(ts, windows.offset, width)

  /** The end of the last window holding the slice that starts at `s`. */
  @inline def lastEnd(s: Long): Long = if (width == slide) s + size else windows.lastEnd(s)

  /** The end of the first window holding the slice that starts at `s`. */
  @inline def firstEnd(s: Long): Long = windows.firstEnd(s)

  /** The end of the first window holding slice `s` that is not late at `watermark` (caller: one
    * exists).
    */
  def firstLiveEnd(s: Long, watermark: Long): Long = {
    var e = firstEnd(s)
    if (e - 1 <= watermark) e += ((watermark - e + 1) / slide + 1) * slide
    e
  }

  /** The end of the last window that ends by `time` + 1 (every window due at `time`). */
  def lastEndBy(time: Long): Long = windows.lastEndBy(time)
}

/** Aligned event-time windows (tumbling or sliding) with the default trigger, aggregates and no
  * lateness ([[Selection.sliceable]]), in the way Flink's SQL window aggregation runs them: event
  * time is cut into slices of `gcd(size, slide)`, every window is a run of whole slices, and all
  * elements of a slice share their windows. An element costs one aggregate update whatever the
  * number of windows it is in; a window's one pane is the merge of its slices, when the
  * watermark reaches its end.
  *
  * What every layout shares lives here: which slices are late, and how many windows a key's new
  * slice opens. The layouts ([[KeyedSlices]], [[PackedSlices]]) keep the slices and fire them.
  * Results, their order, late routing and the data counters are those of the general algorithm
  * for the same spec: differential tests hold it to that.
  */
abstract class SliceAlgorithm(context: WindowContext) extends WindowAlgorithm {
  protected final val grid = new SliceGrid(context.spec)
  protected final val size = grid.size
  protected final val slide = grid.slide
  protected final val width = grid.width

  /** Every window of the slice at `s` has fired and gone: its elements are late. */
  @inline protected final def lateSlice(s: Long): Boolean = context.isLateAt(grid.lastEnd(s) - 1)

  /** A key's new slice `s` opens those of its live windows that hold none of the key's other
    * slices. A window is an interval, so it holds another slice of the key iff it holds the
    * nearest earlier one (`earlier`, Long.MinValue: none within a window) or the nearest later
    * one (`later`, Long.MaxValue: none): windows holding `earlier` end by `earlier + size`, those
    * holding `later` end after it.
    */
  protected final def countOpened(s: Long, earlier: Long, later: Long): Unit =
    if (width == size) context.metrics.windowsOpened += 1 // a tumbling slice is its own window
    else {
      val sharedUpTo = if (earlier == Long.MinValue) Long.MinValue else earlier + size
      var e = grid.firstLiveEnd(s, context.currentWatermark)
      val last = grid.lastEnd(s)
      while (e <= last) {
        if (e > sharedUpTo && e <= later) context.metrics.windowsOpened += 1
        e += slide
      }
    }
}
