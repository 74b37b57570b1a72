package sparkwin.core.trigger

import sparkwin.core.{Record, TimerClocks}
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

/** A named piece of a trigger's per-window state, like Flink's state descriptors. A trigger
  * declares its descriptors ([[Trigger.states]]) and reads and writes them through its context;
  * the state is saved by its full name (the trigger's place in the tree, then this name) and
  * version, so a checkpoint can say which trigger state it holds. Bump `version` when what the
  * value means changes.
  */
final class StateDescriptor(val name: String, val version: Int = 1) {
  require(name.nonEmpty && !name.contains('.'), s"a state name is a non-empty word, got '$name'")
  override def toString: String = s"$name@$version"
}

/** What a trigger may use while deciding about one window of one key: clocks, timers, its own
  * named state, and the contexts of its children (composite triggers hand each child its own).
  */
trait TriggerContext {
  def window: Window
  def currentWatermark: Long
  def currentProcessingTime: Long
  def registerEventTimeTimer(time: Long): Unit
  def deleteEventTimeTimer(time: Long): Unit
  def registerProcessingTimeTimer(time: Long): Unit
  def deleteProcessingTimeTimer(time: Long): Unit

  /** This trigger's state `state` for the window (null: not set). */
  def get(state: StateDescriptor): Any
  def set(state: StateDescriptor, value: Any): Unit
  final def clear(state: StateDescriptor): Unit = set(state, null)

  /** The context of child `i` (in [[Trigger.children]] order). */
  def child(i: Int): TriggerContext
}

/** During a merge: the context of the merged window, plus the values of this trigger's state in
  * the windows that were merged into it (nulls included, one per merged window).
  */
trait OnMergeContext extends TriggerContext {
  def mergedStates(state: StateDescriptor): Seq[Any]
  override def child(i: Int): OnMergeContext
}

/** Decides when a window's contents are emitted, as in Flink: on each element, on event-time
  * and processing-time timers, and when session windows merge.
  *
  * Triggers are immutable values shared by all keys and windows (one instance may sit in
  * several places of a tree); per-window state goes through the context, by descriptor.
  */
abstract class Trigger {

  /** The state this trigger itself keeps per window (children excluded). */
  def states: Seq[StateDescriptor] = Nil

  /** Direct children, for composite triggers. */
  def children: Seq[Trigger] = Nil

  /** What each child is called in its state's full names (by default its index). */
  def childNames: Seq[String] = children.indices.map(_.toString)

  def onElement(record: Record, timestamp: Long, window: Window, ctx: TriggerContext): TriggerResult
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult

  /** The clocks this trigger's own timers run on (its children declare theirs). Runtimes ask
    * the tree ([[usesEventTime]], [[usesProcessingTime]]) which clocks a pipeline needs, so a
    * trigger that registers a timer must say on which clock.
    */
  def ownClocks: TimerClocks = TimerClocks.None

  /** Whether a trigger of this tree sets event-time timers. */
  final def usesEventTime: Boolean = ownClocks.event || children.exists(_.usesEventTime)

  /** Whether a trigger of this tree sets processing-time timers. */
  final def usesProcessingTime: Boolean = ownClocks.processing || children.exists(_.usesProcessingTime)

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

/** Where a trigger tree's state lives: every descriptor of every node gets a slot (pre-order:
  * a node's own state, then its children's) and a full name, its node's path then its name
  * (`count`, `early.count`, `0.fired`). Operators keep a window's trigger state as an array of
  * slots and store it by name.
  */
final class TriggerLayout(val root: Trigger) {
  import TriggerLayout.Node

  private val namesBuilder = scala.collection.mutable.ArrayBuffer.empty[String]
  private val versionsBuilder = scala.collection.mutable.ArrayBuffer.empty[Int]

  private def build(t: Trigger, path: String): Node = {
    val own = t.states.map { d =>
      val full = if (path.isEmpty) d.name else s"$path.${d.name}"
      if (namesBuilder.contains(full))
        throw new IllegalArgumentException(s"$t declares the state '$full' twice")
      namesBuilder += full
      versionsBuilder += d.version
      (d, namesBuilder.size - 1)
    }
    val names = t.childNames
    require(names.size == t.children.size, s"$t names ${names.size} of its ${t.children.size} children")
    val kids = t.children.zip(names).map { case (c, n) => build(c, if (path.isEmpty) n else s"$path.$n") }
    new Node(t, own.map(_._1).toArray, own.map(_._2).toArray, kids.toArray)
  }

  /** The root's node: its descriptors, their slots, and its children's nodes. */
  val tree: Node = build(root, "")

  /** Full names and versions by slot. */
  val names: IndexedSeq[String] = namesBuilder.toIndexedSeq
  val versions: IndexedSeq[Int] = versionsBuilder.toIndexedSeq
  def slots: Int = names.size

  private val bySlotName = names.zipWithIndex.toMap

  /** The slot of a full name, or -1. */
  def slotOf(name: String): Int = bySlotName.getOrElse(name, -1)
}

object TriggerLayout {

  /** One trigger's place in a tree: its descriptors with their slots, and its children. */
  final class Node(
      val trigger: Trigger,
      val descriptors: Array[StateDescriptor],
      val slots: Array[Int],
      val children: Array[Node]
  ) {

    /** The slot of one of this node's descriptors. */
    def slotOf(d: StateDescriptor): Int = {
      var i = 0
      while (i < descriptors.length) {
        if (descriptors(i) eq d) return slots(i)
        i += 1
      }
      throw new IllegalStateException(s"$trigger uses state $d that it does not declare in `states`")
    }
  }
}

/** Shared helpers for triggers' state. */
private[trigger] object Slots {
  def long(ctx: TriggerContext, state: StateDescriptor): Long = ctx.get(state) match {
    case null => 0L
    case v: Long => v
    case n: java.lang.Number => n.longValue
    case other => throw new IllegalStateException(s"corrupt trigger state $other")
  }

  def optLong(ctx: TriggerContext, state: StateDescriptor): Option[Long] = ctx.get(state) match {
    case null => None
    case n: java.lang.Number => Some(n.longValue)
    case other => throw new IllegalStateException(s"corrupt trigger state $other")
  }

  def flag(ctx: TriggerContext, state: StateDescriptor): Boolean = ctx.get(state) == true

  def setFlag(ctx: TriggerContext, state: StateDescriptor, on: Boolean): Unit =
    ctx.set(state, if (on) true else null)

  /** Merges the slot values of merged windows into the target with `combine`. */
  def mergeLongs(ctx: OnMergeContext, state: StateDescriptor, combine: (Long, Long) => Long): Option[Long] = {
    val values = (ctx.get(state) +: ctx.mergedStates(state)).collect { case n: java.lang.Number =>
      n.longValue
    }
    val merged = values.reduceOption(combine)
    ctx.set(state, merged.map(Long.box).orNull)
    merged
  }

  /** Aligns `t` down to a multiple of `interval`; floorMod keeps negative times aligned. */
  def alignDown(t: Long, interval: Long): Long = t - java.lang.Math.floorMod(t, interval)
}
