package sparkwin.operator.session

import sparkwin.core.Record
import sparkwin.core.agg.PackedAggregates
import sparkwin.core.window.Window
import sparkwin.operator.WindowContext
import sparkwin.operator.store.{HeldState, StateKind}

/** The session algorithm in the packed layout (the local runtime, where one backend holds every
  * key by dense id): a key's sessions are one `long[]` of (start, end, aggregate slots) entries
  * ([[PackedAggregates]]: count, integral and fractional sum, avg), and its timer is a key
  * timer of the shell's [[sparkwin.operator.TimerService]]: a (time, key id) pair in a binary
  * heap, the order timers of one instant fire in. A key's superseded timers stay queued and are
  * skipped when they fire.
  */
final class PackedSessions(context: WindowContext) extends SessionAlgorithm(context) with HeldState {
  import SessionAlgorithm.NoTimer

  private val packed = new PackedAggregates(context.spec.aggregates.toArray)
  private val width = 2 + packed.slots // an entry: start, end, slots

  val stateKind: Option[StateKind] = None
  context.hold(this)

  // By key id: the sessions, how many there are, and the time of the key's timer.
  private var sessions = new Array[Array[Long]](16)
  private var counts = new Array[Int](16)
  private var timerAt = Array.fill(16)(NoTimer)
  // The current key (after focus) and its block.
  private var id = 0
  private var block: Array[Long] = _

  // Read only by tests and the harness: counted from `counts`, not kept per change.
  def numHeldEntries: Int = counts.sum
  def numHeldKeys: Int = counts.count(_ > 0)

  protected def focus(): Unit = {
    id = context.currentKeyId.toInt
    if (id >= counts.length) grow(id)
    block = sessions(id)
  }

  protected def count: Int = counts(id)
  protected def start(i: Int): Long = block(i * width)
  protected def end(i: Int): Long = block(i * width + 1)
  protected def setBounds(i: Int, start: Long, end: Long): Unit = {
    block(i * width) = start
    block(i * width + 1) = end
  }

  protected def open(start: Long, end: Long): Int = {
    val n = counts(id)
    if (block == null || block.length < (n + 1) * width) {
      block = java.util.Arrays.copyOf(if (block == null) new Array[Long](0) else block, (n + 1) * width * 2)
      sessions(id) = block
    }
    val at = n * width
    block(at) = start
    block(at + 1) = end
    java.util.Arrays.fill(block, at + 2, at + width, 0L)
    counts(id) = n + 1
    n
  }

  protected def absorb(into: Int, from: Int): Unit = {
    val a = into * width
    val b = from * width
    packed.merge(block, a + 2, block, b + 2)
    block(a) = math.min(block(a), block(b))
    block(a + 1) = math.max(block(a + 1), block(b + 1))
    block(b) = Long.MinValue // merged away: dropped by compact
  }

  protected def compact(into: Int): Int = {
    val n = counts(id)
    var kept = 0
    var moved = into
    var i = 0
    while (i < n) {
      val at = i * width
      if (block(at) != Long.MinValue) {
        if (i == into) moved = kept
        if (kept != i) System.arraycopy(block, at, block, kept * width, width)
        kept += 1
      }
      i += 1
    }
    counts(id) = kept
    moved
  }

  protected def add(i: Int, record: Record, timestamp: Long): Unit = packed.add(block, i * width + 2, record)

  protected def results(i: Int): Array[Any] = packed.results(block, i * width + 2)

  protected def remove(i: Int): Unit = {
    val last = counts(id) - 1
    if (i != last) System.arraycopy(block, last * width, block, i * width, width)
    counts(id) = last
  }

  protected def timer: Long = timerAt(id)
  protected def setTimer(time: Long): Unit = timerAt(id) = time

  protected def queueTimer(time: Long): Unit = {
    timerAt(id) = time
    context.timers.registerKeyTimer(time)
  }

  protected def touched(): Unit = ()

  def onTimer(time: Long, window: Window, eventTime: Boolean): Unit = {
    val key = context.currentKeyId.toInt
    if (timerAt(key) == time) fire(time) // else superseded by an earlier one
  }

  private def grow(id: Int): Unit = {
    val size = math.max(id + 1, counts.length * 2)
    sessions = java.util.Arrays.copyOf(sessions, size)
    counts = java.util.Arrays.copyOf(counts, size)
    val old = timerAt.length
    timerAt = java.util.Arrays.copyOf(timerAt, size)
    java.util.Arrays.fill(timerAt, old, size, NoTimer)
  }
}
