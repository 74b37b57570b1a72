package sparkwin.runtime.spark.task

import java.nio.ByteBuffer

/** When a key of a group must next be woken: at event time `at`, and at processing time
  * `processingAt` (Long.MaxValue: never; kept only by pipelines with channels or processing-time
  * timers).
  */
final case class Wakeup(key: Array[Byte], at: Long, processingAt: Long = Long.MaxValue)

/** A key's [[KeyBytes]] as a hash-map key: compared and hashed by content. The hash mixes every
  * byte: `Arrays.hashCode`'s sum of bytes times powers of 31 gave many numeric keys' `UnsafeRow`
  * bytes the same hash, and a group's wake-up table turned into tree bins.
  */
final class KeyId(val bytes: Array[Byte]) {
  // Hashed when first asked: the loop makes an id for every key it processes, which only
  // real-time mode's map of kept states looks up. 0: not yet (a key hashing to 0 is hashed each
  // time, which only costs).
  private var hash = 0
  override def hashCode: Int = {
    if (hash == 0) hash = KeyId.hash(bytes, 0, bytes.length)
    hash
  }
  override def equals(other: Any): Boolean = other match {
    case o: KeyId => java.util.Arrays.equals(bytes, o.bytes)
    case _ => false
  }
}

object KeyId {

  /** The hash of a key's bytes in `bytes(from until from + length)`: Murmur3 over them, four
    * bytes at a time, each four as a little-endian int (the wake-up table hashes every entry's
    * key each time it is read). Buckets are addressed by it, so its value is part of the
    * layout, the same on a big-endian machine.
    */
  def hash(bytes: Array[Byte], from: Int, length: Int): Int = {
    import scala.util.hashing.MurmurHash3.{finalizeHash, mix, mixLast}
    if (from < 0 || length < 0 || from > bytes.length - length)
      throw new IndexOutOfBoundsException(s"range $from+$length of ${bytes.length} bytes")
    var h = 0x3c074a61
    var i = from
    val words = from + (length & ~3)
    while (i < words) {
      h = mix(h, ByteWords.littleEndianInt(bytes, i))
      i += 4
    }
    var last = 0
    var shift = 0
    while (i < from + length) { last |= (bytes(i) & 0xff) << shift; shift += 8; i += 1 }
    if (shift > 0) h = mixLast(h, last)
    finalizeHash(h, length)
  }
}

/** A key group's record (DESIGN.md, "State variables"): the number of key groups the checkpoint
  * was written with, the group's one Spark timer (`Long.MinValue`: none), how many of its keys
  * hold state, the wake-up table (each key with pending engine timers, as [[KeyBytes]], and when
  * it must wake; read in place by [[WakeupTable]]), and for pipelines with channels the group's
  * copy of the channel watermarks (`core.time.ChannelWatermarks`' saved form).
  *
  * Layout 1 (no channels), big-endian: a version byte, the number of key groups (int), the timer
  * and the count of keys with state (longs), then the wake-up table: a count, and per key its
  * bytes' length, the bytes and the time. Layout 2 (channels) has both times per key, then the
  * channel watermarks' length and bytes; layout 3 (processing-time timers, no channels) both
  * times per key and nothing after. When the group's keys lie in buckets ([[KeyBuckets]]) the
  * version byte has [[GroupRecord.BucketsFlag]] added and the bucket count (int) follows the
  * count of keys with state; `buckets` 0 is a key an entry. When the group's wake-ups are
  * indexed by time ([[WakeupIndex]]) the version byte has [[GroupRecord.IndexedFlag]] added and
  * the index's directory stands where the table would ([[WakeupIndex.writeTo]]). A record of
  * another version or length is refused with a message, never misread.
  */
final case class GroupRecord(
    keyGroups: Int,
    timer: Long,
    liveKeys: Long,
    wakeups: Seq[Wakeup],
    channels: Option[Array[Byte]] = None,
    processing: Boolean = false,
    buckets: Int = 0,
    index: Option[WakeupIndex] = None
) {

  /** Both times per key: with channels, or with processing-time timers. */
  def twoTimes: Boolean = channels.isDefined || processing
}

object GroupRecord {

  /** The layouts this jar reads: 1 with event time only, 2 with channels, 3 with both clocks. */
  val Version: Byte = 1
  val ChannelsVersion: Byte = 2
  val TwoClocksVersion: Byte = 3

  /** Set in the version byte when the group's keys lie in buckets ([[KeyBuckets]]): their count
    * (an int) follows the count of keys with state. Without it, each key is an entry of its own.
    */
  val BucketsFlag: Byte = 0x10

  /** Set in the version byte when the group's wake-ups are indexed by time ([[WakeupIndex]]): the
    * index's directory follows the header instead of the wake-up table. An older sparkwin refuses
    * such a record (its layout byte), never misreads it.
    */
  val IndexedFlag: Byte = 0x20

  /** A record read in place: its header, its wake-up table indexed over the bytes
    * ([[WakeupTable]]) and its channel watermarks' bytes.
    */
  final class Stored(
      val keyGroups: Int,
      val timer: Long,
      val liveKeys: Long,
      val table: WakeupTable,
      val channels: Option[Array[Byte]],
      val processing: Boolean,
      val buckets: Int,
      val index: WakeupIndex = null // null: the wake-ups are the table
  ) {

    /** The group's wake-ups: the index when it has one, else the table. */
    def wakeups: Wakeups = if (index != null) index else table
  }

  def encode(r: GroupRecord): Array[Byte] =
    write(
      r.keyGroups,
      r.timer,
      r.liveKeys,
      WakeupTable.of(r.wakeups, r.twoTimes),
      r.channels,
      r.processing,
      r.buckets,
      r.index.orNull
    )

  /** The bytes of a record read in place (or built to be kept as read, [[GroupSync]]). */
  def write(r: Stored): Array[Byte] =
    write(r.keyGroups, r.timer, r.liveKeys, r.table, r.channels, r.processing, r.buckets, r.index)

  /** A record's bytes: the one writer of every layout. */
  def write(
      keyGroups: Int,
      timer: Long,
      liveKeys: Long,
      table: WakeupTable,
      channels: Option[Array[Byte]],
      processing: Boolean,
      buckets: Int = 0,
      index: WakeupIndex = null
  ): Array[Byte] = {
    val twoTimes = channels.isDefined || processing
    val bucketed = buckets > 0
    val wakeupsSize = if (index != null) index.encodedSize else table.encodedSize(twoTimes)
    val size = 1 + 4 + 8 + 8 + (if (bucketed) 4 else 0) + wakeupsSize + channels.fold(0)(4 + _.length)
    val out = ByteBuffer.allocate(size)
    val layout = if (channels.isDefined) ChannelsVersion else if (processing) TwoClocksVersion else Version
    val flags = (if (bucketed) BucketsFlag else 0) | (if (index != null) IndexedFlag else 0)
    out.put((layout | flags).toByte)
    out.putInt(keyGroups).putLong(timer).putLong(liveKeys)
    if (bucketed) out.putInt(buckets)
    if (index != null) index.writeTo(out) else table.writeTo(out, twoTimes)
    channels.foreach(c => out.putInt(c.length).put(c))
    out.array()
  }

  def decode(bytes: Array[Byte]): GroupRecord = {
    val r = read(bytes)
    GroupRecord(
      r.keyGroups,
      r.timer,
      r.liveKeys,
      r.table.entries,
      r.channels,
      r.processing,
      r.buckets,
      Option(r.index)
    )
  }

  /** The record in `bytes`, its table indexed, not decoded. */
  def read(bytes: Array[Byte]): Stored = {
    val in = ByteBuffer.wrap(bytes)
    def corrupt(why: String) = new sparkwin.core.CorruptStateException(
      s"a key group's record${if (bytes.isEmpty) "" else s", layout ${bytes(0)}"}",
      why,
      in.position(),
      bytes.length
    )
    try {
      val tag = in.get()
      val bucketed = (tag & BucketsFlag) != 0
      val indexed = (tag & IndexedFlag) != 0
      val version = (tag & ~(BucketsFlag | IndexedFlag)).toByte
      if (version < Version || version > TwoClocksVersion)
        throw corrupt(
          s"layout $tag, this sparkwin reads layouts $Version to $TwoClocksVersion, with or " +
            s"without keys in buckets (+$BucketsFlag) and wake-ups by time (+$IndexedFlag)"
        )
      val channels = version == ChannelsVersion
      val keyGroups = in.getInt()
      val timer = in.getLong()
      val liveKeys = in.getLong()
      val buckets = if (bucketed) in.getInt() else 0
      if (bucketed && buckets < 1) throw corrupt(s"$buckets key buckets")
      val index = if (indexed) WakeupIndex.read(in, corrupt) else null
      val table =
        if (indexed) WakeupTable.empty(version != Version)
        else WakeupTable.read(bytes, in, twoTimes = version != Version, corrupt)
      val valve =
        if (!channels) None
        else {
          val len = in.getInt()
          if (len < 0 || len > in.remaining) throw corrupt(s"channel watermarks of $len bytes")
          val b = new Array[Byte](len)
          in.get(b)
          Some(b)
        }
      if (in.hasRemaining) throw corrupt(s"${in.remaining} bytes after the wake-ups")
      new Stored(keyGroups, timer, liveKeys, table, valve, version == TwoClocksVersion, buckets, index)
    } catch {
      case _: java.nio.BufferUnderflowException => throw corrupt("it ends early")
    }
  }
}
