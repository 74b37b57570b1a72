package sparkwin.core.timer

/** A binary min-heap of (time, id) pairs in primitive arrays, ordered by time, then id. It backs
  * [[TimerQueue]] (the times of its instants, id 0) and the packed session operator (a timer per
  * key id), where a tree of boxed times cost a pointer chase per level on every insert.
  */
final class TimeHeap {
  private var times = new Array[Long](8)
  private var ids = new Array[Int](8)
  private var count = 0

  def isEmpty: Boolean = count == 0
  def size: Int = count

  /** The smallest pair (the heap is not empty). */
  def minTime: Long = times(0)
  def minId: Int = ids(0)

  @inline private def before(t1: Long, i1: Int, t2: Long, i2: Int): Boolean =
    t1 < t2 || (t1 == t2 && i1 < i2)

  def push(time: Long, id: Int): Unit = {
    if (count == times.length) {
      times = java.util.Arrays.copyOf(times, count * 2)
      ids = java.util.Arrays.copyOf(ids, count * 2)
    }
    var at = count
    count += 1
    while (at > 0 && before(time, id, times((at - 1) >>> 1), ids((at - 1) >>> 1))) {
      val parent = (at - 1) >>> 1
      times(at) = times(parent); ids(at) = ids(parent)
      at = parent
    }
    times(at) = time; ids(at) = id
  }

  /** Removes the smallest pair (the heap is not empty). */
  def pop(): Unit = {
    count -= 1
    val time = times(count)
    val id = ids(count)
    var at = 0
    var settled = count == 0
    while (!settled) {
      var child = 2 * at + 1
      if (child >= count) settled = true
      else {
        if (child + 1 < count && before(times(child + 1), ids(child + 1), times(child), ids(child)))
          child += 1
        if (before(times(child), ids(child), time, id)) {
          times(at) = times(child); ids(at) = ids(child)
          at = child
        } else settled = true
      }
    }
    if (count > 0) { times(at) = time; ids(at) = id }
  }

  /** Replaces the contents with `sorted` times, all with id 0 (a sorted array is a heap). */
  def resetSorted(sorted: Array[Long]): Unit = {
    val capacity = math.max(8, sorted.length * 2)
    times = java.util.Arrays.copyOf(sorted, capacity)
    ids = new Array[Int](capacity)
    count = sorted.length
  }
}
