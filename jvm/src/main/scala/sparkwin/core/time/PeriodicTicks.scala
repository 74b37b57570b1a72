package sparkwin.core.time

/** When periodic watermark emission can change anything.
  *
  * Generators emit every `interval` of processing time (ticks at `start + k * interval`), but
  * between elements every tick emits the same values, except that a channel becomes idle at
  * the first tick at least `idleTimeout` after its last element. So only two kinds of tick
  * matter: the first tick after new elements, and each active channel's idleness deadline.
  * Visiting just those is exactly equivalent to visiting every tick.
  */
final class PeriodicTicks(val interval: Long, start: Long, channels: Int, idleTimeout: Option[Long]) {
  require(interval > 0, s"interval must be positive, got $interval")
  private var nextTick = start + interval
  private var fresh = false // elements since the last tick
  private val lastActivity = Array.fill(channels)(start)
  private val idle = Array.fill(channels)(false)

  /** An element arrived on `channel` at processing time `time` (after ticks up to `time`). */
  def onElement(channel: Int, time: Long): Unit = {
    if (time > lastActivity(channel)) lastActivity(channel) = time
    idle(channel) = false
    fresh = true
    if (nextTick <= time) nextTick = firstTickAfter(time)
  }

  /** The next tick at or before `limit` that can change a channel, or Long.MaxValue. */
  def next(limit: Long): Long = {
    var best = if (fresh && nextTick <= limit) nextTick else Long.MaxValue
    idleTimeout.foreach { timeout =>
      var c = 0
      while (c < channels) {
        if (!idle(c)) {
          val deadline = lastActivity(c) + timeout
          val tick = if (deadline <= nextTick) nextTick else ceilTick(deadline)
          if (tick <= limit && tick < best) best = tick
        }
        c += 1
      }
    }
    best
  }

  /** The tick at `time` was emitted. */
  def visited(time: Long): Unit = {
    fresh = false
    idleTimeout.foreach { timeout =>
      for (c <- 0 until channels if time - lastActivity(c) >= timeout) idle(c) = true
    }
    nextTick = time + interval
  }

  private def firstTickAfter(t: Long): Long =
    start + (java.lang.Math.floorDiv(t - start, interval) + 1) * interval

  private def ceilTick(t: Long): Long = {
    val k = java.lang.Math.floorDiv(t - start + interval - 1, interval)
    start + k * interval
  }
}
