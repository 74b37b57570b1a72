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
  // Changes by key, in the table's order; Removed marks a removal.
  private val changes = new java.util.TreeMap[Array[Byte], Array[Byte]](GroupTable.Unsigned)

  /** The value under `key`, or null. */
  def get(key: Array[Byte]): Array[Byte] = {
    val changed = changes.get(key)
    if (changed != null) { if (changed eq GroupTable.Removed) null else changed }
    else {
      val i = find(key)
      if (i < 0) null else java.util.Arrays.copyOfRange(bytes, valueAt(i), valueAt(i) + valueLength(i))
    }
  }

  def put(key: Array[Byte], value: Array[Byte]): Unit = changes.put(key, value)

  def remove(key: Array[Byte]): Unit = changes.put(key, GroupTable.Removed)

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
    // Sizes first: entries that stay, minus the stored ones a change replaces, plus the changes.
    var count = stored
    var size = math.max(bytes.length, 5)
    changes.forEach { (k, v) =>
      val i = find(k)
      if (i >= 0) { count -= 1; size -= 8 + keyLength(i) + valueLength(i) }
      if (!(v eq GroupTable.Removed)) { count += 1; size += 8 + k.length + v.length }
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
    changes.forEach { (k, v) =>
      val i = find(k)
      copyStored(if (i >= 0) i else -i - 1)
      if (i >= 0) next = i + 1
      if (!(v eq GroupTable.Removed)) out.putInt(k.length).put(k).putInt(v.length).put(v)
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
    * `Arrays.compareUnsigned`, which the Java 8 build cannot call.
    */
  private[spark] def compare(
      a: Array[Byte],
      aFrom: Int,
      aLength: Int,
      b: Array[Byte],
      bFrom: Int,
      bLength: Int
  ): Int = {
    val n = math.min(aLength, bLength)
    var i = 0
    while (i < n) {
      val c = (a(aFrom + i) & 0xff) - (b(bFrom + i) & 0xff)
      if (c != 0) return c
      i += 1
    }
    aLength - bLength
  }

  private val Unsigned: java.util.Comparator[Array[Byte]] =
    (a: Array[Byte], b: Array[Byte]) => compare(a, 0, a.length, b, 0, b.length)
}
