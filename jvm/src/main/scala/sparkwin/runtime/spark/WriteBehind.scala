package sparkwin.runtime.spark

/** A task's unwritten changes, per key group, in real-time mode: a call carrying only data rows
  * leaves what it changed (the group's record, its buckets) here, and the group's next call that
  * carries a summary, or a timer's call, writes them to the state store ([[flush]]). Half of the
  * stateful task's samples at 100k rows a second were the put every row made (DESIGN.md,
  * "Real-time mode"); a group now puts once per summary interval.
  *
  * Exactly-once stays the store's: the map side ends every partition with a summary row to every
  * key group ([[ChannelSummaries.Tap.interleaved]]), a stateful task's input ends only once every
  * map partition has, and Spark keeps one map partition's rows in order, so a group's last input
  * call of a batch is a summary's, which flushes; Spark's end-of-batch timers come after the input
  * and flush too. Only then does Spark commit the store. A task that fails leaves nothing: a retried
  * task (or the next batch) builds a new processor, so a new, empty one of these.
  *
  * The changes answer the group's reads ([[over]]), so the next call reads its own writes; groups
  * are kept apart by their label. A bucket or wake-up page is held as the object its call left
  * ([[GroupHost.keep]]) and encoded only at the flush: the next call goes on with it, so rows
  * that add to one entry (a window's last wake-up page takes a key for every row that opens the
  * window) decode and encode it once per flush, not per row.
  */
final class WriteBehind {
  import WriteBehind._

  // Per group label, its changed entries in the order first changed: a value's bytes, an
  // object kept unencoded ([[GroupHost.keep]]), or Removed.
  private val byGroup = new java.util.HashMap[Integer, java.util.LinkedHashMap[KeyId, AnyRef]]()

  /** `host` with its writes held here and its reads answered from them first. */
  def over(host: GroupHost): GroupHost = new Deferred(host, changes(host.keyGroup))

  /** Writes `host`'s group's held changes to it, and forgets them. */
  def flush(host: GroupHost): Unit = {
    val held = byGroup.remove(Integer.valueOf(host.keyGroup))
    if (held != null) held.forEach { (key, value) =>
      if (value eq Removed) host.remove(key.bytes) else host.put(key.bytes, bytes(value))
    }
  }

  /** How many entries `group` holds unwritten (for tests). */
  def pending(group: Int): Int = {
    val held = byGroup.get(Integer.valueOf(group))
    if (held == null) 0 else held.size
  }

  private def changes(group: Int): java.util.LinkedHashMap[KeyId, AnyRef] =
    byGroup.computeIfAbsent(Integer.valueOf(group), _ => new java.util.LinkedHashMap[KeyId, AnyRef]())
}

object WriteBehind {

  /** A removed entry (compared by identity: no written value is this array). */
  private val Removed = new Array[Byte](0)

  /** A held value's bytes (an object kept unencoded says them now). */
  private def bytes(value: AnyRef): Array[Byte] = value match {
    case e: Encodable => e.encode()
    case b: Array[Byte] @unchecked => b
  }

  private final class Deferred(host: GroupHost, held: java.util.LinkedHashMap[KeyId, AnyRef])
      extends GroupHost {
    def get(key: Array[Byte]): Array[Byte] = {
      val value = held.get(new KeyId(key))
      if (value == null) host.get(key) else if (value eq Removed) null else bytes(value)
    }
    def put(key: Array[Byte], value: Array[Byte]): Unit = held.put(new KeyId(key), value)
    def remove(key: Array[Byte]): Unit = held.put(new KeyId(key), Removed)
    override def kept(key: Array[Byte]): Encodable = held.get(new KeyId(key)) match {
      case e: Encodable => e
      case _ => null
    }
    override def keep(key: Array[Byte], value: Encodable): Unit = held.put(new KeyId(key), value)
    def packsKeys: Boolean = host.packsKeys
    def watermark: Long = host.watermark
    def batchTime: Long = host.batchTime
    def timer(current: Long, wanted: Long, firing: Boolean): Unit = host.timer(current, wanted, firing)
    override def keyGroup: Int = host.keyGroup
  }
}
