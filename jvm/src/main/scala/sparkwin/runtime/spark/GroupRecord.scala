package sparkwin.runtime.spark

import sparkwin.plan._
import sparkwin.runtime.spark._

import java.nio.ByteBuffer

/** A key group's record (DESIGN.md, "State variables"): the number of key groups the checkpoint was
  * written with, the group's one Spark timer (`Long.MinValue`: none), how many of its keys hold
  * state, and the wake-up table: each key with pending engine timers (as [[KeyBytes]]) and
  * when it must wake, in the order the keys were added.
  */
final case class GroupRecord(keyGroups: Int, timer: Long, liveKeys: Long, wakeups: Seq[(Array[Byte], Long)])

object GroupRecord {

  /** The layout's version, the record's first byte: a later layout must refuse this one or
    * read it, never misread it.
    */
  val Version: Byte = 1

  def encode(r: GroupRecord): Array[Byte] = {
    val size = 1 + 4 + 8 + 8 + 4 + r.wakeups.iterator.map(_._1.length + 4 + 8).sum
    val out = ByteBuffer.allocate(size)
    out.put(Version).putInt(r.keyGroups).putLong(r.timer).putLong(r.liveKeys).putInt(r.wakeups.size)
    r.wakeups.foreach { case (key, at) => out.putInt(key.length).put(key).putLong(at) }
    out.array()
  }

  def decode(bytes: Array[Byte]): GroupRecord = {
    val in = ByteBuffer.wrap(bytes)
    def corrupt(why: String) =
      new IllegalStateException(s"a key group's record of ${bytes.length} bytes is unreadable: $why")
    try {
      val version = in.get()
      if (version != Version) throw corrupt(s"layout $version, this sparkwin reads layout $Version")
      val keyGroups = in.getInt()
      val timer = in.getLong()
      val liveKeys = in.getLong()
      val n = in.getInt()
      if (n < 0 || n > in.remaining / 12) throw corrupt(s"$n wake-ups")
      val wakeups = Vector.fill(n) {
        val len = in.getInt()
        if (len < 0 || len > in.remaining - 8) throw corrupt(s"a key of $len bytes")
        val key = new Array[Byte](len)
        in.get(key)
        (key, in.getLong())
      }
      if (in.hasRemaining) throw corrupt(s"${in.remaining} bytes after the wake-ups")
      GroupRecord(keyGroups, timer, liveKeys, wakeups)
    } catch {
      case _: java.nio.BufferUnderflowException => throw corrupt("it ends early")
    }
  }
}
