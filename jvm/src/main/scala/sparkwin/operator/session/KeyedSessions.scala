package sparkwin.operator.session

import java.io.{DataInputStream, DataOutputStream}

import sparkwin.core.Record
import sparkwin.core.agg.{Accumulator, Aggregate}
import sparkwin.core.timer.TimerQueue
import sparkwin.core.window.{GlobalWindow, TimeWindow, Window}
import sparkwin.operator.{OpenWindow, Selection, WindowContext}
import sparkwin.operator.store._

/** A key's live sessions in the keyed layout: bounds and accumulators by index, and when the
  * key's timer is queued ([[SessionAlgorithm.Unknown]] after a read from a store).
  */
final class SessionState extends KeyState {
  var starts = new Array[Long](2)
  var ends = new Array[Long](2)
  var accumulators = new Array[Array[Accumulator]](2)
  var count = 0
  var timer: Long = SessionAlgorithm.NoTimer

  def isEmpty: Boolean = count == 0
  def numEntries: Int = count
  override def reset(): Unit = timer = SessionAlgorithm.NoTimer

  /** As a read from a store leaves it: the key's timer is not known. */
  def forgetTimer(): Unit = timer = SessionAlgorithm.Unknown

  def append(start: Long, end: Long, accs: Array[Accumulator]): Int = {
    if (count == starts.length) {
      starts = java.util.Arrays.copyOf(starts, count * 2)
      ends = java.util.Arrays.copyOf(ends, count * 2)
      accumulators = java.util.Arrays.copyOf(accumulators, count * 2)
    }
    starts(count) = start
    ends(count) = end
    accumulators(count) = accs
    count += 1
    count - 1
  }
}

/** The session algorithm over per-key states (Spark's state store, batch, replay, and the local
  * runtime for aggregates that do not pack into longs): one timer per key in the runtime's
  * event-time queue.
  */
final class KeyedSessions(context: WindowContext) extends SessionAlgorithm(context) {
  private val aggregates = context.spec.aggregates.toArray
  private var st: SessionState = _

  val stateKind: Option[StateKind] = Some(new SessionStateKind(context.spec.aggregates))

  /** The key's live sessions, each with its running aggregates. */
  override def openWindows(state: KeyState, eventTimers: TimerQueue): Seq[OpenWindow] = {
    val s = state.asInstanceOf[SessionState]
    (0 until s.count)
      .map { i =>
        val results = OpenWindow.resultsOf(s.accumulators(i), context.spec.ansi)
        OpenWindow(TimeWindow(s.starts(i), s.ends(i)), results, -1L, 0L, false, false, Nil)
      }
      .sortBy(o => (o.window.maxTimestamp, o.window.toString))
  }

  protected def focus(): Unit = st = context.state.asInstanceOf[SessionState]
  protected def count: Int = st.count
  protected def start(i: Int): Long = st.starts(i)
  protected def end(i: Int): Long = st.ends(i)
  protected def setBounds(i: Int, start: Long, end: Long): Unit = { st.starts(i) = start; st.ends(i) = end }
  protected def open(start: Long, end: Long): Int = st.append(start, end, Accumulator.fresh(aggregates))

  protected def absorb(into: Int, from: Int): Unit = {
    Accumulator.mergeAll(st.accumulators(into), st.accumulators(from))
    st.starts(into) = math.min(st.starts(into), st.starts(from))
    st.ends(into) = math.max(st.ends(into), st.ends(from))
    st.starts(from) = Long.MinValue // merged away: dropped by compact
  }

  protected def compact(into: Int): Int = {
    var kept = 0
    var moved = into
    var i = 0
    while (i < st.count) {
      if (st.starts(i) != Long.MinValue) {
        if (i == into) moved = kept
        st.starts(kept) = st.starts(i)
        st.ends(kept) = st.ends(i)
        st.accumulators(kept) = st.accumulators(i)
        kept += 1
      }
      i += 1
    }
    java.util.Arrays.fill(st.accumulators.asInstanceOf[Array[AnyRef]], kept, st.count, null)
    st.count = kept
    moved
  }

  protected def add(i: Int, record: Record, timestamp: Long): Unit =
    Accumulator.addAll(st.accumulators(i), record, timestamp)

  protected def results(i: Int): Array[Any] = Accumulator.results(st.accumulators(i))

  protected def remove(i: Int): Unit = {
    val last = st.count - 1
    st.starts(i) = st.starts(last)
    st.ends(i) = st.ends(last)
    st.accumulators(i) = st.accumulators(last)
    st.accumulators(last) = null
    st.count = last
  }

  protected def timer: Long = st.timer
  protected def setTimer(time: Long): Unit = st.timer = time

  protected def queueTimer(time: Long): Unit = {
    st.timer = time
    context.timers.registerEventTime(time, GlobalWindow)
  }

  protected def touched(): Unit = context.stateTouched()

  // A timer that finds nothing due still moves the key's timer on, so none is skipped here.
  def onTimer(time: Long, window: Window, eventTime: Boolean): Unit = fire(time)
}

/** Session states in the store: each live session's bounds and accumulators. A state read back
  * does not know where its timer is (the timers travel separately).
  */
final class SessionStateKind(aggregates: IndexedSeq[Aggregate]) extends StateKind {
  private val aggs = aggregates.toArray

  def algorithm: Selection.Algorithm = Selection.Algorithm.Session

  def newState(): KeyState = new SessionState

  def write(out: DataOutputStream, state: KeyState): Unit = {
    val st = state.asInstanceOf[SessionState]
    out.writeInt(st.count)
    for (i <- 0 until st.count) {
      out.writeLong(st.starts(i))
      out.writeLong(st.ends(i))
      ValueCodec.writeAccumulators(out, st.accumulators(i))
    }
  }

  def read(in: DataInputStream): KeyState = {
    val st = new SessionState
    for (_ <- 0 until in.readInt()) {
      val start = in.readLong()
      val end = in.readLong()
      st.append(start, end, ValueCodec.readAccumulators(in, aggs))
    }
    st.forgetTimer()
    st
  }

  def fromLegacy(legacy: LegacyState): KeyState = {
    if (!legacy.onlyContents)
      throw new IllegalStateException(
        "this key's session state was written by an older sparkwin (generic merging windows): " +
          "restart the query from a new checkpoint"
      )
    val st = new SessionState
    legacy.contents.forEach { (w, c) =>
      val session = w.asInstanceOf[TimeWindow]
      st.append(session.start, session.end, c.accumulators)
    }
    st.forgetTimer()
    st
  }
}
