package sparkwin.core.timer

import sparkwin.core.window.Window

/** A timer: unique per (key, window, timestamp). `keyId` is the runtime's handle for the key. */
final case class Timer(timestamp: Long, keyId: Long, window: Window) {
  // Queues hash every timer on add, poll and removal; the generic product hash boxes fields.
  override val hashCode: Int = {
    var h = timestamp * 0x9e3779b97f4a7c15L + keyId
    h = (h ^ (h >>> 29)) * 0xbf58476d1ce4e5b9L + window.hashCode
    (h ^ (h >>> 32)).toInt
  }
}

object Timer {

  /** Firing order: by timestamp, then key, then window, so equal timestamps fire stably. */
  implicit val ordering: Ordering[Timer] = new Ordering[Timer] {
    def compare(a: Timer, b: Timer): Int = {
      val c = java.lang.Long.compare(a.timestamp, b.timestamp)
      if (c != 0) c
      else {
        val k = java.lang.Long.compare(a.keyId, b.keyId)
        if (k != 0) k else Window.ordering.compare(a.window, b.window)
      }
    }
  }
}

/** One time domain's timers: deduplicated, deletable, polled in firing order.
  *
  * Timers are grouped by instant: a window grid gives thousands of keys timers at the same few
  * instants, where one ordered tree of all timers would compare down a deep run of equal
  * timestamps on every insert. An instant keeps its timers in a hash set and sorts them once,
  * when it comes due; an instant with a single timer (sessions spread over many) keeps it
  * inline, and one with a few keeps them in a short array. Instants are found by time in a
  * primitive-keyed map and ordered by a heap of their times ([[TimeHeap]]). Polling order is
  * the [[Timer.ordering]] order, exactly as a sorted set gives it.
  */
final class TimerQueue {
  private final class Instant(val time: Long) {
    // Members: one timer inline, a few in a short unsorted array (sessions' ends collide a few
    // at a time), or a hash set once there are many (a window grid's thousands of keys).
    private var one: Timer = _
    private var few: Array[Timer] = _
    private var fewCount = 0
    private var many: java.util.HashSet[Timer] = _
    private var order: Array[Timer] = _ // the members, sorted, once polled (until the next add)
    private var next = 0
    private var skipRemoved = false // a member was removed since `order` was made

    def isEmpty: Boolean =
      if (many != null) many.isEmpty else if (few != null) fewCount == 0 else one == null

    def contains(t: Timer): Boolean =
      if (many != null) many.contains(t) else if (few != null) inFew(t) >= 0 else t == one

    private def inFew(t: Timer): Int = {
      var i = 0
      while (i < fewCount && few(i) != t) i += 1
      if (i < fewCount) i else -1
    }

    private def dropFew(i: Int): Unit = {
      fewCount -= 1
      few(i) = few(fewCount)
      few(fewCount) = null
    }

    def add(t: Timer): Boolean =
      if (many != null) {
        val added = many.add(t)
        if (added) order = null
        added
      } else if (few != null) {
        if (inFew(t) >= 0) false
        else {
          if (fewCount < few.length) { few(fewCount) = t; fewCount += 1 }
          else {
            many = new java.util.HashSet[Timer]()
            var i = 0
            while (i < fewCount) { many.add(few(i)); i += 1 }
            many.add(t)
            few = null
            fewCount = 0
          }
          order = null
          true
        }
      } else if (one == null) { one = t; true }
      else if (one == t) false
      else {
        few = new Array[Timer](TimerQueue.FewTimers)
        few(0) = one
        few(1) = t
        fewCount = 2
        one = null
        true
      }

    // A removal leaves `order` valid: polling skips what is no longer a member.
    def remove(t: Timer): Boolean =
      if (many != null) {
        val removed = many.remove(t)
        if (removed && order != null) skipRemoved = true
        removed
      } else if (few != null) {
        val i = inFew(t)
        if (i >= 0) { dropFew(i); if (order != null) skipRemoved = true }
        i >= 0
      } else if (one != null && one == t) { one = null; true }
      else false

    def first: Timer =
      if (many == null && few == null) one
      else {
        if (order == null) { order = sortedMembers(); next = 0; skipRemoved = false }
        // Membership is checked only once something left the set after the sort.
        if (skipRemoved) while (!contains(order(next))) next += 1
        order(next)
      }

    /** Removes and returns the first timer (the instant is not empty). */
    def poll(): Timer = {
      val t = first
      if (many != null) { many.remove(t); next += 1 }
      else if (few != null) { dropFew(inFew(t)); next += 1 }
      else one = null
      t
    }

    def sorted: Iterator[Timer] =
      if (many == null && few == null) Iterator.single(one) else sortedMembers().iterator

    private def sortedMembers(): Array[Timer] = {
      val all =
        if (many != null) many.toArray(new Array[Timer](many.size))
        else java.util.Arrays.copyOf(few, fewCount)
      TimerQueue.sortInstant(all)
      all
    }
  }

  // Instants by time, and their times in a min-heap of primitives. Sessions give every key its
  // own instant: an ordered tree of boxed times cost a pointer chase per level on every add.
  // The heap is lazy: an instant that empties leaves its time behind, skipped when it surfaces.
  // Both are made on first use, as Spark decodes a queue per key and most stay empty.
  private var instants: scala.collection.mutable.LongMap[Instant] = _
  private var times: TimeHeap = _
  private var count = 0
  private var live = 0 // instants holding timers
  // Timers come in runs at one instant; always one of `instants` (null when dropped).
  private var lastAdded: Instant = _

  private def instant(time: Long, create: Boolean): Instant = {
    if (lastAdded != null && lastAdded.time == time) return lastAdded
    if (instants == null) {
      if (!create) return null
      instants = new scala.collection.mutable.LongMap[Instant](8)
      times = new TimeHeap
    }
    var i = instants.getOrNull(time)
    if (i == null && create) {
      i = new Instant(time)
      instants.update(time, i)
      live += 1
      times.push(time, 0)
    }
    if (i != null) lastAdded = i
    i
  }

  private def dropIfEmpty(i: Instant): Unit =
    if (i.isEmpty) {
      instants -= i.time
      live -= 1
      if (lastAdded eq i) lastAdded = null
      // Deleted timers leave their times behind until they surface: rebuild before they pile up.
      if (times.size > 64 && times.size > 4 * instants.size) {
        val live = instants.keys.toArray
        java.util.Arrays.sort(live)
        times.resetSorted(live)
      }
    }

  /** The earliest instant that holds timers (null when none): times of emptied or repeated
    * instants are dropped from the heap on the way.
    */
  private def first: Instant = {
    if (count == 0) return null
    // A key's own queue mostly holds one instant (its window's end): found without the map, whose
    // arrays a row's call would read from cold memory (a tenth of real-time's loop). The heap's
    // top may then be stale: `pollDue` pops it in the instant's place, and the instant's time,
    // left behind, is skipped as stale ones are.
    if (live == 1 && lastAdded != null) return lastAdded
    while (true) {
      val i = instants.getOrNull(times.minTime)
      if (i != null) return i
      times.pop()
    }
    null
  }

  /** Adds the timer; false when it was already registered (it will still fire once). */
  def add(t: Timer): Boolean = {
    val added = instant(t.timestamp, create = true).add(t)
    if (added) count += 1
    added
  }

  def remove(t: Timer): Boolean = {
    val i = instant(t.timestamp, create = false)
    if (i == null || !i.remove(t)) false
    else { count -= 1; dropIfEmpty(i); true }
  }

  def contains(t: Timer): Boolean = {
    val i = if (instants == null) null else instants.getOrNull(t.timestamp)
    i != null && i.contains(t)
  }

  def isEmpty: Boolean = count == 0

  def size: Int = count

  /** The next timer due at or before `time`, removed from the queue; null when none is due. */
  def pollDue(time: Long): Timer = {
    val i = first
    if (i == null || i.time > time) return null
    val t = i.poll()
    count -= 1
    if (i.isEmpty) {
      times.pop() // the instant is the heap's top: its time goes with it
      dropIfEmpty(i)
    }
    t
  }

  /** The instant of the next timer; Long.MaxValue when there is none. */
  def nextTime: Long = { val i = first; if (i == null) Long.MaxValue else i.time }

  def peek: Option[Timer] = Option(first).map(_.first)

  /** Every timer, in firing order. */
  def iterator: Iterator[Timer] =
    if (count == 0) Iterator.empty
    // A key's own queue (Spark's runtimes encode one with every save of a key's state) holds
    // one instant or a few: the generic copy and boxed sort of them was a twentieth of a
    // real-time task's samples at 100k rows a second.
    else if (instants.size == 1) instants.valuesIterator.next().sorted
    else {
      val all = new Array[Instant](instants.size)
      var n = 0
      instants.foreachValue { i => all(n) = i; n += 1 }
      java.util.Arrays.sort(all, (a: Instant, b: Instant) => java.lang.Long.compare(a.time, b.time))
      all.iterator.flatMap(_.sorted)
    }

  def clear(): Unit = { instants = null; times = null; count = 0; live = 0; lastAdded = null }

  /** Timers of one key (for per-key views and cleanup checks). */
  def ofKey(keyId: Long): Iterator[Timer] = iterator.filter(_.keyId == keyId)
}

object TimerQueue {

  /** Timers an instant keeps in a plain array before it needs a hash set. */
  val FewTimers = 8

  /** Sorts the timers of one instant (equal timestamps) into [[Timer.ordering]] order.
    *
    * An instant of a window grid holds a timer for each of thousands of keys. Sorting those
    * objects with a comparator chases a pointer per comparison; sorting (key id, position)
    * pairs packed into longs does not. Timers of one key (several windows) are then put in
    * window order among themselves.
    */
  def sortInstant(timers: Array[Timer]): Unit = {
    val n = timers.length
    var packable = n >= 64 && n < (1 << 24)
    var i = 0
    while (packable && i < n) {
      val id = timers(i).keyId
      packable = id >= 0 && id < (1L << 39)
      i += 1
    }
    if (!packable) { java.util.Arrays.sort(timers, Timer.ordering); return }
    val packed = new Array[Long](n)
    i = 0
    while (i < n) { packed(i) = (timers(i).keyId << 24) | i; i += 1 }
    java.util.Arrays.sort(packed)
    val original = timers.clone()
    i = 0
    while (i < n) { timers(i) = original((packed(i) & 0xffffffL).toInt); i += 1 }
    // Runs of one key id: order by window.
    var start = 0
    while (start < n) {
      var end = start + 1
      while (end < n && timers(end).keyId == timers(start).keyId) end += 1
      if (end - start > 1) java.util.Arrays.sort(timers, start, end, Timer.ordering)
      start = end
    }
  }
}
