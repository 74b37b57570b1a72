package sparkwin.operator.slice

import sparkwin.core.Record
import sparkwin.core.agg.{Accumulator, Aggregate}

/** A key's aggregate of the slices of its next window, kept between firings so a window's result
  * costs the same whatever the number of its slices (as Scotty and FiBA keep theirs).
  *
  * It holds exactly the key's slices that start before `covered`, the end of the last window it
  * gave: firing the window ending at `end` takes in the slices in `[covered, end)` (the
  * entering ones), and the slices a fired window leaves behind are taken out as they go
  * (`dropping`). A key's windows fire in order of end and each fired window is a prefix of the
  * key's slices (those before it are gone), so what it holds then is that window's pane. Every
  * change to a slice it holds must reach it (`added`, `inserted`), out-of-order elements
  * included.
  *
  * It is a cache: the store keeps only the slices, and a state read back builds it anew at its
  * first firing from the slices themselves, so the state's format does not change.
  */
private[slice] abstract class WindowTotal {

  /** It holds the key's slices starting before this. */
  final var covered: Long = Long.MinValue

  /** The slice at `i` (before `covered`) took `record`, or `partial` when `record` is null. */
  def added(st: SliceState, i: Int, record: Record, ts: Long, partial: Array[Accumulator]): Unit

  /** A new, empty slice is at `i` (before `covered`). */
  def inserted(i: Int): Unit

  /** The results of the window ending at `end` (`covered` or later), which holds at least one
    * slice.
    */
  def fire(st: SliceState, end: Long): Array[Any]

  /** The `n` oldest slices are about to go. */
  def dropping(st: SliceState, n: Int): Unit
}

private[slice] object WindowTotal {

  /** Subtraction when every aggregate undoes its merge exactly, else two stacks. */
  def apply(aggregates: Array[Aggregate]): WindowTotal =
    if (aggregates.forall(_.invertible)) new RunningTotal(aggregates) else new TwoStacks(aggregates)
}

/** Invertible aggregates (count, long sums): one running total, the entering slices added and
  * the leaving ones subtracted, and an element reaching a slice it holds added to it as well.
  */
private[slice] final class RunningTotal(aggregates: Array[Aggregate]) extends WindowTotal {
  private val total = Accumulator.fresh(aggregates)

  def added(st: SliceState, i: Int, record: Record, ts: Long, partial: Array[Accumulator]): Unit =
    if (record != null) Accumulator.addAll(total, record, ts) else Accumulator.mergeAll(total, partial)

  def inserted(i: Int): Unit = () // empty: nothing to add

  def fire(st: SliceState, end: Long): Array[Any] = {
    var i = st.from(covered)
    while (i < st.count && st.start(i) < end) { Accumulator.mergeAll(total, st.accumulators(i)); i += 1 }
    covered = end
    Accumulator.results(total)
  }

  def dropping(st: SliceState, n: Int): Unit = {
    var i = 0
    while (i < n && st.start(i) < covered) { Accumulator.subtractAll(total, st.accumulators(i)); i += 1 }
  }
}

/** Aggregates that only merge (min, max, first, last, doubles...): the two stacks of a sliding
  * aggregate over the key's held slices, merged in slice order so that order-sensitive merges
  * (ties kept by the earlier slice) give what one pass over the slices gives.
  *
  * The front is the oldest `front` slices, each with the merge of itself and every later front
  * slice (`suffix`); the back is the merge of the held slices after them (`back`). A window is
  * the front's first suffix then the back; slices leave from the front, and when it is empty the
  * held slices become the new front, each merged once per flip. A change to a front slice
  * redoes the suffixes up to it, a change to a back slice the back, at the next firing; a slice
  * inserted into the front empties it (the next firing flips).
  */
private[slice] final class TwoStacks(aggregates: Array[Aggregate]) extends WindowTotal {
  private var suffix = new Array[Array[Accumulator]](16)
  private var head = 0 // suffix(head + i) is slice i's
  private var front = 0
  private var staleFront = -1 // suffixes 0 to this are out of date
  private var back = Accumulator.fresh(aggregates)
  private var backSlices = 0 // back holds slices [front, front + backSlices)
  private var staleBack = false

  def added(st: SliceState, i: Int, record: Record, ts: Long, partial: Array[Accumulator]): Unit =
    if (i < front) staleFront = math.max(staleFront, i) else staleBack = true

  def inserted(i: Int): Unit =
    if (i < front) clearFront() else backSlices += 1 // an empty slice changes no merge

  def fire(st: SliceState, end: Long): Array[Any] = {
    var i = st.from(covered)
    val held = { var j = i; while (j < st.count && st.start(j) < end) j += 1; j }
    covered = end
    if (front == 0) flip(st, held)
    else if (staleBack) {
      back = Accumulator.fresh(aggregates)
      mergeRun(back, st, front, held)
      staleBack = false
    } else mergeRun(back, st, i, held)
    backSlices = held - front
    if (staleFront >= 0) {
      i = staleFront
      while (i >= 0) { suffix(head + i) = suffixOf(st, i); i -= 1 }
      staleFront = -1
    }
    val out = Accumulator.fresh(aggregates)
    if (front > 0) Accumulator.mergeAll(out, suffix(head))
    if (backSlices > 0) Accumulator.mergeAll(out, back)
    Accumulator.results(out)
  }

  def dropping(st: SliceState, n: Int): Unit =
    if (n >= front) {
      // Past the front, the back loses slices it cannot give back: the next firing flips.
      if (n > front) staleBack = true
      clearFront()
    } else if (n > 0) {
      java.util.Arrays.fill(suffix.asInstanceOf[Array[AnyRef]], head, head + n, null)
      head += n
      front -= n
      staleFront -= n
      if (staleFront < -1) staleFront = -1
    }

  /** Every held slice (`held` of them) becomes the front; the back starts empty. */
  private def flip(st: SliceState, held: Int): Unit = {
    clearFront()
    if (suffix.length < held) suffix = new Array[Array[Accumulator]](math.max(held, 2 * suffix.length))
    front = held
    var i = held - 1
    while (i >= 0) { suffix(i) = suffixOf(st, i); i -= 1 }
    back = Accumulator.fresh(aggregates)
    staleBack = false
  }

  /** Slice `i` merged with the front's later slices (their suffix, up to date). */
  private def suffixOf(st: SliceState, i: Int): Array[Accumulator] = {
    val own = Accumulator.fresh(aggregates)
    Accumulator.mergeAll(own, st.accumulators(i))
    if (i + 1 < front) Accumulator.mergeAll(own, suffix(head + i + 1))
    own
  }

  private def mergeRun(into: Array[Accumulator], st: SliceState, from: Int, until: Int): Unit = {
    var i = from
    while (i < until) { Accumulator.mergeAll(into, st.accumulators(i)); i += 1 }
  }

  private def clearFront(): Unit = {
    java.util.Arrays.fill(suffix.asInstanceOf[Array[AnyRef]], head, head + front, null)
    head = 0
    front = 0
    staleFront = -1
  }
}
