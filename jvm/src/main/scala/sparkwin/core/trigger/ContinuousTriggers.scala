package sparkwin.core.trigger

import sparkwin.core.{Record, TimerClocks}
import sparkwin.core.window.Window

/** Fires every `interval` of event time while the window is open, and at its end.
  *
  * The first firing is the first multiple of `interval` after the first element's timestamp
  * (aligned with a floor modulo, so negative timestamps work); firings never go past the
  * window's end. It keeps contents between firings: wrap it in [[PurgingTrigger]] for deltas.
  */
final case class ContinuousEventTimeTrigger(interval: Long) extends Trigger {
  override def ownClocks: TimerClocks = TimerClocks.Event
  require(interval > 0, s"interval must be positive, got $interval")
  import ContinuousEventTimeTrigger.NextFire
  override def states: Seq[StateDescriptor] = Seq(NextFire)

  private def registerNext(from: Long, window: Window, ctx: TriggerContext): Unit = {
    val next = ContinuousEventTimeTrigger.nextFire(from, interval, window)
    ctx.set(NextFire, next)
    ctx.registerEventTimeTimer(next)
  }

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (window.maxTimestamp <= ctx.currentWatermark) TriggerResult.FIRE
    else {
      ctx.registerEventTimeTimer(window.maxTimestamp)
      if (ctx.get(NextFire) == null) registerNext(Slots.alignDown(ts, interval), window, ctx)
      TriggerResult.CONTINUE
    }

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (time == window.maxTimestamp) TriggerResult.FIRE
    else if (Slots.optLong(ctx, NextFire).contains(time)) {
      // After the end of input (watermark +infinity) a window that never ends would fire every
      // interval up to Long.MaxValue, each pane the same as this one: no element can come.
      if (ctx.currentWatermark == Long.MaxValue && window.maxTimestamp == Long.MaxValue) ctx.clear(NextFire)
      else registerNext(time, window, ctx)
      TriggerResult.FIRE
    } else TriggerResult.CONTINUE

  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE

  override def canMerge: Boolean = true

  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    Slots.mergeLongs(ctx, NextFire, math.min).foreach(ctx.registerEventTimeTimer)

  def clear(window: Window, ctx: TriggerContext): Unit = {
    Slots.optLong(ctx, NextFire).foreach(ctx.deleteEventTimeTimer)
    ctx.clear(NextFire)
  }
}

/** Fires every `interval` of processing time, aligned to multiples of the interval, starting
  * from the first element's arrival; never later than the window's end.
  */
final case class ContinuousProcessingTimeTrigger(interval: Long) extends Trigger {
  override def ownClocks: TimerClocks = TimerClocks.Processing
  require(interval > 0, s"interval must be positive, got $interval")
  import ContinuousEventTimeTrigger.NextFire
  override def states: Seq[StateDescriptor] = Seq(NextFire)

  private def registerNext(from: Long, window: Window, ctx: TriggerContext): Unit = {
    val next = ContinuousEventTimeTrigger.nextFire(from, interval, window)
    ctx.set(NextFire, next)
    ctx.registerProcessingTimeTimer(next)
  }

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    if (ctx.get(NextFire) == null)
      registerNext(Slots.alignDown(ctx.currentProcessingTime, interval), window, ctx)
    TriggerResult.CONTINUE
  }

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE

  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (time == window.maxTimestamp) TriggerResult.FIRE
    else if (Slots.optLong(ctx, NextFire).contains(time)) {
      registerNext(time, window, ctx)
      TriggerResult.FIRE
    } else TriggerResult.CONTINUE

  override def canMerge: Boolean = true

  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    Slots.mergeLongs(ctx, NextFire, math.min).foreach(ctx.registerProcessingTimeTimer)

  def clear(window: Window, ctx: TriggerContext): Unit = {
    Slots.optLong(ctx, NextFire).foreach(ctx.deleteProcessingTimeTimer)
    ctx.clear(NextFire)
  }
}

object ContinuousEventTimeTrigger {

  /** When the next periodic firing is due (both continuous triggers keep it). */
  val NextFire = new StateDescriptor("nextFire")

  /** The firing after `from`, never past the window's end, and without overflowing a long. */
  def nextFire(from: Long, interval: Long, window: Window): Long =
    if (from > window.maxTimestamp - interval) window.maxTimestamp else from + interval
}
