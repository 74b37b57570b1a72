package sparkwin.runtime.spark

import java.nio.ByteBuffer

/** When a key of a group must next be woken: at event time `at`, and at processing time
  * `processingAt` (Long.MaxValue: never; kept only by pipelines with channels or processing-time
  * timers).
  */
final case class Wakeup(key: Array[Byte], at: Long, processingAt: Long = Long.MaxValue)

/** A key's [[KeyBytes]] as a hash-map key: compared and hashed by content. The hash mixes every
  * byte (Murmur3): `Arrays.hashCode`'s sum of bytes times powers of 31 gives many numeric keys'
  * `UnsafeRow` bytes the same hash, and a group's wake-up table turned into tree bins.
  */
final class KeyId(val bytes: Array[Byte]) {
  override val hashCode: Int = scala.util.hashing.MurmurHash3.bytesHash(bytes)
  override def equals(other: Any): Boolean = other match {
    case o: KeyId => java.util.Arrays.equals(bytes, o.bytes)
    case _ => false
  }
}

/** A key group's record (DESIGN.md, "State variables"): the number of key groups the checkpoint
  * was written with, the group's one Spark timer (`Long.MinValue`: none), how many of its keys
  * hold state, the wake-up table (each key with pending engine timers, as [[KeyBytes]], and when
  * it must wake, in the order the keys were added), and for pipelines with channels the group's
  * copy of the channel watermarks (`core.time.ChannelWatermarks`' saved form).
  *
  * Layout 1 (no channels), big-endian: a version byte, the number of key groups (int), the timer
  * and the count of keys with state (longs), then the wake-up table: a count, and per key its
  * bytes' length, the bytes and the time. Layout 2 (channels) has both times per key, then the
  * channel watermarks' length and bytes; layout 3 (processing-time timers, no channels) both
  * times per key and nothing after. A record of another version or length is refused with
  * a message, never misread.
  */
final case class GroupRecord(
    keyGroups: Int,
    timer: Long,
    liveKeys: Long,
    wakeups: Seq[Wakeup],
    channels: Option[Array[Byte]] = None,
    processing: Boolean = false
) {

  /** Both times per key: with channels, or with processing-time timers. */
  def twoTimes: Boolean = channels.isDefined || processing
}

object GroupRecord {

  /** The layouts this jar reads: 1 with event time only, 2 with channels, 3 with both clocks. */
  val Version: Byte = 1
  val ChannelsVersion: Byte = 2
  val TwoClocksVersion: Byte = 3

  def encode(r: GroupRecord): Array[Byte] = {
    val perKey = if (r.twoTimes) 16 else 8
    val size = 1 + 4 + 8 + 8 + 4 + r.wakeups.iterator.map(_.key.length + 4 + perKey).sum +
      r.channels.fold(0)(4 + _.length)
    val out = ByteBuffer.allocate(size)
    out.put(if (r.channels.isDefined) ChannelsVersion else if (r.processing) TwoClocksVersion else Version)
    out.putInt(r.keyGroups).putLong(r.timer).putLong(r.liveKeys).putInt(r.wakeups.size)
    r.wakeups.foreach { w =>
      out.putInt(w.key.length).put(w.key).putLong(w.at)
      if (r.twoTimes) out.putLong(w.processingAt)
    }
    r.channels.foreach(c => out.putInt(c.length).put(c))
    out.array()
  }

  def decode(bytes: Array[Byte]): GroupRecord = {
    val in = ByteBuffer.wrap(bytes)
    def corrupt(why: String) =
      new IllegalStateException(s"a key group's record of ${bytes.length} bytes is unreadable: $why")
    try {
      val version = in.get()
      if (version < Version || version > TwoClocksVersion)
        throw corrupt(s"layout $version, this sparkwin reads layouts $Version to $TwoClocksVersion")
      val channels = version == ChannelsVersion
      val twoTimes = version != Version
      val keyGroups = in.getInt()
      val timer = in.getLong()
      val liveKeys = in.getLong()
      val n = in.getInt()
      val perKey = if (twoTimes) 16 else 8
      if (n < 0 || n > in.remaining / (4 + perKey)) throw corrupt(s"$n wake-ups")
      val wakeups = Vector.fill(n) {
        val len = in.getInt()
        if (len < 0 || len > in.remaining - perKey) throw corrupt(s"a key of $len bytes")
        val key = new Array[Byte](len)
        in.get(key)
        val at = in.getLong()
        Wakeup(key, at, if (twoTimes) in.getLong() else Long.MaxValue)
      }
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
      GroupRecord(keyGroups, timer, liveKeys, wakeups, valve, processing = version == TwoClocksVersion)
    } catch {
      case _: java.nio.BufferUnderflowException => throw corrupt("it ends early")
    }
  }
}
