package sparkwin.runtime.spark.task

import java.nio.ByteBuffer

import scala.collection.mutable.ArrayBuffer

import sparkwin.operator.Operator
import sparkwin.operator.store.Bytes

/** A key group's wake-up table ([[GroupRecord]]) read in place: each key with pending engine
  * timers and when it must wake.
  *
  * Every call of a group with many keys reads and, when a wake-up moved, rewrites the table, while
  * it touches only the keys with rows or due. So the table is not decoded into objects: reading
  * indexes the entries (their offsets, and a hash index over their key bytes, in one pass), a
  * lookup is one probe, changes are kept apart, and writing copies every run of unchanged entries
  * byte for byte, then adds the changed ones in the order they changed. With a million keys,
  * decoding every entry into a hash map and encoding it again each call was about a seventh of
  * the tasks' JFR samples; keeping the table in key order instead made the byte comparisons of
  * its searches a fifth. The index keeps each entry's hash, so a probe compares bytes only when
  * the hashes match.
  */
final class WakeupTable private (
    bytes: Array[Byte],
    twoTimes: Boolean,
    keyAt: Array[Int],
    keyLength: Array[Int],
    hashes: Array[Int],
    slots: Array[Int],
    private var knownEvent: Long,
    private var knownProcessing: Long
) extends Wakeups {
  import WakeupTable._

  private val stored = keyAt.length
  // Stored entries a change replaced or removed, and the wake-ups put since the table was read,
  // in the order they were put.
  private val replaced = new java.util.BitSet(stored)
  private val changes = new java.util.LinkedHashMap[KeyId, Wakeup]()
  private var count = stored
  private var dirty = false
  private var replacedCount = 0
  // knownEvent and knownProcessing are the earliest wake-ups as changed, and exact says whether
  // they are: a change that replaces or removes a wake-up at one of them leaves only a bound,
  // and the next earliest() walks the table.
  private var exact = true

  /** Makes the table, changes and all, the one a call reads next (its bytes were just written),
    * unless its changes piled up past a quarter of the stored entries: then it says false, and
    * the written bytes are read afresh. In real-time mode a call is one row of the same few
    * groups, and the loop keeps what it read between calls (DESIGN.md, "Real-time mode").
    */
  def settle(): Boolean =
    if (changes.size + replacedCount > 64 + stored / 4) false
    else {
      earliest() // exact from here on
      dirty = false
      true
    }

  // The key a call processes ([[enter]]): its wake-up here when it entered, or null.
  private var entered: Wakeup = _
  // The last get's key, its id, and its stored entry's index (or -1) when the changes missed
  // it: the put or removal that follows when the key leaves (every key) needs no second hash
  // and probe. Any change forgets them.
  private var lastKey: Array[Byte] = _
  private var lastId: KeyId = _
  private var lastIndex = -1

  def isEmpty: Boolean = count == 0

  def open(): Unit = ()

  def due(host: GroupHost, isDue: (Long, Long) => Boolean): ArrayBuffer[Wakeup] = due(isDue)

  def enter(key: Array[Byte], due: Wakeup): Unit = entered = if (due != null) due else get(key)

  /** Every key the group stores has a wake-up (as many keys with state as the table has entries,
    * as with every assigner but global windows) and the table does not list this one. A key of its
    * own for nearly every event made these misses a fifth of the state updates.
    */
  def holdsNoState(liveKeys: Long): Boolean = entered == null && liveKeys == count

  def loaded(operator: Operator): Unit = ()

  def left(host: GroupHost, key: Array[Byte], operator: Operator): Unit = {
    val next = Wakeups.next(operator)
    val before = entered
    if (next == null) { if (before != null) remove(key) }
    else if (before == null || before.at != next.at || before.processingAt != next.processingAt)
      put(key, next)
  }

  /** The index of these wake-ups once they are more than [[WakeupIndex.From]] (where the host
    * packs keys), else the table.
    */
  def grown(host: GroupHost): Wakeups =
    if (host.packsKeys && count > WakeupIndex.From) WakeupIndex.of(host, entries) else this

  def flush(host: GroupHost): Unit = ()

  def table: WakeupTable = this
  def index: WakeupIndex = null

  /** How many keys have a wake-up. */
  def size: Int = count

  /** Whether anything was put or removed since the table was read. */
  def changed: Boolean = dirty

  /** The wake-up of `key`, or null. */
  def get(key: Array[Byte]): Wakeup = {
    val id = new KeyId(key)
    val changed = changes.get(id)
    if (changed != null) { lastKey = null; changed }
    else {
      val i = find(id)
      lastKey = key
      lastId = id
      lastIndex = i
      if (i < 0) null else Wakeup(key, atOf(i), processingAtOf(i))
    }
  }

  /** Whether `key` is the last get's array, whose id and stored index a change may reuse; that
    * get is forgotten either way, as a change follows.
    */
  private def lastGot(key: Array[Byte]): Boolean = {
    val known = key eq lastKey
    lastKey = null
    known
  }

  def contains(key: Array[Byte]): Boolean = {
    val id = new KeyId(key)
    changes.containsKey(id) || find(id) >= 0
  }

  def put(key: Array[Byte], wakeup: Wakeup): Unit = {
    val known = lastGot(key)
    val id = if (known) lastId else new KeyId(key)
    val before = changes.put(id, wakeup.copy(key = key))
    if (before != null) forget(before.at, before.processingAt)
    else {
      val i = if (known) lastIndex else find(id)
      if (i >= 0) replace(i) else count += 1
    }
    knownEvent = math.min(knownEvent, wakeup.at)
    knownProcessing = math.min(knownProcessing, wakeup.processingAt)
    dirty = true
  }

  def remove(key: Array[Byte]): Unit = {
    val known = lastGot(key)
    val id = if (known) lastId else new KeyId(key)
    val before = changes.remove(id)
    if (before != null) {
      forget(before.at, before.processingAt)
      count -= 1
      dirty = true
    } else {
      val i = if (known) lastIndex else find(id)
      if (i >= 0) { replace(i); count -= 1; dirty = true }
    }
  }

  /** Stored entry `i` is replaced or removed. */
  private def replace(i: Int): Unit = {
    replaced.set(i)
    replacedCount += 1
    forget(atOf(i), processingAtOf(i))
  }

  /** A wake-up at these times leaves the table: the known earliest may have been it (never, on
    * a clock it does not wake on).
    */
  private def forget(at: Long, processingAt: Long): Unit =
    if (
      (at != Long.MaxValue && at <= knownEvent) || (processingAt != Long.MaxValue && processingAt <= knownProcessing)
    )
      exact = false

  /** The wake-ups `due` accepts (given the event and processing time), in table order. */
  def due(due: (Long, Long) => Boolean): ArrayBuffer[Wakeup] = {
    val found = new ArrayBuffer[Wakeup]()
    walk(
      i => {
        val at = atOf(i)
        val processingAt = processingAtOf(i)
        if (due(at, processingAt)) found += Wakeup(keyOf(i), at, processingAt)
      },
      w => if (due(w.at, w.processingAt)) found += w
    )
    found
  }

  /** The earliest wake-up on each clock, changes included (Long.MaxValue: none). */
  def earliest(): (Long, Long) = {
    if (!exact) {
      var at = Long.MaxValue
      var processingAt = Long.MaxValue
      walk(
        i => { at = math.min(at, atOf(i)); processingAt = math.min(processingAt, processingAtOf(i)) },
        w => { at = math.min(at, w.at); processingAt = math.min(processingAt, w.processingAt) }
      )
      knownEvent = at
      knownProcessing = processingAt
      exact = true
    }
    (knownEvent, knownProcessing)
  }

  /** Every wake-up, in table order. */
  def entries: Seq[Wakeup] = {
    val all = new ArrayBuffer[Wakeup](count)
    walk(i => all += Wakeup(keyOf(i), atOf(i), processingAtOf(i)), all += _)
    all.toSeq
  }

  /** The bytes [[writeTo]] takes with one or both times per key. */
  def encodedSize(withTwoTimes: Boolean): Int = {
    val perKey = if (withTwoTimes) 16 else 8
    var size = 4
    walk(i => size += 4 + keyLength(i) + perKey, w => size += 4 + w.key.length + perKey)
    size
  }

  /** The table with its changes: the count, then per key its bytes' length, the bytes and the
    * time (both times `withTwoTimes`). Unchanged entries of the same layout go over in runs.
    */
  def writeTo(out: ByteBuffer, withTwoTimes: Boolean): Unit = {
    out.putInt(count)
    val copies = withTwoTimes == twoTimes
    var runFrom, runUntil = -1 // the stored bytes to copy next, as one run
    def flush(): Unit = if (runFrom >= 0) {
      out.put(bytes, runFrom, runUntil - runFrom)
      runFrom = -1
      runUntil = -1
    }
    def write(key: Array[Byte], keyFrom: Int, keyLen: Int, at: Long, processingAt: Long): Unit = {
      out.putInt(keyLen).put(key, keyFrom, keyLen).putLong(at)
      if (withTwoTimes) out.putLong(processingAt)
    }
    walk(
      i =>
        if (copies) {
          val from = keyAt(i) - 4
          if (from != runUntil) { flush(); runFrom = from }
          runUntil = keyAt(i) + keyLength(i) + (if (twoTimes) 16 else 8)
        } else write(bytes, keyAt(i), keyLength(i), atOf(i), processingAtOf(i)),
      w => { flush(); write(w.key, 0, w.key.length, w.at, w.processingAt) }
    )
    flush()
  }

  /** Visits the table as changed: each stored entry no change replaced (by index), in stored
    * order, then each put, in the order of the changes.
    */
  private def walk(storedEntry: Int => Unit, put: Wakeup => Unit): Unit = {
    var i = replaced.nextClearBit(0)
    while (i < stored) { storedEntry(i); i = replaced.nextClearBit(i + 1) }
    changes.values.forEach(w => put(w))
  }

  private def keyOf(i: Int): Array[Byte] =
    java.util.Arrays.copyOfRange(bytes, keyAt(i), keyAt(i) + keyLength(i))

  private def atOf(i: Int): Long = Bytes.getLong(bytes, keyAt(i) + keyLength(i))

  private def processingAtOf(i: Int): Long =
    if (twoTimes) Bytes.getLong(bytes, keyAt(i) + keyLength(i) + 8) else Long.MaxValue

  /** The index of the stored entry `id` no change replaced, or -1. */
  private def find(id: KeyId): Int =
    if (stored == 0) -1
    else {
      val i = probe(bytes, keyAt, keyLength, hashes, slots, id.bytes, 0, id.bytes.length, id.hashCode)
      if (i >= 0 && replaced.get(i)) -1 else i
    }
}

object WakeupTable {

  /** A table with no entries. */
  def empty(twoTimes: Boolean): WakeupTable =
    new WakeupTable(
      Array.emptyByteArray,
      twoTimes,
      Array(),
      Array(),
      Array(),
      Array(),
      Long.MaxValue,
      Long.MaxValue
    )

  /** A table of these wake-ups (a later one of the same key wins). */
  def of(wakeups: Seq[Wakeup], twoTimes: Boolean): WakeupTable = {
    val table = empty(twoTimes)
    wakeups.foreach(w => table.put(w.key, w))
    table
  }

  /** The table at `in`'s position in `bytes` (a count, then the entries), leaving `in` after it.
    * `corrupt` makes the error for a table that does not add up.
    */
  private[spark] def read(
      bytes: Array[Byte],
      in: ByteBuffer,
      twoTimes: Boolean,
      corrupt: String => IllegalStateException
  ): WakeupTable = {
    val perKey = if (twoTimes) 16 else 8
    val n = in.getInt()
    if (n < 0 || n > in.remaining / (4 + perKey)) throw corrupt(s"$n wake-ups")
    val keyAt, keyLength, hashes = new Array[Int](n)
    // Open addressing, at most half full: an entry's index plus one (0: free).
    var capacity = 2
    while (capacity < 2 * n) capacity <<= 1
    val slots = new Array[Int](if (n == 0) 0 else capacity)
    var earliestAt, earliestProcessingAt = Long.MaxValue
    var i = 0
    while (i < n) {
      val len = in.getInt()
      if (len < 0 || len > in.remaining - perKey) throw corrupt(s"a key of $len bytes")
      val at = in.position()
      val hash = KeyId.hash(bytes, at, len)
      keyAt(i) = at
      keyLength(i) = len
      hashes(i) = hash
      // The first free slot on the key's probe path; a key met on the way is a repeat.
      var slot = hash & (capacity - 1)
      while (slots(slot) != 0) {
        if (same(bytes, keyAt, keyLength, hashes, slots(slot) - 1, bytes, at, len, hash))
          throw corrupt(s"wake-up $i repeats a key")
        slot = (slot + 1) & (capacity - 1)
      }
      slots(slot) = i + 1
      in.position(at + len)
      earliestAt = math.min(earliestAt, in.getLong())
      if (twoTimes) earliestProcessingAt = math.min(earliestProcessingAt, in.getLong())
      i += 1
    }
    new WakeupTable(bytes, twoTimes, keyAt, keyLength, hashes, slots, earliestAt, earliestProcessingAt)
  }

  /** The index of the entry whose key is `key`'s range (hashing to `hash`), or -1. */
  private def probe(
      bytes: Array[Byte],
      keyAt: Array[Int],
      keyLength: Array[Int],
      hashes: Array[Int],
      slots: Array[Int],
      key: Array[Byte],
      from: Int,
      length: Int,
      hash: Int
  ): Int = {
    val mask = slots.length - 1
    var slot = hash & mask
    var entry = slots(slot) - 1
    while (entry >= 0 && !same(bytes, keyAt, keyLength, hashes, entry, key, from, length, hash)) {
      slot = (slot + 1) & mask
      entry = slots(slot) - 1
    }
    entry
  }

  /** Whether entry `i`'s key is `key`'s range: its hash first, the bytes only if that matches. */
  private def same(
      bytes: Array[Byte],
      keyAt: Array[Int],
      keyLength: Array[Int],
      hashes: Array[Int],
      i: Int,
      key: Array[Byte],
      from: Int,
      length: Int,
      hash: Int
  ): Boolean =
    hashes(i) == hash && keyLength(i) == length &&
      GroupTable.compare(bytes, keyAt(i), length, key, from, length) == 0
}
