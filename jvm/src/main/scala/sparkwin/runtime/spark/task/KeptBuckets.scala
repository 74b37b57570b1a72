package sparkwin.runtime.spark.task

/** Real-time mode: each key group's [[KeyBuckets]], decoded, from one call of the group to the
  * next within a task. A call is one row there, and a row's key was looked up among the writes
  * the loop holds ([[WriteBehind]]) by its bucket's entry key, then, once they were written (at
  * least every second), decoded again from the bytes and its keys compared byte by byte until
  * hashed again: at 100k keys and 100k rows a second, finding a key's bucket was a quarter of the
  * stateful task's samples.
  *
  * Kept buckets are the objects the held writes hold, so what a call reads is what the last one
  * left, written or not; the task is their one writer (a retried task, or the next batch, builds a
  * new processor, so a new one of these). A group's kept buckets are used only while its record
  * says the count of buckets and keys they hold ([[KeyBuckets.reopen]]); else the call reads them
  * again. Memory is bounded by `maxBuckets` decoded buckets a task: past it every group's are
  * dropped, and the next calls read their buckets as a call without them does.
  */
final class KeptBuckets(maxBuckets: Int = KeptBuckets.MaxBuckets) {
  private val byGroup = new java.util.HashMap[Integer, KeyBuckets]()
  private var total = 0 // decoded buckets of every group, as their calls last ended
  private var opened: KeyBuckets = _
  private var openedWith = 0

  /** The buckets of `host`'s group for a call, whose record says `count` and `liveKeys`. */
  def open(host: GroupHost, count: Int, liveKeys: Long): KeyBuckets = {
    val group = Integer.valueOf(host.keyGroup)
    val kept = byGroup.get(group)
    opened =
      if (kept != null && kept.reopen(host, count, liveKeys)) kept
      else {
        if (kept != null) total -= kept.decoded
        val fresh = new KeyBuckets(host, count, liveKeys, keeps = true)
        byGroup.put(group, fresh)
        fresh
      }
    openedWith = opened.decoded
    opened
  }

  /** The call that opened `buckets` flushed them: counts what they hold now. */
  def closed(buckets: KeyBuckets): Unit = if (buckets eq opened) {
    total += buckets.decoded - openedWith
    opened = null
    if (total > maxBuckets) { byGroup.clear(); total = 0 }
  }

  /** How many buckets are kept decoded (for tests). */
  def size: Int = total
}

object KeptBuckets {

  /** Per task: at 16 keys a bucket, about 130k keys' state (a few KiB a bucket decoded). */
  val MaxBuckets = 8192
}
