package sparkwin.core.time

/** Combines the watermarks of several input channels into one.
  *
  * Per channel it keeps the last watermark, an active/idle status and whether the channel is
  * aligned. The output is the minimum over active, aligned channels and never decreases. A
  * channel that comes back from idleness behind the last output is not aligned (does not hold
  * the output back) until it catches up. When every channel is idle the valve is idle and emits
  * nothing. Watermarks that arrive on an idle channel are ignored: a channel announces itself
  * active before it sends watermarks again.
  */
final class StatusWatermarkValve(val numChannels: Int) {
  require(numChannels > 0, s"a valve needs at least one channel, got $numChannels")

  private val watermarks = Array.fill(numChannels)(Long.MinValue)
  private val idle = Array.fill(numChannels)(false)
  private val aligned = Array.fill(numChannels)(true)
  private var lastOutput = Long.MinValue
  private var valveIdle = false

  /** The last watermark the valve emitted (Long.MinValue before the first). */
  def currentWatermark: Long = lastOutput

  def isIdle: Boolean = valveIdle

  def isChannelIdle(channel: Int): Boolean = { check(channel); idle(channel) }

  def isChannelAligned(channel: Int): Boolean = { check(channel); aligned(channel) }

  def channelWatermark(channel: Int): Long = { check(channel); watermarks(channel) }

  /** Feeds a channel's watermark; returns the new output watermark if it advanced. */
  def inputWatermark(watermark: Long, channel: Int): Option[Long] = {
    check(channel)
    if (idle(channel) || watermark <= watermarks(channel)) return None
    watermarks(channel) = watermark
    if (!aligned(channel) && watermark >= lastOutput) aligned(channel) = true
    advance()
  }

  /** Marks a channel idle; the output may advance because the channel no longer holds it back. */
  def markIdle(channel: Int): Option[Long] = {
    check(channel)
    if (idle(channel)) return None
    idle(channel) = true
    aligned(channel) = false
    if (idle.forall(identity)) { valveIdle = true; None }
    else advance()
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
    while (i < numChannels) {
      if (!idle(i) && aligned(i)) { any = true; if (watermarks(i) < min) min = watermarks(i) }
      i += 1
    }
    if (any && min > lastOutput) { lastOutput = min; Some(min) }
    else None
  }

  private def check(channel: Int): Unit =
    if (channel < 0 || channel >= numChannels)
      throw new IllegalArgumentException(
        s"channel must be in [0, $numChannels), got $channel"
      )
}
