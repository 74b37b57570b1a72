package sparkwin.runtime.spark.task

import java.nio.ByteBuffer

/** A whole key group as one value: the state layout of Spark 3.5's runtime, whose operator
  * (`flatMapGroupsWithState`) keeps one state value per group, where 4.x's keeps a map
  * (DESIGN.md, "Which operator hosts the key groups").
  *
  * It holds what 4.x's map state holds, entry for entry: the group's record under the empty key
  * (so it comes first), a chained pipeline's last watermark under the key `0`, and each key's
  * [[KeyBytes]] with its engine state. Layout, big-endian: the version byte ([[Version]]), the
  * number of entries (int), then per entry, in unsigned byte order of the keys, the key's length
  * and bytes and the value's length and bytes.
  *
  * Reading indexes the entries without copying them; a call copies out only the values it asks
  * for (the keys it touches or wakes), and [[encode]] writes the changed entries and copies every
  * run of unchanged ones byte for byte. A value of another version, or one that does not add up,
  * is refused with a message, never misread.
  */
final class GroupTable private (
    bytes: Array[Byte],
    keyAt: Array[Int],
    keyLength: Array[Int],
    valueAt: Array[Int],
    valueLength: Array[Int]
) {
  private val stored = keyAt.length
  // Changes by key, each with its place among the stored entries (looked up once); encode
  // sorts them into the table's order. Removed marks a removal.
  private val changes = new java.util.HashMap[KeyId, GroupTable.Change]()
  // The last get's key, its id and (a miss in the changes) its place: its put follows.
  private var lastKey: Array[Byte] = _
  private var lastId: KeyId = _
  private var lastPlace = 0

  /** The value under `key`, or null. */
  def get(key: Array[Byte]): Array[Byte] = {
    val id = new KeyId(key)
    lastKey = key
    lastId = id
    val changed = changes.get(id)
    if (changed != null) { if (changed.value eq GroupTable.Removed) null else changed.value }
    else {
      val i = find(key)
      lastPlace = i
      if (i < 0) null else java.util.Arrays.copyOfRange(bytes, valueAt(i), valueAt(i) + valueLength(i))
    }
  }

  def put(key: Array[Byte], value: Array[Byte]): Unit = {
    // After a get of this array: a hit left a change to update, a miss its place.
    val read = key eq lastKey
    val id = if (read) lastId else new KeyId(key)
    val known = changes.get(id)
    if (known != null) known.value = value
    else changes.put(id, new GroupTable.Change(key, value, if (read) lastPlace else find(key)))
  }

  def remove(key: Array[Byte]): Unit = put(key, GroupTable.Removed)

  /** The stored entries (key, value), copied, in the table's order: for readers of a checkpoint. */
  def entries: Iterator[(Array[Byte], Array[Byte])] =
    Iterator.range(0, stored).map { i =>
      (
        java.util.Arrays.copyOfRange(bytes, keyAt(i), keyAt(i) + keyLength(i)),
        java.util.Arrays.copyOfRange(bytes, valueAt(i), valueAt(i) + valueLength(i))
      )
    }

  /** Whether anything was put or removed since the table was read. */
  def changed: Boolean = !changes.isEmpty

  /** The table with its changes as one value, or null when no entry is left. */
  def encode(): Array[Byte] = {
    // The changes in the table's order: by the stored entry each replaces or comes before, a new
    // key before the stored one at its place, new keys at one place by their bytes.
    val sorted = GroupTable.inTableOrder(changes.values.toArray(new Array[GroupTable.Change](changes.size)))
    // Sizes first: entries that stay, minus the stored ones a change replaces, plus the changes.
    var count = stored
    var size = math.max(bytes.length, 5)
    sorted.foreach { c =>
      val i = c.place
      if (i >= 0) { count -= 1; size -= 8 + keyLength(i) + valueLength(i) }
      if (!(c.value eq GroupTable.Removed)) { count += 1; size += 8 + c.key.length + c.value.length }
    }
    if (count == 0) return null
    val out = ByteBuffer.allocate(size)
    out.put(GroupTable.Version).putInt(count)
    var next = 0 // the first stored entry not written yet
    def copyStored(until: Int): Unit = if (until > next) {
      val from = keyAt(next) - 4 // entries are contiguous: a run is one copy
      out.put(bytes, from, valueAt(until - 1) + valueLength(until - 1) - from)
      next = until
    }
    sorted.foreach { c =>
      val i = c.place
      copyStored(if (i >= 0) i else -i - 1)
      if (i >= 0) next = i + 1
      if (!(c.value eq GroupTable.Removed))
        out.putInt(c.key.length).put(c.key).putInt(c.value.length).put(c.value)
    }
    copyStored(stored)
    out.array()
  }

  /** The index of the stored entry `key`, or `-(insertion point) - 1`. */
  private def find(key: Array[Byte]): Int = {
    var lo = 0
    var hi = stored - 1
    while (lo <= hi) {
      val mid = (lo + hi) >>> 1
      val c = GroupTable.compare(bytes, keyAt(mid), keyLength(mid), key, 0, key.length)
      if (c < 0) lo = mid + 1 else if (c > 0) hi = mid - 1 else return mid
    }
    -lo - 1
  }
}

object GroupTable {

  /** The layout this jar writes and reads; 53 (`'5'`) is no 4.x group record's version. */
  val Version: Byte = 53

  private val Removed = new Array[Byte](0)

  /** An empty table (a group with no state yet). */
  def empty(): GroupTable = read(null)

  /** The table in `bytes` (null: an empty one). */
  def read(bytes: Array[Byte]): GroupTable = {
    if (bytes == null) return new GroupTable(Array.emptyByteArray, Array(), Array(), Array(), Array())
    val in = ByteBuffer.wrap(bytes)
    def corrupt(why: String) =
      new sparkwin.core.CorruptStateException(
        "a key group's state (Spark 3.5)",
        why,
        in.position(),
        bytes.length
      )
    if (bytes.length == 0 || bytes(0) != Version)
      throw corrupt(
        s"layout ${if (bytes.length == 0) "none" else bytes(0).toString}, this sparkwin reads the " +
          s"Spark 3.5 runtime's layout $Version"
      )
    try {
      in.get()
      val n = in.getInt()
      if (n < 0 || n > in.remaining / 8) throw corrupt(s"$n entries")
      val keyAt, keyLength, valueAt, valueLength = new Array[Int](n)
      var i = 0
      while (i < n) {
        keyLength(i) = in.getInt()
        if (keyLength(i) < 0 || keyLength(i) > in.remaining - 4)
          throw corrupt(s"a key of ${keyLength(i)} bytes")
        keyAt(i) = in.position()
        if (i > 0 && compare(bytes, keyAt(i - 1), keyLength(i - 1), bytes, keyAt(i), keyLength(i)) >= 0)
          throw corrupt(s"entry $i is out of order")
        in.position(keyAt(i) + keyLength(i))
        valueLength(i) = in.getInt()
        if (valueLength(i) < 0 || valueLength(i) > in.remaining)
          throw corrupt(s"a value of ${valueLength(i)} bytes")
        valueAt(i) = in.position()
        in.position(valueAt(i) + valueLength(i))
        i += 1
      }
      if (in.hasRemaining) throw corrupt(s"${in.remaining} bytes after the entries")
      new GroupTable(bytes, keyAt, keyLength, valueAt, valueLength)
    } catch {
      case _: java.nio.BufferUnderflowException => throw corrupt("it ends early")
    }
  }

  /** Unsigned byte order of two ranges (a shorter prefix first), as Java 9's
    * `Arrays.compareUnsigned`, which the Java 8 build cannot call: negative, zero or positive.
    *
    * Eight bytes at a time, each eight read as one big-endian unsigned long (whose order is
    * their bytes' order): keys as `UnsafeRow` bytes share their first 12-16 bytes (null bits,
    * offset and length), and byte by byte the compares were a fifth of the stateful tasks' time
    * at 1M keys (docs/benchmarks.md). The ranges are checked against their arrays first, since the
    * reads are unchecked.
    */
  private[spark] def compare(
      a: Array[Byte],
      aFrom: Int,
      aLength: Int,
      b: Array[Byte],
      bFrom: Int,
      bLength: Int
  ): Int = {
    if (
      aFrom < 0 || aLength < 0 || aFrom > a.length - aLength || bFrom < 0 || bLength < 0 ||
      bFrom > b.length - bLength
    )
      throw new IndexOutOfBoundsException(
        s"ranges $aFrom+$aLength of ${a.length} and $bFrom+$bLength of ${b.length} bytes"
      )
    val n = math.min(aLength, bLength)
    var i = 0
    while (i <= n - 8) {
      val x = ByteWords.bigEndianLong(a, aFrom + i)
      val y = ByteWords.bigEndianLong(b, bFrom + i)
      if (x != y) return java.lang.Long.compareUnsigned(x, y)
      i += 8
    }
    while (i < n) {
      val c = (a(aFrom + i) & 0xff) - (b(bFrom + i) & 0xff)
      if (c != 0) return c
      i += 1
    }
    aLength - bLength
  }

  /** A put or a removal: the key, its new value (or [[Removed]]), and its place among the stored
    * entries ([[GroupTable.find]]'s answer).
    */
  private final class Change(val key: Array[Byte], var value: Array[Byte], val place: Int) {

    /** Where it goes in the table: before the stored entry at its insertion point (a new key),
      * or at the one it replaces; a new key sorts before a stored one at the same place.
      */
    def slot: Long = if (place >= 0) place.toLong * 2 + 1 else (-place - 1).toLong * 2
  }

  /** The changes in the table's order: by slot, as primitives (a comparator's sort of objects
    * was two thirds of an encode at 1M keys), then each run of new keys at one place by bytes.
    */
  private def inTableOrder(changes: Array[Change]): Array[Change] = {
    // A slot is below 2^30 (an entry takes at least 8 bytes of an array), an index below 2^31.
    val order = new Array[Long](changes.length)
    var k = 0
    while (k < changes.length) { order(k) = changes(k).slot << 31 | k; k += 1 }
    java.util.Arrays.sort(order)
    val sorted = new Array[Change](changes.length)
    k = 0
    while (k < order.length) { sorted(k) = changes((order(k) & Int.MaxValue).toInt); k += 1 }
    var from = 0
    while (from < sorted.length) {
      var until = from + 1
      while (until < sorted.length && sorted(until).slot == sorted(from).slot) until += 1
      if (until - from > 1) java.util.Arrays.sort(sorted, from, until, ByBytes)
      from = until
    }
    sorted
  }

  private val ByBytes: java.util.Comparator[Change] =
    (a: Change, b: Change) => compare(a.key, 0, a.key.length, b.key, 0, b.key.length)
}
