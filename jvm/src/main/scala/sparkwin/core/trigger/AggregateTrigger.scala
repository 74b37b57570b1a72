package sparkwin.core.trigger

import sparkwin.core.{Record, Values}
import sparkwin.core.window.Window

/** A running aggregate of a window's elements since the trigger's last firing, as a pane
  * condition reads it: `count`, `sum`, `min`, `max` or `avg` of a numeric column (`count` of
  * every element without one), over the elements whose boolean `filter` column is true when
  * there is one. Nulls do not count, as in SQL.
  */
final case class RunningAggregate(fn: String, column: Int, filter: Int) {
  require(RunningAggregate.Functions(fn), s"a running aggregate is one of ${RunningAggregate.Functions}")
  require(column >= 0 || fn == "count", s"$fn needs a column")

  /** The value a pane with `total` over `seen` values has (null: no value yet, SQL's null). */
  def value(total: Double, seen: Long): java.lang.Double =
    if (fn == "count") seen.toDouble
    else if (seen == 0) null
    else if (fn == "avg") total / seen
    else total

  /** Whether `record` adds to the aggregate, and with which value. */
  def takes(record: Record): Boolean =
    (filter < 0 || record.get(filter) == java.lang.Boolean.TRUE) && (column < 0 || !record.isNullAt(column))

  def add(total: Double, seen: Long, x: Double): Double =
    if (seen == 0) x
    else
      fn match {
        case "min" => math.min(total, x)
        case "max" => math.max(total, x)
        case _ => total + x
      }

  /** Two panes' totals as one (their seen counts add up). */
  def merge(a: Double, aSeen: Long, b: Double, bSeen: Long): Double =
    if (aSeen == 0) b else if (bSeen == 0) a else add(a, aSeen, b)
}

object RunningAggregate {
  val Functions: Set[String] = Set("count", "sum", "min", "max", "avg")
}

/** Fires a window when its running aggregate, over the elements since this trigger's last
  * firing, satisfies `op threshold` after an element (Flink users write this with a
  * `ReducingState`): `count() >= 100` fires as `CountTrigger.of(100)` does, `sum(amount) >=
  * 1000` every time another 1000 has come in. The aggregate restarts after each firing; an
  * element that does not add to it (filtered out, or null) does not fire. Merged sessions
  * combine their running aggregates, so it works on session windows.
  */
final case class AggregateTrigger(aggregate: RunningAggregate, op: String, threshold: Double)
    extends Trigger {
  import AggregateTrigger.{Seen, Total}
  require(AggregateTrigger.Comparisons(op), s"op is one of ${AggregateTrigger.Comparisons}")
  override def states: Seq[StateDescriptor] = Seq(Total, Seen)

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (!aggregate.takes(record)) TriggerResult.CONTINUE
    else {
      val seen = Slots.long(ctx, Seen)
      val x = if (aggregate.fn == "count") 0.0 else Values.toDouble(record.get(aggregate.column))
      val total = aggregate.add(runningTotal(ctx), seen, x)
      if (holds(aggregate.value(total, seen + 1))) { clear(window, ctx); TriggerResult.FIRE }
      else { ctx.set(Total, total); ctx.set(Seen, seen + 1); TriggerResult.CONTINUE }
    }

  private def runningTotal(ctx: TriggerContext): Double = ctx.get(Total) match {
    case null => 0.0
    case d: java.lang.Number => d.doubleValue
    case other => throw new IllegalStateException(s"corrupt trigger state $other")
  }

  private def holds(value: java.lang.Double): Boolean = value != null && (op match {
    case ">=" => value >= threshold
    case ">" => value > threshold
    case "<=" => value <= threshold
    case _ => value < threshold
  })

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult = TriggerResult.CONTINUE
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE

  override def canMerge: Boolean = true

  // The merged pane's aggregate covers every merged pane's; like CountTrigger, a merged
  // aggregate that satisfies the condition fires with the next element, as in Flink.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = {
    var total = runningTotal(ctx)
    var seen = Slots.long(ctx, Seen)
    ctx.mergedStates(Total).zip(ctx.mergedStates(Seen)).foreach {
      case (t: java.lang.Number, s: java.lang.Number) =>
        total = aggregate.merge(total, seen, t.doubleValue, s.longValue)
        seen += s.longValue
      case _ =>
    }
    if (seen > 0) { ctx.set(Total, total); ctx.set(Seen, seen) }
  }

  def clear(window: Window, ctx: TriggerContext): Unit = { ctx.clear(Total); ctx.clear(Seen) }
}

object AggregateTrigger {
  val Comparisons: Set[String] = Set(">=", ">", "<=", "<")

  /** The running total (a sum, or the smallest or largest value). */
  val Total = new StateDescriptor("total")

  /** How many values it covers. */
  val Seen = new StateDescriptor("seen")
}
