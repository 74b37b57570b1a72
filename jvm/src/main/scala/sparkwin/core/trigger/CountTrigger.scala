package sparkwin.core.trigger

import sparkwin.core.Record
import sparkwin.core.window.Window

/** Fires every `count` elements of a window; the count restarts after each firing. */
final case class CountTrigger(count: Long) extends Trigger {
  require(count > 0, s"count must be positive, got $count")
  override protected def ownSlots: Int = 1

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val n = Slots.long(ctx, slot(0)) + 1
    if (n >= count) { ctx.clearState(slot(0)); TriggerResult.FIRE }
    else { ctx.setState(slot(0), n); TriggerResult.CONTINUE }
  }

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE

  override def canMerge: Boolean = true

  // Counts add up; a merged count over the threshold fires with the next element, as in Flink.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    Slots.mergeLongs(ctx, slot(0), _ + _)

  def clear(window: Window, ctx: TriggerContext): Unit = ctx.clearState(slot(0))
}

/** Turns every firing of `nested` into fire-and-purge: each pane holds only new elements. */
final case class PurgingTrigger(nested: Trigger) extends Trigger {
  override def children: Seq[Trigger] = nested :: Nil

  private def purging(r: TriggerResult): TriggerResult =
    if (r.fire) r.copy(purge = true) else r

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    purging(nested.onElement(record, ts, window, ctx))
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    purging(nested.onEventTime(time, window, ctx))
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    purging(nested.onProcessingTime(time, window, ctx))
  override def canMerge: Boolean = nested.canMerge
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = nested.onMerge(window, ctx)
  def clear(window: Window, ctx: TriggerContext): Unit = nested.clear(window, ctx)
  override def beamPanes: Boolean = nested.beamPanes
}
