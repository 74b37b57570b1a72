package sparkwin.core.time

import java.io.{DataInput, DataOutput}

/** Combines the watermarks of several input channels into one, as Flink's valve does.
  *
  * Per channel it keeps the last watermark, an active/idle status and whether the channel is
  * aligned. The output is the minimum over active, aligned channels and never decreases. A
  * channel that comes back from idleness behind the last output is not aligned (does not hold
  * the output back) until it catches up. When the last active channel turns idle the valve turns
  * idle, and if that channel held the output back it first emits the maximum watermark over all
  * channels (Flink's flush: windows close when every input has gone quiet). Watermarks that
  * arrive on an idle channel are ignored: a channel announces itself active before it sends
  * watermarks again.
  *
  * Unlike Flink, a channel going idle always lets the output advance to the minimum of the
  * aligned channels left (Flink recomputes it only when that channel held the minimum), so an
  * output Flink would emit at the next watermark comes out at once. Channels can be added while
  * it runs ([[addChannel]]): a new channel starts idle, as a channel that has not delivered yet.
  */
final class StatusWatermarkValve(initialChannels: Int) {
  require(initialChannels >= 0, s"a valve cannot have $initialChannels channels")

  private var count = initialChannels
  private var watermarks = Array.fill(initialChannels)(Long.MinValue)
  private var idle = Array.fill(initialChannels)(false)
  private var aligned = Array.fill(initialChannels)(true)
  private var lastOutput = Long.MinValue
  private var valveIdle = initialChannels == 0

  def numChannels: Int = count

  /** The last watermark the valve emitted (Long.MinValue before the first). */
  def currentWatermark: Long = lastOutput

  /** True when every channel is idle. */
  def isIdle: Boolean = valveIdle

  def isChannelIdle(channel: Int): Boolean = { check(channel); idle(channel) }

  def isChannelAligned(channel: Int): Boolean = { check(channel); aligned(channel) }

  def channelWatermark(channel: Int): Long = { check(channel); watermarks(channel) }

  /** A new channel, idle until it is marked active; returns its index. */
  def addChannel(): Int = {
    if (count == watermarks.length) {
      val size = math.max(4, count * 2)
      watermarks = java.util.Arrays.copyOf(watermarks, size)
      idle = java.util.Arrays.copyOf(idle, size)
      aligned = java.util.Arrays.copyOf(aligned, size)
    }
    watermarks(count) = Long.MinValue
    idle(count) = true
    aligned(count) = false
    count += 1
    valveIdle = (0 until count).forall(idle)
    count - 1
  }

  /** Feeds a channel's watermark; returns the new output watermark if it advanced. */
  def inputWatermark(watermark: Long, channel: Int): Option[Long] = {
    check(channel)
    if (idle(channel) || watermark <= watermarks(channel)) return None
    watermarks(channel) = watermark
    if (!aligned(channel) && watermark >= lastOutput) aligned(channel) = true
    advance()
  }

  /** Marks a channel idle; the output may advance because the channel no longer holds it back,
    * or, when it was the last active channel and held the output back, flush to the maximum.
    */
  def markIdle(channel: Int): Option[Long] = {
    check(channel)
    if (idle(channel)) return None
    idle(channel) = true
    aligned(channel) = false
    if ((0 until count).forall(idle)) {
      valveIdle = true
      if (watermarks(channel) == lastOutput) flushToMaximum() else None
    } else advance()
  }

  /** Marks a new channel active and aligned at once: it holds the output back from now on, even
    * behind it, until it catches up (Flink's per-split watermarks: a split added to a source
    * reader holds the reader's watermark from the moment it is added).
    */
  def join(channel: Int): Unit = {
    markActive(channel)
    aligned(channel) = true
  }

  /** Marks a channel active again. It rejoins the minimum once it has caught up. */
  def markActive(channel: Int): Unit = {
    check(channel)
    if (!idle(channel)) return
    idle(channel) = false
    aligned(channel) = watermarks(channel) >= lastOutput
    valveIdle = false
  }

  private def advance(): Option[Long] = {
    var min = Long.MaxValue
    var any = false
    var i = 0
    while (i < count) {
      if (!idle(i) && aligned(i)) { any = true; if (watermarks(i) < min) min = watermarks(i) }
      i += 1
    }
    if (any && min > lastOutput) { lastOutput = min; Some(min) }
    else None
  }

  private def flushToMaximum(): Option[Long] = {
    var max = Long.MinValue
    var i = 0
    while (i < count) { if (watermarks(i) > max) max = watermarks(i); i += 1 }
    if (max > lastOutput) { lastOutput = max; Some(max) }
    else None
  }

  private def check(channel: Int): Unit =
    if (channel < 0 || channel >= count)
      throw new IllegalArgumentException(s"channel must be in [0, $count), got $channel")

  /** The valve's whole state, for a runtime that keeps it in a checkpoint. */
  def write(out: DataOutput): Unit = {
    out.writeInt(count)
    var i = 0
    while (i < count) {
      out.writeLong(watermarks(i))
      out.writeBoolean(idle(i))
      out.writeBoolean(aligned(i))
      i += 1
    }
    out.writeLong(lastOutput)
    out.writeBoolean(valveIdle)
  }
}

object StatusWatermarkValve {

  /** A valve as [[StatusWatermarkValve.write]] left it. */
  def read(in: DataInput): StatusWatermarkValve = {
    val n = sparkwin.core.CorruptStateException.count(in, 10, "the valve's channels") // 8 + 2 bytes each
    if (n > (1 << 20)) throw new IllegalStateException(s"a saved valve of $n channels")
    val v = new StatusWatermarkValve(n)
    for (i <- 0 until n) {
      v.watermarks(i) = in.readLong()
      v.idle(i) = in.readBoolean()
      v.aligned(i) = in.readBoolean()
    }
    v.lastOutput = in.readLong()
    v.valveIdle = in.readBoolean()
    v
  }
}
