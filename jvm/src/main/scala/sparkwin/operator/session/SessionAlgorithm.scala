package sparkwin.operator.session

import sparkwin.core.Record
import sparkwin.core.window.{SessionWindows, TimeWindow}
import sparkwin.operator.{WindowAlgorithm, WindowContext}

/** Event-time sessions with a fixed gap, the default trigger, order-blind aggregates, no evictor
  * and no allowed lateness (`Selection.sessionFastPath`): the merging written once, over a
  * layout that keeps each key's sessions as an indexed list ([[KeyedSessions]], [[PackedSessions]]).
  *
  * With that trigger and no lateness a session has one event, its end, so there is no merging
  * set, no per-window metadata and no trigger state. An element extends the session it touches,
  * bridges the sessions it touches, or opens one. A key keeps one timer, at or before the end of
  * its earliest session: a session that grows leaves the timer where it was, and a timer that
  * finds no session due moves on to the earliest one, so panes leave in the general algorithm's
  * order (end, then key). Results, their order, late routing and the data counters are the
  * general algorithm's for the same spec: differential tests hold it to that.
  */
abstract class SessionAlgorithm(context: WindowContext) extends WindowAlgorithm {
  import SessionAlgorithm._

  private val gap = context.spec.assigner.asInstanceOf[SessionWindows].gap

  // The current key's sessions, as the layout keeps them (after `focus`).
  protected def focus(): Unit
  protected def count: Int
  protected def start(i: Int): Long
  protected def end(i: Int): Long
  protected def setBounds(i: Int, start: Long, end: Long): Unit

  /** A new session with empty aggregates; returns its index. */
  protected def open(start: Long, end: Long): Int

  /** Folds session `from` into `into` (aggregates and bounds) and marks `from` removed. */
  protected def absorb(into: Int, from: Int): Unit

  /** Drops the sessions marked removed; returns where `into` is now. */
  protected def compact(into: Int): Int

  protected def add(i: Int, record: Record, timestamp: Long): Unit
  protected def results(i: Int): Array[Any]
  protected def remove(i: Int): Unit

  /** The time of the key's timer: [[NoTimer]], or [[Unknown]] for a state just read from a store
    * (it does not say where its timer is).
    */
  protected def timer: Long
  protected def setTimer(time: Long): Unit

  /** Queues the key's timer at `time` (and records it as the key's timer). */
  protected def queueTimer(time: Long): Unit

  /** The key's state changed and may be empty. */
  protected def touched(): Unit

  def processElement(record: Record, timestamp: Long): Unit = {
    focus()
    val end = timestamp + gap
    var at = -1
    if (count == 1 && start(0) <= timestamp && this.end(0) >= timestamp) {
      // The key's only session, touched: the element lands inside it or extends it.
      at = 0
      if (this.end(0) < end) { setBounds(0, start(0), end); countGrowth(1) }
    } else at = place(timestamp, end)
    if (at < 0) {
      touched() // a key seen only late keeps no state
      context.late(record, timestamp)
    } else add(at, record, timestamp)
  }

  /** A session grew by absorbing `touched` others (or itself, grown): one window opened, the
    * touched ones merged into it and gone.
    */
  private def countGrowth(touched: Int): Unit = {
    context.metrics.windowsOpened += 1
    context.metrics.windowsMerged += touched
    context.metrics.windowsCleaned += touched
  }

  /** The general case: the sessions `[start, end)` touches merge with it into one; with none,
    * it opens a session unless it is late. Returns the session's index (-1: late).
    */
  private def place(start: Long, end: Long): Int = {
    val n = count
    var into = -1
    var touchedCount = 0
    var i = 0
    while (i < n) {
      if (this.start(i) <= end && this.end(i) >= start) {
        // Live sessions never touch each other: one covering the element is the only one.
        if (this.start(i) <= start && this.end(i) >= end) return i
        touchedCount += 1
        if (into < 0) into = i else absorb(into, i)
      }
      i += 1
    }
    if (touchedCount == 0) {
      if (context.isLateAt(end - 1)) return -1 // its session would have fired already
      val at = open(start, end)
      context.metrics.windowsOpened += 1
      if (timer == Unknown || end - 1 < timer) queueTimer(end - 1)
      return at
    }
    setBounds(into, math.min(this.start(into), start), math.max(this.end(into), end))
    countGrowth(touchedCount)
    if (touchedCount == 1) into else compact(into)
  }

  /** The current key's earliest session fires and goes if it ends by `time`; the key's timer
    * moves to the earliest session left.
    */
  protected final def fire(time: Long): Unit = {
    focus()
    var due = -1
    var next = -1
    var i = 0
    while (i < count) {
      if (end(i) - 1 <= time) { if (due < 0 || end(i) < end(due)) due = i }
      else if (next < 0 || end(i) < end(next)) next = i
      i += 1
    }
    val nextEnd = if (next >= 0) end(next) else Long.MaxValue
    setTimer(NoTimer)
    if (due >= 0) {
      val window = TimeWindow(start(due), end(due))
      val values = results(due)
      remove(due)
      context.emitFinal(window, values)
    }
    if (nextEnd != Long.MaxValue) queueTimer(nextEnd - 1)
    touched()
  }
}

object SessionAlgorithm {

  /** A key without a pending timer. */
  final val NoTimer = Long.MaxValue

  /** A key whose timer is not known (its state was just read from a store). */
  final val Unknown = Long.MinValue
}
