package sparkwin.core.trigger

import sparkwin.core.{Record, TimerClocks}
import sparkwin.core.window.Window

/** Fires once the watermark passes the window's end, and again for every element that arrives
  * within allowed lateness (the default for event-time windows).
  */
case object EventTimeTrigger extends Trigger {
  override def ownClocks: TimerClocks = TimerClocks.Event

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (window.maxTimestamp <= ctx.currentWatermark) TriggerResult.FIRE
    else { ctx.registerEventTimeTimer(window.maxTimestamp); TriggerResult.CONTINUE }

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (time == window.maxTimestamp) TriggerResult.FIRE else TriggerResult.CONTINUE

  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE

  override def canMerge: Boolean = true

  // A merged window already behind the watermark fires on its next element instead, so no
  // timer: one would make it fire twice.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    if (window.maxTimestamp > ctx.currentWatermark) ctx.registerEventTimeTimer(window.maxTimestamp)

  def clear(window: Window, ctx: TriggerContext): Unit =
    ctx.deleteEventTimeTimer(window.maxTimestamp)

  override def toString: String = "EventTimeTrigger"
}

/** Fires when processing time reaches the window's end (default for processing-time windows). */
case object ProcessingTimeTrigger extends Trigger {
  override def ownClocks: TimerClocks = TimerClocks.Processing

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    ctx.registerProcessingTimeTimer(window.maxTimestamp)
    TriggerResult.CONTINUE
  }

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE

  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (time == window.maxTimestamp) TriggerResult.FIRE else TriggerResult.CONTINUE

  override def canMerge: Boolean = true

  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    if (window.maxTimestamp > ctx.currentProcessingTime)
      ctx.registerProcessingTimeTimer(window.maxTimestamp)

  def clear(window: Window, ctx: TriggerContext): Unit =
    ctx.deleteProcessingTimeTimer(window.maxTimestamp)

  override def toString: String = "ProcessingTimeTrigger"
}

/** Never fires (the default for global windows: pair them with a real trigger). */
case object NeverTrigger extends Trigger {
  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  override def canMerge: Boolean = true
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = ()
  def clear(window: Window, ctx: TriggerContext): Unit = ()
  override def toString: String = "NeverTrigger"
}
