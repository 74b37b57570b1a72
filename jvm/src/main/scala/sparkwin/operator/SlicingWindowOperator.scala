package sparkwin.operator

import sparkwin.core._
import sparkwin.operator.store._

import sparkwin.core.agg.Accumulator
import sparkwin.operator.store.{KeyState, WindowContents}
import sparkwin.core.timer.Timer
import sparkwin.core.window.TimeWindow

/** The window operator for the commonest pipeline, in the way Flink's SQL window aggregation
  * works: aligned event-time windows (tumbling or sliding), the default event-time trigger, no
  * evictor, declarative aggregates and no allowed lateness ([[OperatorSpec.sliceable]]).
  *
  * Event time is cut into slices of `gcd(size, slide)`: every window is a run of whole slices,
  * and all elements of a slice share their windows. A key keeps one set of accumulators per
  * slice (in [[KeyState.contents]], under the slice as a window), so an element costs one
  * accumulator update whatever the number of windows it is in, and a sliding window is the
  * merge of its slices when it fires. A key has at most one pending timer, at the end of the
  * earliest window that holds its data; firing a window queues the next one.
  *
  * Results, late routing and the counters that describe the data (elements, late, panes,
  * windows opened and cleaned) are those of [[WindowOperator]] for the same spec: the
  * differential tests hold it to that. It must not grow triggers or lateness: pipelines with
  * those run on [[WindowOperator]].
  */
final class SlicingWindowOperator(val spec: OperatorSpec, backend: KeyedBackend, output: Emitter)
    extends PartialOperator
    with EventTimeClocks {
  require(spec.sliceable, s"SlicingWindowOperator needs a sliceable pipeline, got $spec")

  private val grid = new SliceGrid(spec)
  import grid.{firstEnd, lastEnd, size, sliceOf, slide}
  private val width = grid.width
  private val aggregates = spec.aggregates.toArray // a sliceable pipeline has aggregates
  private val onTimePane = PaneInfo(PaneTiming.OnTime, 0L, isFirst = true, isLast = true)

  val metrics = new OperatorMetrics

  private def firstLiveEnd(s: Long): Long = grid.firstLiveEnd(s, watermark)

  // ---------------------------------------------------------------------------------------
  // Elements

  def processElement(record: Record, timestamp: Long): Unit = {
    metrics.elementsIn += 1
    val s = sliceOf(timestamp)
    if (lastEnd(s) - 1 <= watermark) {
      // Every window of the element has fired and gone: the element is late.
      metrics.late(spec.lateOutput, output, backend.currentKey, record, timestamp)
    } else {
      val accs = sliceAccumulators(backend.state, s)
      var i = 0
      while (i < accs.length) { accs(i).add(record, timestamp); i += 1 }
    }
  }

  def processPartial(ts: Long, partial: Array[Accumulator], count: Long): Unit = {
    metrics.elementsIn += count
    val s = sliceOf(ts)
    if (lastEnd(s) - 1 <= watermark) metrics.droppedLate += count
    else Accumulator.mergeAll(sliceAccumulators(backend.state, s), partial)
  }

  /** The accumulators of the key's slice `s`, created (with its windows and timer) if new. */
  private def sliceAccumulators(st: KeyState, s: Long): Array[Accumulator] = {
    // Most elements of a key land in the slice its previous element did.
    if (st.hotContents != null && st.hotSlice == s) return st.hotContents.accumulators
    val slice = TimeWindow(s, s + width)
    var c = st.contents.get(slice)
    if (c == null) {
      c = new WindowContents(Accumulator.fresh(aggregates), null)
      val end = firstLiveEnd(s)
      countOpenedWindows(st, s, end)
      st.contents.put(slice, c)
      if (backend.eventTimers.add(Timer(end - 1, backend.currentKeyId, TimeWindow(end - size, end))))
        metrics.timersRegistered += 1
    }
    st.hotSlice = s
    st.hotContents = c
    c.accumulators
  }

  /** A new slice opens those of its live windows (the first ends at `firstLive`) that hold
    * none of the key's other slices.
    */
  private def countOpenedWindows(st: KeyState, s: Long, firstLive: Long): Unit = {
    var end = firstLive
    val last = lastEnd(s)
    if (st.contents.isEmpty) metrics.windowsOpened += (last - end) / slide + 1
    else
      while (end <= last) {
        val start = end - size
        var shared = false
        val it = st.contents.keySet.iterator
        while (!shared && it.hasNext) {
          val other = it.next().asInstanceOf[TimeWindow].start
          shared = other >= start && other < end
        }
        if (!shared) metrics.windowsOpened += 1
        end += slide
      }
  }

  // ---------------------------------------------------------------------------------------
  // Time

  def advanceWatermark(wm: Long): Unit = {
    if (wm < watermark) return
    watermark = wm
    backend.fireDue(backend.eventTimers, wm)(t => fire(t.window.asInstanceOf[TimeWindow]))
  }

  /** The window's pane is the merge of its slices; slices no later window needs go, and the
    * key's next window with data gets the timer.
    */
  private def fire(window: TimeWindow): Unit = {
    val st = backend.state
    val keep = window.start + slide // later windows start here or later
    var merged: Array[Accumulator] = null
    var single: Array[Accumulator] = null
    var next = Long.MaxValue // the earliest slice a later window holds
    val it = st.contents.entrySet.iterator
    while (it.hasNext) {
      val e = it.next()
      val s = e.getKey.asInstanceOf[TimeWindow].start
      if (s >= window.start && s < window.end) {
        val accs = e.getValue.accumulators
        if (single == null) single = accs
        else {
          if (merged == null) {
            merged = Accumulator.fresh(aggregates)
            Accumulator.mergeAll(merged, single)
          }
          Accumulator.mergeAll(merged, accs)
        }
      }
      if (s < keep) {
        it.remove()
        if (st.hotContents eq e.getValue) st.hotContents = null
      } else if (s < next) next = s
    }
    if (single != null) {
      metrics.panesFired += 1
      metrics.windowsCleaned += 1
      output.emitResult(
        backend.currentKey,
        window,
        onTimePane,
        Accumulator.results(if (merged == null) single else merged)
      )
    }
    // A state restored from an operator that kept window metadata: it ends with the window.
    if (!st.meta.isEmpty) st.meta.remove(window)
    if (next != Long.MaxValue) {
      val end = math.max(firstEnd(next), window.end + slide)
      if (backend.eventTimers.add(Timer(end - 1, backend.currentKeyId, TimeWindow(end - size, end))))
        metrics.timersRegistered += 1
    }
    backend.stateTouched()
  }

}

object SlicingWindowOperator {

  /** Slices per window beyond which slicing stops paying (a window would merge too many). */
  val MaxSlicesPerWindow = 256L

  /** The slice width of windows of `size` every `slide`: every window bound is on its grid. */
  def sliceWidth(size: Long, slide: Long): Long =
    java.math.BigInteger.valueOf(size).gcd(java.math.BigInteger.valueOf(slide)).longValue
}
