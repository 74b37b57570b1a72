package sparkwin.operator

import sparkwin.core._
import sparkwin.core.agg.PackedAggregates
import sparkwin.operator.store._

import sparkwin.core.window.{SessionWindows, TimeWindow}

/** [[SessionWindowOperator]] for the local runtime, where one backend holds every key: the same
  * panes in the same order, late routing and data counters, with state in primitive arrays by
  * key id instead of per-key states, maps and timer objects.
  *
  * A key's live sessions are one `long[]` of (start, end, aggregate slots) entries, usually one
  * entry. Its timer follows the same rule as in [[SessionWindowOperator]] (one per key, at or
  * before the end of its earliest session, left behind by a growing session) and lives in a
  * binary heap of (time, key id) pairs, the order timers of one instant fire in. A key's
  * superseded timers stay in the heap and are skipped when they surface. It needs dense key
  * ids ([[DenseKeyedBackend]]) and aggregates that pack into longs ([[PackedAggregates]]).
  */
final class PackedSessionOperator(val spec: OperatorSpec, backend: DenseKeyedBackend, output: Emitter)
    extends Operator
    with EventTimeClocks
    with HeldState {
  require(
    PackedSessionOperator.packs(spec),
    s"PackedSessionOperator needs count, sum or avg sessions, got $spec"
  )

  private val gap = spec.assigner.asInstanceOf[SessionWindows].gap
  private val packed = new PackedAggregates(spec.aggregates.toArray)
  private val width = 2 + packed.slots // an entry: start, end, slots
  private val onTimePane = PaneInfo(PaneTiming.OnTime, 0L, isFirst = true, isLast = true)

  val metrics = new OperatorMetrics
  backend.hold(this)

  // By key id: the sessions, how many there are, and the time of the key's timer.
  private var sessions = new Array[Array[Long]](16)
  private var counts = new Array[Int](16)
  private var timerAt = Array.fill(16)(NoTimer)
  private val timers = new sparkwin.core.timer.TimeHeap
  // Read only by tests and the harness: counted from `counts`, not kept per change.
  def numHeldEntries: Int = counts.sum
  def numHeldKeys: Int = counts.count(_ > 0)

  private def NoTimer = Long.MaxValue

  // ---------------------------------------------------------------------------------------
  // Elements

  def processElement(record: Record, timestamp: Long): Unit = {
    metrics.elementsIn += 1
    val id = backend.currentKeyId.toInt
    if (id >= counts.length) grow(id)
    val end = timestamp + gap
    var block = sessions(id)
    var at = -1
    if (counts(id) == 1 && block(0) <= timestamp && block(1) >= timestamp) {
      // The key's only session, touched: the element lands inside it or extends it.
      at = 0
      if (block(1) < end) { block(1) = end; countGrowth(1) }
    } else at = place(id, timestamp, end)
    if (at < 0) {
      metrics.late(spec.lateOutput, output, backend.currentKey, record, timestamp)
    } else {
      block = sessions(id)
      packed.add(block, at + 2, record)
    }
  }

  /** A session grew by absorbing `touched` others (or itself, grown): one window opened, the
    * touched ones merged into it and gone.
    */
  private def countGrowth(touched: Int): Unit = {
    metrics.windowsOpened += 1
    metrics.windowsMerged += touched
    metrics.windowsCleaned += touched
  }

  /** The general case: the sessions `[start, end)` touches merge with it into one; with none,
    * it opens a session unless it is late. Returns the entry's offset (-1: late).
    */
  private def place(id: Int, start: Long, end: Long): Int = {
    val block = sessions(id)
    val n = counts(id)
    var into = -1
    var touched = 0
    var i = 0
    while (i < n) {
      val at = i * width
      if (block(at) <= end && block(at + 1) >= start) {
        // Live sessions never touch each other: one covering the element is the only one.
        if (block(at) <= start && block(at + 1) >= end) return at
        touched += 1
        if (into < 0) into = at
        else {
          packed.merge(block, into + 2, block, at + 2)
          block(into) = math.min(block(into), block(at))
          block(into + 1) = math.max(block(into + 1), block(at + 1))
          block(at) = Long.MinValue // merged away: removed below
        }
      }
      i += 1
    }
    if (touched == 0) {
      if (end - 1 <= watermark) return -1 // its session would have fired already
      val at = append(id, start, end)
      metrics.windowsOpened += 1
      if (end - 1 < timerAt(id)) queueTimer(id, end - 1)
      return at
    }
    block(into) = math.min(block(into), start)
    block(into + 1) = math.max(block(into + 1), end)
    countGrowth(touched)
    if (touched == 1) into else compact(id, into)
  }

  private def append(id: Int, start: Long, end: Long): Int = {
    val n = counts(id)
    var block = sessions(id)
    if (block == null || block.length < (n + 1) * width) {
      block = java.util.Arrays.copyOf(if (block == null) new Array[Long](0) else block, (n + 1) * width * 2)
      sessions(id) = block
    }
    val at = n * width
    block(at) = start
    block(at + 1) = end
    java.util.Arrays.fill(block, at + 2, at + width, 0L)
    counts(id) = n + 1
    at
  }

  /** Drops the entries merged away (start Long.MinValue); returns where `into` moved to. */
  private def compact(id: Int, into: Int): Int = {
    val block = sessions(id)
    val n = counts(id)
    var kept = 0
    var moved = into
    var i = 0
    while (i < n) {
      val at = i * width
      if (block(at) != Long.MinValue) {
        if (at == into) moved = kept * width
        if (kept != i) System.arraycopy(block, at, block, kept * width, width)
        kept += 1
      }
      i += 1
    }
    counts(id) = kept
    moved
  }

  private def queueTimer(id: Int, time: Long): Unit = {
    timerAt(id) = time
    timers.push(time, id)
    metrics.timersRegistered += 1
  }

  private def grow(id: Int): Unit = {
    val size = math.max(id + 1, counts.length * 2)
    sessions = java.util.Arrays.copyOf(sessions, size)
    counts = java.util.Arrays.copyOf(counts, size)
    val old = timerAt.length
    timerAt = java.util.Arrays.copyOf(timerAt, size)
    java.util.Arrays.fill(timerAt, old, size, NoTimer)
  }

  // ---------------------------------------------------------------------------------------
  // Time

  def advanceWatermark(wm: Long): Unit = {
    if (wm < watermark) return
    watermark = wm
    while (!timers.isEmpty && timers.minTime <= wm) {
      val time = timers.minTime
      val id = timers.minId
      timers.pop()
      if (timerAt(id) == time) fire(id, time) // else superseded
    }
  }

  /** The key's earliest session fires and goes if it ends by `time`; the timer moves to the
    * earliest session left.
    */
  private def fire(id: Int, time: Long): Unit = {
    val block = sessions(id)
    val n = counts(id)
    var due = -1
    var next = -1
    var i = 0
    while (i < n) {
      val at = i * width
      if (block(at + 1) - 1 <= time) { if (due < 0 || block(at + 1) < block(due + 1)) due = at }
      else if (next < 0 || block(at + 1) < block(next + 1)) next = at
      i += 1
    }
    timerAt(id) = NoTimer
    if (due >= 0) {
      val window = TimeWindow(block(due), block(due + 1))
      val values = packed.results(block, due + 2)
      val last = (n - 1) * width
      if (due != last) {
        System.arraycopy(block, last, block, due, width)
        if (next == last) next = due
      }
      counts(id) = n - 1
      backend.switchTo(id.toLong)
      metrics.panesFired += 1
      metrics.windowsCleaned += 1
      output.emitResult(backend.currentKey, window, onTimePane, values)
    }
    if (next >= 0) queueTimer(id, block(next + 1) - 1)
  }
}

object PackedSessionOperator {

  /** Fixed-gap event-time sessions with the default trigger whose aggregates pack into longs. */
  def packs(spec: OperatorSpec): Boolean = spec.sessionFastPath && PackedAggregates.packs(spec)
}
