package sparkwin.core.trigger

import sparkwin.core.Record
import sparkwin.core.window.Window

/** What a trigger decides: emit the window's contents (`fire`), clear them (`purge`), and, for
  * Beam-style triggers, whether the trigger is done with the window for good (`finish`: the
  * window is closed and later elements for it are dropped and counted).
  */
final case class TriggerResult(fire: Boolean, purge: Boolean, finish: Boolean = false) {
  override def toString: String =
    (if (fire) "FIRE" else "") + (if (fire && purge) "_AND_" else "") + (if (purge) "PURGE" else "") +
      (if (!fire && !purge) "CONTINUE" else "") + (if (finish) "+FINISH" else "")
}

object TriggerResult {
  val CONTINUE: TriggerResult = TriggerResult(fire = false, purge = false)
  val FIRE: TriggerResult = TriggerResult(fire = true, purge = false)
  val PURGE: TriggerResult = TriggerResult(fire = false, purge = true)
  val FIRE_AND_PURGE: TriggerResult = TriggerResult(fire = true, purge = true)
  val FIRE_AND_FINISH: TriggerResult = TriggerResult(fire = true, purge = false, finish = true)
}

/** What a trigger may use while deciding about one window of one key. State lives in numbered
  * slots that belong to the window; each trigger in a trigger tree owns its own slots.
  */
trait TriggerContext {
  def window: Window
  def currentWatermark: Long
  def currentProcessingTime: Long
  def registerEventTimeTimer(time: Long): Unit
  def deleteEventTimeTimer(time: Long): Unit
  def registerProcessingTimeTimer(time: Long): Unit
  def deleteProcessingTimeTimer(time: Long): Unit
  def getState(slot: Int): Any
  def setState(slot: Int, value: Any): Unit
  final def clearState(slot: Int): Unit = setState(slot, null)
}

/** During a merge: the context of the merged window, plus the slot values of the windows that
  * were merged into it (nulls included, one per merged window).
  */
trait OnMergeContext extends TriggerContext {
  def mergedStates(slot: Int): Seq[Any]
}

/** Decides when a window's contents are emitted, as in Flink: on each element, on event-time
  * and processing-time timers, and when session windows merge.
  *
  * Triggers are stateless values shared by all keys and windows; per-window state goes through
  * the context's slots. `bind` numbers the slots of a trigger tree once, before use.
  */
abstract class Trigger {
  private var base = -1

  /** How many state slots this trigger itself needs (children excluded). */
  protected def ownSlots: Int = 0

  /** Direct children, for composite triggers. */
  def children: Seq[Trigger] = Nil

  /** Numbers this trigger's and its children's slots from `first`; returns the next free slot. */
  final def bind(first: Int): Int = {
    if (base >= 0 && base != first && (ownSlots > 0 || children.nonEmpty))
      throw new IllegalStateException(
        s"$this already sits elsewhere in a trigger tree; build a new instance for each place"
      )
    base = first
    children.foldLeft(first + ownSlots)((next, child) => child.bind(next))
  }

  /** The absolute slot of this trigger's `i`-th own slot. */
  protected final def slot(i: Int): Int = {
    if (base < 0) throw new IllegalStateException(s"$this was used before bind()")
    base + i
  }

  def onElement(record: Record, timestamp: Long, window: Window, ctx: TriggerContext): TriggerResult
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult

  /** Whether the trigger can run on merging (session) windows. */
  def canMerge: Boolean = false

  def onMerge(window: Window, ctx: OnMergeContext): Unit =
    throw new UnsupportedOperationException(s"$this does not support merging windows")

  /** Drops the trigger's state and timers for the window. */
  def clear(window: Window, ctx: TriggerContext): Unit

  /** True for Beam's triggers: the operator then follows Beam's pane rules (panes without new
    * elements are suppressed except the on-time one, and a final pane flushes unfired elements
    * when the window expires). Flink's triggers keep Flink's rules.
    */
  def beamPanes: Boolean = false
}

/** Shared helpers for triggers' slot state. */
private[trigger] object Slots {
  def long(ctx: TriggerContext, slot: Int): Long = ctx.getState(slot) match {
    case null => 0L
    case v: Long => v
    case n: java.lang.Number => n.longValue
    case other => throw new IllegalStateException(s"corrupt trigger state $other")
  }

  def optLong(ctx: TriggerContext, slot: Int): Option[Long] = ctx.getState(slot) match {
    case null => None
    case n: java.lang.Number => Some(n.longValue)
    case other => throw new IllegalStateException(s"corrupt trigger state $other")
  }

  def flag(ctx: TriggerContext, slot: Int): Boolean = ctx.getState(slot) == true

  def setFlag(ctx: TriggerContext, slot: Int, on: Boolean): Unit =
    ctx.setState(slot, if (on) true else null)

  /** Merges the slot values of merged windows into the target with `combine`. */
  def mergeLongs(ctx: OnMergeContext, slot: Int, combine: (Long, Long) => Long): Option[Long] = {
    val values = (ctx.getState(slot) +: ctx.mergedStates(slot)).collect { case n: java.lang.Number =>
      n.longValue
    }
    val merged = values.reduceOption(combine)
    ctx.setState(slot, merged.map(Long.box).orNull)
    merged
  }

  /** Aligns `t` down to a multiple of `interval`; floorMod keeps negative times aligned. */
  def alignDown(t: Long, interval: Long): Long = t - java.lang.Math.floorMod(t, interval)
}
