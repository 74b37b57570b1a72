package sparkwin.runtime.spark.task

/** How a key group's loop writes what a call changed: through to the host as every call goes
  * ([[GroupWrites.Through]]), or held behind it ([[WriteBehind]]). The loop asks it once per
  * call, and nothing else of the loop knows which.
  */
sealed trait GroupWrites {

  /** The host a call of `host`'s group reads and writes. */
  def over(host: GroupHost): GroupHost

  /** Whether a call (`summarised`: it had a summary; `firing`: it is a timer's) holds its writes. */
  def holds(summarised: Boolean, firing: Boolean): Boolean

  /** A call of `host`'s group ended (`ending`: it had its map partition's last summary;
    * `putOut`: it put out panes, late or error rows): writes what is held when the call says so.
    */
  def ended(host: GroupHost, summarised: Boolean, firing: Boolean, ending: Boolean, putOut: Boolean): Unit

  /** Whether a key's state may stay the object it was saved as until written ([[KeyStore]]). */
  def keepsObjects: Boolean
}

object GroupWrites {

  /** Every call writes what it changed. */
  object Through extends GroupWrites {
    def over(host: GroupHost): GroupHost = host
    def holds(summarised: Boolean, firing: Boolean): Boolean = false
    def ended(host: GroupHost, summarised: Boolean, firing: Boolean, ending: Boolean, putOut: Boolean): Unit =
      ()
    def keepsObjects: Boolean = false
  }
}

/** A task's unwritten changes, per key group, in real-time mode: a call leaves what it changed
  * (the group's record, its buckets) here, and the loop writes them to the state store ([[flush]])
  * at a map partition's last summary, at a timer's call, and at a summary once the oldest held
  * change is `holdMs` old ([[due]]). Half of the stateful task's samples at 100k rows a second
  * were the put every row made (DESIGN.md, "Real-time mode"). Writing at every summary (a group
  * gets one from each map partition every summary interval) still cost a write of each bucket a
  * row had touched, a few rows apart: at 100k keys the summary calls took 4-10 s per 10 s;
  * held for a second, a bucket's rows add up and it is written once.
  *
  * Exactly-once stays the store's: the map side ends every partition with a summary row to every
  * key group, marked as the partition's last ([[ChannelSummaries.Tap.interleaved]]), a stateful
  * task's input ends only once every map partition has, and Spark keeps one map partition's rows
  * in order, so a group's last input call of a batch is such a summary's, which flushes; Spark's
  * end-of-batch timers come after the input and flush too. Only then does Spark commit the store.
  * A task that fails leaves nothing: a retried task (or the next batch) builds a new processor, so
  * a new, empty one of these. The hold bounds the memory held, not correctness.
  *
  * The changes answer the group's reads ([[over]]), so the next call reads its own writes; groups
  * are kept apart by their label. A bucket or wake-up page is held as the object its call left
  * ([[GroupHost.keep]]) and encoded only at the flush: the next call goes on with it, so rows
  * that add to one entry (a window's last wake-up page takes a key for every row that opens the
  * window) decode and encode it once per flush, not per row.
  */
final class WriteBehind(holdMs: Long = WriteBehind.HoldMs, nanoTime: () => Long = () => System.nanoTime())
    extends GroupWrites {
  import WriteBehind._

  // Per group label, its changed entries in the order first changed.
  private val byGroup = new java.util.HashMap[Integer, Held]()

  /** A row's call holds its writes; a summary's or a timer's may write them ([[ended]]). */
  def holds(summarised: Boolean, firing: Boolean): Boolean = !(summarised || firing)

  /** The map partition's last summary and a timer's call write what the group holds; another
    * summary writes it once it is [[due]], unless the call put out panes: its panes wait for their
    * own call only (a second's writes are several ms at 100k keys), and the group's next summary
    * writes.
    */
  def ended(host: GroupHost, summarised: Boolean, firing: Boolean, ending: Boolean, putOut: Boolean): Unit =
    if (ending || firing || (summarised && !putOut && due(host.keyGroup))) flush(host)

  def keepsObjects: Boolean = true

  /** `host` with its writes held here and its reads answered from them first. */
  def over(host: GroupHost): GroupHost = new Deferred(host, changes(host.keyGroup), nanoTime)

  /** Whether `group`'s oldest held change is `holdMs` old (a group holding nothing is never due). */
  def due(group: Int): Boolean = {
    val held = byGroup.get(Integer.valueOf(group))
    held != null && held.since != NotYet && nanoTime() - held.since >= holdMs * 1000000L
  }

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

  private def changes(group: Int): Held = byGroup.computeIfAbsent(Integer.valueOf(group), _ => new Held)
}

object WriteBehind {

  /** How long a group's changes wait at most, past which its next summary writes them (the
    * partition's last summary writes them whatever their age). At 100k keys and 10k rows a
    * second a bucket gets about ten rows a second; held a second they are written as one.
    */
  val HoldMs = 1000L

  private val NotYet = Long.MinValue

  /** A group's changed entries in the order first changed (a value's bytes, an object kept
    * unencoded ([[GroupHost.keep]]), or Removed), and when the first was held (`nanoTime`).
    */
  private final class Held extends java.util.LinkedHashMap[KeyId, AnyRef] {
    var since: Long = NotYet
  }

  /** A removed entry (compared by identity: no written value is this array). */
  private val Removed = new Array[Byte](0)

  /** A held value's bytes (an object kept unencoded says them now). */
  private def bytes(value: AnyRef): Array[Byte] = value match {
    case e: Encodable => e.encode()
    case b: Array[Byte] @unchecked => b
  }

  private final class Deferred(host: GroupHost, held: Held, nanoTime: () => Long) extends GroupHost {
    private def hold(key: Array[Byte], value: AnyRef): Unit = {
      if (held.since == NotYet) held.since = nanoTime()
      held.put(new KeyId(key), value)
    }
    def get(key: Array[Byte]): Array[Byte] = {
      val value = held.get(new KeyId(key))
      if (value == null) host.get(key) else if (value eq Removed) null else bytes(value)
    }
    def put(key: Array[Byte], value: Array[Byte]): Unit = hold(key, value)
    def remove(key: Array[Byte]): Unit = hold(key, Removed)
    override def kept(key: Array[Byte]): Encodable = held.get(new KeyId(key)) match {
      case e: Encodable => e
      case _ => null
    }
    override def keep(key: Array[Byte], value: Encodable): Unit = hold(key, value)
    def packsKeys: Boolean = host.packsKeys
    def watermark: Long = host.watermark
    def batchTime: Long = host.batchTime
    def timer(current: Long, wanted: Long, firing: Boolean): Unit = host.timer(current, wanted, firing)
    override def keyGroup: Int = host.keyGroup
  }
}
