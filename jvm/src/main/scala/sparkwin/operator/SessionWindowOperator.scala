package sparkwin.operator

import sparkwin.core._
import sparkwin.operator.store._

import sparkwin.core.agg.Accumulator
import sparkwin.operator.store.{KeyState, WindowContents}
import sparkwin.core.timer.Timer
import sparkwin.core.window.{SessionWindows, TimeWindow, Window}

/** The window operator for event-time sessions with a fixed gap, the default trigger,
  * order-blind aggregates, no evictor and no allowed lateness ([[OperatorSpec.sessionFastPath]]).
  *
  * A key's live sessions are its contents, each stored under the session itself (no merging
  * set and no window metadata: with the default trigger and no lateness a session's only
  * event is its end). An element extends the session it touches, bridges the sessions it
  * touches, or opens one. A key keeps one timer, at or before the end of its earliest session:
  * a session that grows leaves the timer where it was, and a timer that finds no session due
  * moves on to the earliest one. Generic merging costs a window set, metadata and two timer
  * operations per element; here a growing session costs one re-keying of its contents.
  *
  * Results, their order, late routing and the counters that describe the data (elements, late,
  * panes, windows opened, merged and cleaned) are those of [[WindowOperator]] for the same
  * spec: the differential tests hold it to that.
  */
final class SessionWindowOperator(val spec: OperatorSpec, backend: KeyedBackend, output: Emitter)
    extends Operator
    with EventTimeClocks {
  require(spec.sessionFastPath, s"SessionWindowOperator needs an event-time session pipeline, got $spec")

  private val gap = spec.assigner.asInstanceOf[SessionWindows].gap
  private val aggregates = spec.aggregates.toArray
  private val onTimePane = PaneInfo(PaneTiming.OnTime, 0L, isFirst = true, isLast = true)

  val metrics = new OperatorMetrics

  def processElement(record: Record, timestamp: Long): Unit = {
    metrics.elementsIn += 1
    val st = backend.state
    val start = timestamp
    val end = timestamp + gap
    // Most elements land in the session the key's previous element did, inside it or past it.
    val hot = st.hotWindow.asInstanceOf[TimeWindow]
    var contents: WindowContents = null
    if (hot != null && hot.start <= start && hot.end >= start) {
      if (hot.end >= end) contents = st.hotContents
      else if (st.contents.size == 1) contents = grow(st, hot, st.hotContents, TimeWindow(hot.start, end))
    }
    if (contents == null) contents = place(st, start, end)
    if (contents == null) {
      backend.stateTouched() // a key seen only late keeps no state
      metrics.late(spec.lateOutput, output, backend.currentKey, record, timestamp)
    } else {
      val accs = contents.accumulators
      var i = 0
      while (i < accs.length) { accs(i).add(record, timestamp); i += 1 }
    }
  }

  /** The general case: the sessions `[start, end)` touches merge with it into one; with none,
    * it opens a session unless it is late. Returns the contents the element goes to (null:
    * late).
    */
  private def place(st: KeyState, start: Long, end: Long): WindowContents = {
    requireOwnLayout(st)
    var lo = start
    var hi = end
    var touched = 0
    var into: WindowContents = null // the contents the touched sessions merge into
    val it = st.contents.entrySet.iterator
    while (it.hasNext) {
      val e = it.next()
      val w = e.getKey.asInstanceOf[TimeWindow]
      if (w.start <= end && w.end >= start) {
        // Live sessions never touch each other, so one that covers the element is the only
        // one it touches.
        if (w.start <= start && w.end >= end) return remember(st, w, e.getValue)
        it.remove()
        touched += 1
        if (into == null) into = e.getValue
        else Accumulator.mergeAll(into.accumulators, e.getValue.accumulators)
        if (w.start < lo) lo = w.start
        if (w.end > hi) hi = w.end
      }
    }
    if (touched == 0) {
      if (end - 1 <= watermark) return null // its session would have fired already
      val session = TimeWindow(start, end)
      val c = new WindowContents(Accumulator.fresh(aggregates), null)
      st.contents.put(session, c)
      metrics.windowsOpened += 1
      // The key's timer is unknown on a state just read from the store: queue one anyway.
      if (st.sessionTimer == Long.MinValue || end - 1 < st.sessionTimer) queueTimer(st, session)
      return remember(st, session, c)
    }
    // The touched sessions and the element make one session, the cover of them all.
    val merged = TimeWindow(lo, hi)
    metrics.windowsOpened += 1
    metrics.windowsMerged += touched
    metrics.windowsCleaned += touched
    st.contents.put(merged, into)
    remember(st, merged, into)
  }

  /** The key's only session `from` grows to `to` (same start, later end). */
  private def grow(st: KeyState, from: TimeWindow, c: WindowContents, to: TimeWindow): WindowContents = {
    st.contents.remove(from)
    st.contents.put(to, c)
    metrics.windowsOpened += 1
    metrics.windowsMerged += 1
    metrics.windowsCleaned += 1
    remember(st, to, c)
  }

  /** Sessions kept by [[WindowOperator]] (a merging set, window metadata) are not ours. */
  private def requireOwnLayout(st: KeyState): Unit =
    if (st.merging != null || !st.meta.isEmpty)
      throw new IllegalStateException(
        "this key's session state was written by an older sparkwin (generic merging windows): " +
          "restart the query from a new checkpoint"
      )

  private def remember(st: KeyState, w: TimeWindow, c: WindowContents): WindowContents = {
    st.hotWindow = w
    st.hotContents = c
    c
  }

  private def queueTimer(st: KeyState, session: TimeWindow): Unit = {
    st.sessionTimer = session.end - 1
    if (backend.eventTimers.add(Timer(session.end - 1, backend.currentKeyId, session)))
      metrics.timersRegistered += 1
  }

  // ---------------------------------------------------------------------------------------
  // Time

  def advanceWatermark(wm: Long): Unit = {
    if (wm < watermark) return
    watermark = wm
    backend.fireDue(backend.eventTimers, wm)(t => fire(t.timestamp))
  }

  /** Sessions of the current key that end by `time` fire, earliest first, and go; the timer
    * moves to the earliest session left.
    */
  private def fire(time: Long): Unit = {
    val st = backend.state
    requireOwnLayout(st)
    var due: TimeWindow = null
    var next: TimeWindow = null
    val it = st.contents.keySet.iterator
    while (it.hasNext) {
      val w = it.next().asInstanceOf[TimeWindow]
      if (w.end - 1 <= time) {
        // The invariant (a timer at or before the earliest end) leaves at most one due.
        if (due == null || w.end < due.end) due = w
      } else if (next == null || w.end < next.end) next = w
    }
    if (due != null) {
      val c = st.contents.remove(due)
      if (st.hotContents eq c) { st.hotContents = null; st.hotWindow = null }
      metrics.panesFired += 1
      metrics.windowsCleaned += 1
      output.emitResult(backend.currentKey, due, onTimePane, Accumulator.results(c.accumulators))
    }
    st.sessionTimer = Long.MaxValue
    if (next != null) queueTimer(st, next)
    backend.stateTouched()
  }
}
