package sparkwin.operator.slice

import java.io.{DataInputStream, DataOutputStream}

import sparkwin.core.Record
import sparkwin.core.agg.{Accumulator, Aggregate}
import sparkwin.core.timer.TimerQueue
import sparkwin.core.window.{TimeWindow, Window}
import sparkwin.operator.{OpenWindow, Selection, WindowContext}
import sparkwin.operator.store._

/** A key's slices in the keyed layout, in order of start: slice `starts(i)` holds `accumulators(i)`
  * for `i < count`. A key's slices mostly arrive in time order and leave oldest first, so
  * arrays beat a hash map: a new slice is appended, a window's slices are a run to merge, and
  * the slices a fired window leaves behind are a prefix. `hot` is where the key's last element
  * went, so a run of elements in one slice skips the search.
  */
final class SliceState extends KeyState {
  private var _starts = new Array[Long](4)
  private var _accumulators = new Array[Array[Accumulator]](4)
  private var _count = 0
  var hot = -1

  /** The aggregate of the slices of the key's next window, between firings (null: none yet). */
  private[slice] var total: WindowTotal = null

  def isEmpty: Boolean = _count == 0
  def numEntries: Int = _count
  def count: Int = _count
  def start(i: Int): Long = _starts(i)
  def accumulators(i: Int): Array[Accumulator] = _accumulators(i)
  override def reset(): Unit = { hot = -1; total = null }

  /** The slice starts, oldest first. */
  def starts: Seq[Long] = _starts.take(_count).toSeq

  /** The index of the first slice starting at or after `s` (`count`: none). */
  def from(s: Long): Int =
    if (_count == 0 || _starts(_count - 1) < s) _count // the common case: a new latest slice
    else {
      var lo = 0
      var hi = _count - 1
      while (lo < hi) {
        val mid = (lo + hi) >>> 1
        if (_starts(mid) < s) lo = mid + 1 else hi = mid
      }
      lo
    }

  /** Puts slice `s` at index `at` (its place: `from(s)`). */
  def insert(at: Int, s: Long, accumulators: Array[Accumulator]): Unit = {
    if (_count == _starts.length) {
      _starts = java.util.Arrays.copyOf(_starts, _count * 2)
      _accumulators = java.util.Arrays.copyOf(_accumulators, _count * 2)
    }
    System.arraycopy(_starts, at, _starts, at + 1, _count - at)
    System.arraycopy(_accumulators, at, _accumulators, at + 1, _count - at)
    _starts(at) = s
    _accumulators(at) = accumulators
    _count += 1
    if (hot >= at) hot += 1
    if (total != null && s < total.covered) total.inserted(at)
  }

  /** Adds slice `s`, replacing one with the same start (reading a store: any order). */
  def put(s: Long, accumulators: Array[Accumulator]): Unit = {
    val at = from(s)
    if (at < _count && _starts(at) == s) _accumulators(at) = accumulators
    else insert(at, s, accumulators)
  }

  /** Drops the `n` oldest slices. */
  def dropOldest(n: Int): Unit =
    if (n > 0) {
      System.arraycopy(_starts, n, _starts, 0, _count - n)
      System.arraycopy(_accumulators, n, _accumulators, 0, _count - n)
      java.util.Arrays.fill(_accumulators.asInstanceOf[Array[AnyRef]], _count - n, _count, null)
      _count -= n
      hot = if (hot >= n) hot - n else -1
    }
}

/** The sliced algorithm over per-key states (Spark's state store, batch and replay): a key has
  * at most one pending timer, at the end of the earliest window that holds its data, and firing
  * a window queues the key's next one.
  */
final class KeyedSlices(context: WindowContext) extends SliceAlgorithm(context) {
  private val aggregates = context.spec.aggregates.toArray

  val stateKind: Option[StateKind] = Some(new SliceStateKind(context.spec.aggregates, width))

  /** Windows of this many slices or fewer merge them at firing; longer ones keep a running
    * [[WindowTotal]] per key, whose firing costs the same whatever their length.
    */
  private val keepsTotals = size / width > KeyedSlices.MergedSlicesAtMost

  def processElement(record: Record, timestamp: Long): Unit = {
    val s = grid.sliceOf(timestamp)
    if (lateSlice(s)) context.late(record, timestamp)
    else {
      val st = context.state.asInstanceOf[SliceState]
      val i = sliceIndex(st, s)
      Accumulator.addAll(st.accumulators(i), record, timestamp)
      val total = st.total
      if (total != null && s < total.covered) total.added(st, i, record, timestamp, null)
    }
  }

  override def processPartial(ts: Long, partial: Array[Accumulator], count: Long): Unit = {
    val s = grid.sliceOf(ts)
    if (lateSlice(s)) context.lateGroup(count)
    else {
      val st = context.state.asInstanceOf[SliceState]
      val i = sliceIndex(st, s)
      Accumulator.mergeAll(st.accumulators(i), partial)
      val total = st.total
      if (total != null && s < total.covered) total.added(st, i, null, ts, partial)
    }
  }

  /** The index of the key's slice `s`, created (with its windows and timer) if new. */
  private def sliceIndex(st: SliceState, s: Long): Int = {
    // Most elements of a key land in the slice its previous element did.
    if (st.hot >= 0 && st.start(st.hot) == s) return st.hot
    val at = st.from(s)
    if (at == st.count || st.start(at) != s) {
      // The nearest slices before and after the new one say which of its windows are new.
      countOpened(
        s,
        if (at > 0) st.start(at - 1) else Long.MinValue,
        if (at < st.count) st.start(at) else Long.MaxValue
      )
      queueTimer(grid.firstLiveEnd(s, context.currentWatermark))
      st.insert(at, s, Accumulator.fresh(aggregates))
    }
    st.hot = at
    at
  }

  private def queueTimer(end: Long): Unit =
    context.timers.registerEventTime(end - 1, TimeWindow(end - size, end))

  def onTimer(time: Long, window: Window, eventTime: Boolean): Unit = fire(window.asInstanceOf[TimeWindow])

  /** The window's pane is the merge of its slices (a run of the key's sorted slices), or the
    * key's running total of them; slices no later window needs go (a prefix), and the key's
    * next window with data gets the timer.
    */
  private def fire(window: TimeWindow): Unit = {
    val st = context.state.asInstanceOf[SliceState]
    val inWindow = st.from(window.start)
    val any = inWindow < st.count && st.start(inWindow) < window.end
    if (keepsTotals && inWindow == 0 && (st.total == null || st.total.covered <= window.end)) {
      if (any) {
        if (st.total == null) st.total = WindowTotal(aggregates)
        context.emitFinal(window, st.total.fire(st, window.end))
      }
    } else {
      // Not the next window of a prefix (no timer asks for that today): merge, start over.
      st.total = null
      if (any) context.emitFinal(window, merged(st, inWindow, window.end))
    }
    val leaving = st.from(window.start + slide) // later windows start there or later
    if (st.total != null) st.total.dropping(st, leaving)
    st.dropOldest(leaving)
    if (!st.isEmpty) queueTimer(math.max(grid.firstEnd(st.start(0)), window.end + slide))
    context.stateTouched()
  }

  /** Every window that holds one of the key's slices and has not fired yet: from the one its
    * timer waits for (a key's windows fire in order of their ends) to the last of its last slice.
    */
  override def openWindows(state: KeyState, eventTimers: TimerQueue): Seq[OpenWindow] = {
    val st = state.asInstanceOf[SliceState]
    if (st.isEmpty) return Seq.empty
    val next = if (eventTimers.isEmpty) grid.firstEnd(st.start(0)) else eventTimers.nextTime + 1
    val ends = new java.util.TreeSet[java.lang.Long]()
    var i = 0
    while (i < st.count) {
      var e = grid.firstEnd(st.start(i))
      while (e <= grid.lastEnd(st.start(i))) { if (e >= next) ends.add(e); e += slide }
      i += 1
    }
    val out = Seq.newBuilder[OpenWindow]
    ends.forEach { e =>
      val from = st.from(e - size)
      if (from < st.count && st.start(from) < e) {
        val accs = Accumulator.fresh(aggregates)
        var j = from
        while (j < st.count && st.start(j) < e) { Accumulator.mergeAll(accs, st.accumulators(j)); j += 1 }
        out += OpenWindow(
          TimeWindow(e - size, e),
          OpenWindow.resultsOf(accs, context.spec.ansi),
          -1L,
          0L,
          false,
          false,
          Nil
        )
      }
    }
    out.result()
  }

  /** The results of the key's slices from index `i` that start before `end`, merged in order. */
  private def merged(st: SliceState, from: Int, end: Long): Array[Any] = {
    var i = from
    var merged: Array[Accumulator] = null
    var single: Array[Accumulator] = null
    while (i < st.count && st.start(i) < end) {
      val accs = st.accumulators(i)
      if (single == null) single = accs
      else {
        if (merged == null) {
          merged = Accumulator.fresh(aggregates)
          Accumulator.mergeAll(merged, single)
        }
        Accumulator.mergeAll(merged, accs)
      }
      i += 1
    }
    Accumulator.results(if (merged == null) single else merged)
  }
}

object KeyedSlices {

  /** The most slices a window merges at its firing (see `keepsTotals`). */
  val MergedSlicesAtMost = 2L
}

/** Sliced states in the store: the slices' starts and accumulators. */
final class SliceStateKind(aggregates: IndexedSeq[Aggregate], width: Long) extends StateKind {
  private val aggs = aggregates.toArray

  def algorithm: Selection.Algorithm = Selection.Algorithm.Sliced

  def newState(): KeyState = new SliceState

  def write(out: DataOutputStream, state: KeyState): Unit = {
    val st = state.asInstanceOf[SliceState]
    out.writeLong(width)
    out.writeInt(st.count)
    var i = 0
    while (i < st.count) {
      out.writeLong(st.start(i))
      ValueCodec.writeAccumulators(out, st.accumulators(i))
      i += 1
    }
  }

  def read(in: DataInputStream): KeyState = {
    val stored = in.readLong()
    if (stored != width)
      throw new sparkwin.core.IncompatibleStateException(
        s"this checkpoint's windows are cut into slices of $stored ms, this pipeline's into $width " +
          "ms: its window size or slide changed; start the query from a new checkpoint"
      )
    val st = new SliceState
    for (_ <- 0 until in.readInt()) {
      val s = in.readLong()
      st.put(s, ValueCodec.readAccumulators(in, aggs))
    }
    st
  }

  def fromLegacy(legacy: LegacyState): KeyState = {
    if (!legacy.onlyContents)
      throw new sparkwin.core.IncompatibleStateException(
        "this checkpoint's state was written for windows with triggers or lateness, but the " +
          "pipeline now runs on sliced windows: start the query from a new checkpoint"
      )
    val st = new SliceState
    legacy.contents.forEach { (w, c) =>
      val slice = w match {
        case t: TimeWindow if t.end - t.start == width => t
        case other =>
          throw new sparkwin.core.IncompatibleStateException(
            if (legacy.version < 3)
              s"this checkpoint keeps the whole window $other, written by a sparkwin older than " +
                "0.1.1; this version keeps sliding windows as slices and cannot resume it: let " +
                "the old version finish its open windows, or start the query from a new checkpoint"
            else
              s"this checkpoint keeps $other where this pipeline keeps slices of $width ms: its " +
                "windows changed; start the query from a new checkpoint"
          )
      }
      st.put(slice.start, c.accumulators)
    }
    st
  }
}
