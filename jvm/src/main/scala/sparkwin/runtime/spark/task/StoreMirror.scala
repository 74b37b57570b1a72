package sparkwin.runtime.spark.task

/** What one task knows its state store holds: every entry the task read or wrote, by key group
  * and entry key, with its value (null: known to have none). In real-time mode each row is its own
  * call of its group, and each call reads the group's record and its key's bucket back from
  * RocksDB through Spark's map-state encoding, entries the same task wrote a row earlier.
  *
  * It is a read cache only: every put and remove it sees goes to the state store at once, and
  * what the loop holds back is [[WriteBehind]]'s, which answers a group's reads before this
  * does. It is right because a task's store has one writer, the task itself: a partition's store is
  * opened by one task at a version, and a retried task (or the next batch) builds a new
  * processor, so a new, empty mirror. Values are never changed once handed over (every writer
  * encodes into a new array), so the mirror keeps the arrays themselves.
  *
  * Memory is bounded by `budgetBytes` of values and keys: past it the mirror forgets everything
  * and fills again (a million keys' buckets would not fit a task's share of the heap; a few
  * groups' hot buckets do).
  */
final class StoreMirror(budgetBytes: Long) {
  import StoreMirror._

  private val entries = new java.util.HashMap[Entry, Array[Byte]]()
  private var bytes = 0L
  private var hitCount = 0L
  private var missCount = 0L

  /** `group`'s value under `key`: the one the task last read or wrote, else `read()`'s. */
  def get(group: Int, key: Array[Byte], read: () => Array[Byte]): Array[Byte] = {
    val entry = new Entry(group, key)
    val known = entries.get(entry)
    if (known != null || entries.containsKey(entry)) { hitCount += 1; known }
    else {
      missCount += 1
      val value = read()
      remember(entry, value)
      value
    }
  }

  /** The task wrote `value` (null: removed the entry) under `group`'s `key`. */
  def wrote(group: Int, key: Array[Byte], value: Array[Byte]): Unit = remember(new Entry(group, key), value)

  /** Reads answered from the mirror, and reads that went to the store (for tests and profiles). */
  def hits: Long = hitCount
  def misses: Long = missCount

  private def remember(entry: Entry, value: Array[Byte]): Unit = {
    val before = entries.put(entry, value)
    bytes += size(value) - (if (before == null) 0 else size(before))
    if (before == null) bytes += Overhead + entry.key.length
    if (bytes > budgetBytes) { entries.clear(); bytes = 0L }
  }

  private def size(value: Array[Byte]): Long = if (value == null) 0L else value.length.toLong
}

object StoreMirror {

  /** Per task: a real-time batch's stateful task holds its groups' records and hot buckets, a few
    * KiB each; 64 MiB bounds a task that touches very many keys (it then reads as before).
    */
  val DefaultBudgetBytes: Long = 64L << 20

  /** What a map entry costs beyond its bytes: the entry, the key object and two array headers. */
  private val Overhead = 96L

  /** An entry's address: its key group and its key's bytes, compared by content. */
  private final class Entry(val group: Int, val key: Array[Byte]) {
    override val hashCode: Int = KeyId.hash(key, 0, key.length) * 31 + group
    override def equals(other: Any): Boolean = other match {
      case o: Entry => o.group == group && java.util.Arrays.equals(o.key, key)
      case _ => false
    }
  }
}
