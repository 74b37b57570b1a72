package sparkwin.core.trigger

import sparkwin.core.{ArrayRecord, Record, TimerClocks}
import sparkwin.core.window.Window

/** The distance between two records: the absolute difference of one numeric field, or the
  * Euclidean distance over several; with `relative`, one field's difference as a fraction of
  * the reference's value (a move of 5% is 0.05; from 0, any move is infinitely far).
  */
final case class DeltaFunction(columns: Seq[Int], relative: Boolean = false) {
  require(columns.nonEmpty, "a delta needs at least one column")
  require(!relative || columns.size == 1, "a relative delta reads one column")

  /** The distance of `other` from `reference`. */
  def apply(reference: Record, other: Record): Double =
    if (relative) {
      val from = reference.getDouble(columns.head)
      val moved = math.abs(other.getDouble(columns.head) - from)
      if (moved == 0.0) 0.0 else moved / math.abs(from)
    } else if (columns.size == 1) math.abs(reference.getDouble(columns.head) - other.getDouble(columns.head))
    else
      math.sqrt(columns.map { c =>
        val d = reference.getDouble(c) - other.getDouble(c); d * d
      }.sum)
}

/** Fires when an element is more than `threshold` away from the element of the last firing
  * (the first element, before any firing).
  */
final case class DeltaTrigger(threshold: Double, delta: DeltaFunction) extends Trigger {
  import DeltaTrigger.Reference
  override def states: Seq[StateDescriptor] = Seq(Reference)

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    ctx.get(Reference) match {
      case null =>
        ctx.set(Reference, new ArrayRecord(record.toArray.clone()))
        TriggerResult.CONTINUE
      case last: Record if delta(last, record) > threshold =>
        ctx.set(Reference, new ArrayRecord(record.toArray.clone()))
        TriggerResult.FIRE
      case _ => TriggerResult.CONTINUE
    }

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def clear(window: Window, ctx: TriggerContext): Unit = ctx.clear(Reference)
}

object DeltaTrigger {

  /** The element of the last firing (the first element, before any). */
  val Reference = new StateDescriptor("reference")
}

/** Wraps `nested` and also fires when `timeout` of processing time has passed since the first
  * element after the last firing (or since the latest element, with `resetTimerOnNewRecord`).
  * With `clearOnTimeout` the nested trigger starts afresh after a timeout firing.
  *
  * Unlike Flink, only the trigger's own timeout timer forces a firing; other timers of the
  * window go to the nested trigger, so the window's cleanup does not cause an extra pane.
  */
final case class ProcessingTimeoutTrigger(
    nested: Trigger,
    timeout: Long,
    resetTimerOnNewRecord: Boolean,
    clearOnTimeout: Boolean
) extends Trigger {
  import ProcessingTimeoutTrigger.Timeout
  require(timeout > 0, s"timeout must be positive, got $timeout")
  override def states: Seq[StateDescriptor] = Seq(Timeout)
  override def ownClocks: TimerClocks = TimerClocks.Processing
  override def children: Seq[Trigger] = nested :: Nil
  override def childNames: Seq[String] = Seq("nested")

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val r = nested.onElement(record, ts, window, ctx.child(0))
    if (r.fire) { clear(window, ctx); r }
    else {
      val pending = Slots.optLong(ctx, Timeout)
      if (pending.isDefined && resetTimerOnNewRecord) {
        ctx.deleteProcessingTimeTimer(pending.get)
        ctx.clear(Timeout)
      }
      if (pending.isEmpty || resetTimerOnNewRecord) {
        val at = ctx.currentProcessingTime + timeout
        ctx.set(Timeout, at)
        ctx.registerProcessingTimeTimer(at)
      }
      r
    }
  }

  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (Slots.optLong(ctx, Timeout).contains(time)) {
      val r = nested.onProcessingTime(time, window, ctx.child(0))
      if (clearOnTimeout) clear(window, ctx) else ctx.clear(Timeout)
      if (r.purge) TriggerResult.FIRE_AND_PURGE else TriggerResult.FIRE
    } else afterNested(nested.onProcessingTime(time, window, ctx.child(0)), window, ctx)

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    afterNested(nested.onEventTime(time, window, ctx.child(0)), window, ctx)

  private def afterNested(r: TriggerResult, window: Window, ctx: TriggerContext): TriggerResult = {
    if (r.fire) clear(window, ctx)
    r
  }

  def clear(window: Window, ctx: TriggerContext): Unit = {
    Slots.optLong(ctx, Timeout).foreach(ctx.deleteProcessingTimeTimer)
    ctx.clear(Timeout)
    nested.clear(window, ctx.child(0))
  }

  override def beamPanes: Boolean = nested.beamPanes
}

object ProcessingTimeoutTrigger {

  /** When the pending timeout fires. */
  val Timeout = new StateDescriptor("timeout")
}
