package sparkwin.core.trigger

import sparkwin.core.Record
import sparkwin.core.window.Window

/** Fires a window when an element whose boolean column `column` is true arrives (a "checkout",
  * an end-of-batch marker, a value past a threshold): the condition is a Spark Column that Spark
  * computes into that column before the engine sees the element. False and null do not fire.
  * It keeps no state and sets no timer, so it merges and nests anywhere (early or late firings
  * of `AfterWatermark`, `Repeatedly`, `AfterFirst`, `orFinally`); wrap it in `PurgingTrigger`
  * to purge.
  */
final case class ConditionTrigger(column: Int) extends Trigger {
  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (record.get(column) == java.lang.Boolean.TRUE) TriggerResult.FIRE else TriggerResult.CONTINUE
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  override def canMerge: Boolean = true
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = () // nothing kept to merge
  def clear(window: Window, ctx: TriggerContext): Unit = ()
}
