package sparkwin.core.trigger

import sparkwin.core.Record
import sparkwin.core.window.Window

/** Fires every `count` elements of a window; the count restarts after each firing. */
final case class CountTrigger(count: Long) extends Trigger {
  import CountTrigger.Count
  require(count > 0, s"count must be positive, got $count")
  override def states: Seq[StateDescriptor] = Seq(Count)

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val n = Slots.long(ctx, Count) + 1
    if (n >= count) { ctx.clear(Count); TriggerResult.FIRE }
    else { ctx.set(Count, n); TriggerResult.CONTINUE }
  }

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE

  override def canMerge: Boolean = true

  // Counts add up; a merged count over the threshold fires with the next element, as in Flink.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    Slots.mergeLongs(ctx, Count, _ + _)

  def clear(window: Window, ctx: TriggerContext): Unit = ctx.clear(Count)
}

object CountTrigger {

  /** Elements since the last firing. */
  val Count = new StateDescriptor("count")
}

/** Turns every firing of `nested` into fire-and-purge: each pane holds only new elements. */
final case class PurgingTrigger(nested: Trigger) extends Trigger {
  override def children: Seq[Trigger] = nested :: Nil
  override def childNames: Seq[String] = Seq("nested")

  private def purging(r: TriggerResult): TriggerResult =
    if (r.fire) r.copy(purge = true) else r

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    purging(nested.onElement(record, ts, window, ctx.child(0)))
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    purging(nested.onEventTime(time, window, ctx.child(0)))
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    purging(nested.onProcessingTime(time, window, ctx.child(0)))
  override def canMerge: Boolean = nested.canMerge
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = nested.onMerge(window, ctx.child(0))
  def clear(window: Window, ctx: TriggerContext): Unit = nested.clear(window, ctx.child(0))
  override def beamPanes: Boolean = nested.beamPanes
}
