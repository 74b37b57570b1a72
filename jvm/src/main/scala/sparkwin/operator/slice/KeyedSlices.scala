package sparkwin.operator.slice

import java.io.{DataInputStream, DataOutputStream}
import java.util.{HashMap => JMap}

import sparkwin.core.Record
import sparkwin.core.agg.{Accumulator, Aggregate}
import sparkwin.core.timer.Timer
import sparkwin.core.window.TimeWindow
import sparkwin.operator.{Selection, WindowOperator}
import sparkwin.operator.store._

/** A key's slices in the keyed layout: accumulators by slice (a slice keyed as its own time
  * window), and the slice its last element went to, so a run of elements in one slice skips
  * the map lookup.
  */
final class SliceState extends KeyState {
  val slices = new JMap[TimeWindow, WindowContents]()
  var hotSlice: Long = 0L
  var hotContents: WindowContents = _

  def isEmpty: Boolean = slices.isEmpty
  def numEntries: Int = slices.size
  override def reset(): Unit = { hotSlice = 0L; hotContents = null }
}

/** The sliced algorithm over per-key states (Spark's state store, batch and replay): a key has
  * at most one pending timer, at the end of the earliest window that holds its data, and firing
  * a window queues the key's next one.
  */
final class KeyedSlices(op: WindowOperator) extends SliceAlgorithm(op) {
  private val backend = op.backend
  private val aggregates = op.spec.aggregates.toArray

  val stateKind: Option[StateKind] = Some(new SliceStateKind(op.spec.aggregates, width))

  def processElement(record: Record, timestamp: Long): Unit = {
    val s = grid.sliceOf(timestamp)
    if (lateSlice(s)) op.late(record, timestamp)
    else Accumulator.addAll(sliceAccumulators(backend.state.asInstanceOf[SliceState], s), record, timestamp)
  }

  override def processPartial(ts: Long, partial: Array[Accumulator], count: Long): Unit = {
    val s = grid.sliceOf(ts)
    if (lateSlice(s)) op.lateGroup(count)
    else Accumulator.mergeAll(sliceAccumulators(backend.state.asInstanceOf[SliceState], s), partial)
  }

  /** The accumulators of the key's slice `s`, created (with its windows and timer) if new. */
  private def sliceAccumulators(st: SliceState, s: Long): Array[Accumulator] = {
    // Most elements of a key land in the slice its previous element did.
    if (st.hotContents != null && st.hotSlice == s) return st.hotContents.accumulators
    val slice = TimeWindow(s, s + width)
    var c = st.slices.get(slice)
    if (c == null) {
      c = new WindowContents(Accumulator.fresh(aggregates), null)
      openSlice(st, s)
      st.slices.put(slice, c)
    }
    st.hotSlice = s
    st.hotContents = c
    c.accumulators
  }

  /** Counts the windows a new slice opens, and queues the key's timer for its first live one. */
  private def openSlice(st: SliceState, s: Long): Unit = {
    var earlier = Long.MinValue
    var later = Long.MaxValue
    val it = st.slices.keySet.iterator
    while (it.hasNext) {
      val other = it.next().start
      if (other < s && other > earlier) earlier = other
      else if (other > s && other < later) later = other
    }
    countOpened(s, earlier, later)
    queueTimer(grid.firstLiveEnd(s, op.currentWatermark))
  }

  private def queueTimer(end: Long): Unit =
    if (backend.eventTimers.add(Timer(end - 1, backend.currentKeyId, TimeWindow(end - size, end))))
      op.metrics.timersRegistered += 1

  def onWatermark(wm: Long): Unit =
    backend.fireDue(backend.eventTimers, wm)(t => fire(t.window.asInstanceOf[TimeWindow]))

  /** The window's pane is the merge of its slices; slices no later window needs go, and the
    * key's next window with data gets the timer.
    */
  private def fire(window: TimeWindow): Unit = {
    val st = backend.state.asInstanceOf[SliceState]
    val keep = window.start + slide // later windows start here or later
    var merged: Array[Accumulator] = null
    var single: Array[Accumulator] = null
    var next = Long.MaxValue // the earliest slice a later window holds
    val it = st.slices.entrySet.iterator
    while (it.hasNext) {
      val e = it.next()
      val s = e.getKey.start
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
    if (single != null) op.emitFinal(window, Accumulator.results(if (merged == null) single else merged))
    if (next != Long.MaxValue) queueTimer(math.max(grid.firstEnd(next), window.end + slide))
    backend.stateTouched()
  }
}

/** Sliced states in the store: the slices' starts and accumulators. */
final class SliceStateKind(aggregates: IndexedSeq[Aggregate], width: Long) extends StateKind {
  private val aggs = aggregates.toArray

  def algorithm: Selection.Algorithm = Selection.Algorithm.Sliced

  def newState(): KeyState = new SliceState

  def write(out: DataOutputStream, state: KeyState): Unit = {
    val st = state.asInstanceOf[SliceState]
    out.writeLong(width)
    out.writeInt(st.slices.size)
    st.slices.forEach { (slice, c) =>
      out.writeLong(slice.start)
      ValueCodec.writeAccumulators(out, c.accumulators)
    }
  }

  def read(in: DataInputStream): KeyState = {
    val stored = in.readLong()
    if (stored != width)
      throw new IllegalStateException(
        s"this checkpoint's windows are cut into slices of $stored ms, this pipeline's into $width " +
          "ms: its window size or slide changed; start the query from a new checkpoint"
      )
    val st = new SliceState
    for (_ <- 0 until in.readInt()) {
      val s = in.readLong()
      st.slices.put(TimeWindow(s, s + width), new WindowContents(ValueCodec.readAccumulators(in, aggs), null))
    }
    st
  }

  def fromLegacy(legacy: LegacyState): KeyState = {
    if (!legacy.onlyContents)
      throw new IllegalStateException(
        "this checkpoint's state was written for windows with triggers or lateness, but the " +
          "pipeline now runs on sliced windows: start the query from a new checkpoint"
      )
    val st = new SliceState
    legacy.contents.forEach { (w, c) =>
      val slice = w match {
        case t: TimeWindow if t.end - t.start == width => t
        case other =>
          throw new IllegalStateException(
            if (legacy.version < 3)
              s"this checkpoint keeps the whole window $other, written by a sparkwin older than " +
                "0.1.1; this version keeps sliding windows as slices and cannot resume it: let " +
                "the old version finish its open windows, or start the query from a new checkpoint"
            else
              s"this checkpoint keeps $other where this pipeline keeps slices of $width ms: its " +
                "windows changed; start the query from a new checkpoint"
          )
      }
      st.slices.put(slice, c)
    }
    st
  }
}
