package sparkwin.core.trigger

import scala.jdk.CollectionConverters._

import sparkwin.api
import sparkwin.core.{Record, TimerClocks}
import sparkwin.core.window.Window

/** A user's trigger (`sparkwin.api.Trigger`, from the user's jar) in a trigger tree.
  *
  * Its state is named under its class: the user's trigger sits as the one child of this node,
  * named by the class, so a declared state `count` of `com.acme.EveryN` is stored as
  * `com.acme.EveryN.count` at the trigger's version. A checkpoint written by another class or
  * version then holds names or versions the pipeline does not have, and the general algorithm's
  * state reader refuses it by name, as it refuses a changed built-in trigger.
  *
  * The user's trigger sees small contexts of its own ([[ExtensionTrigger.Context]]) that hold it
  * to what it declared: the state names in `states()`, the clocks of its timers, and values the
  * state can store. `description` is how the pipeline named it.
  */
final class ExtensionTrigger(val className: String, val impl: api.Trigger, description: String)
    extends Trigger {
  private val body = new ExtensionTrigger.Body(className, impl, description)

  override def children: Seq[Trigger] = body :: Nil
  override def childNames: Seq[String] = className :: Nil

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    body.onElement(record, ts, window, ctx.child(0))
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    body.onEventTime(time, window, ctx.child(0))
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    body.onProcessingTime(time, window, ctx.child(0))
  override def canMerge: Boolean = body.canMerge
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = body.onMerge(window, ctx.child(0))
  def clear(window: Window, ctx: TriggerContext): Unit = body.clear(window, ctx.child(0))
  override def toString: String = description
}

object ExtensionTrigger {

  /** What a trigger's state may hold: values the state codec stores and reads back as they were. */
  def storable(value: Any): Boolean = value match {
    case null | _: java.lang.Long | _: java.lang.Integer | _: java.lang.Double | _: java.lang.Boolean |
        _: String =>
      true
    case _ => false
  }

  private def result(r: api.TriggerResult): TriggerResult = r match {
    case api.TriggerResult.CONTINUE => TriggerResult.CONTINUE
    case api.TriggerResult.FIRE => TriggerResult.FIRE
    case api.TriggerResult.PURGE => TriggerResult.PURGE
    case api.TriggerResult.FIRE_AND_PURGE => TriggerResult.FIRE_AND_PURGE
    case null => throw new IllegalStateException("a trigger returned null instead of a TriggerResult")
  }

  /** The user's trigger with its declared state, at its version. */
  private final class Body(className: String, impl: api.Trigger, description: String) extends Trigger {
    private val version = impl.version
    private val byName: Map[String, StateDescriptor] =
      impl.states.asScala.map(n => n -> new StateDescriptor(n, version)).toMap
    override val states: Seq[StateDescriptor] = impl.states.asScala.map(byName).toSeq
    override val ownClocks: TimerClocks = TimerClocks(impl.usesEventTimeTimers, impl.usesProcessingTimeTimers)

    def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
      result(impl.onElement(record, ts, window, new Context(ctx)))
    def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
      result(impl.onEventTime(time, window, new Context(ctx)))
    def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
      result(impl.onProcessingTime(time, window, new Context(ctx)))
    override val canMerge: Boolean = impl.canMerge
    override def onMerge(window: Window, ctx: OnMergeContext): Unit = impl.onMerge(window, new Context(ctx))
    def clear(window: Window, ctx: TriggerContext): Unit = impl.clear(window, new Context(ctx))

    private final class Context(inner: TriggerContext) extends api.Trigger.MergeContext {
      def currentWatermark: Long = inner.currentWatermark
      def currentProcessingTime: Long = inner.currentProcessingTime
      def registerEventTimeTimer(time: Long): Unit = {
        clock(ownClocks.event, "an event-time timer", "usesEventTimeTimers")
        inner.registerEventTimeTimer(time)
      }
      def deleteEventTimeTimer(time: Long): Unit = inner.deleteEventTimeTimer(time)
      def registerProcessingTimeTimer(time: Long): Unit = {
        clock(ownClocks.processing, "a processing-time timer", "usesProcessingTimeTimers")
        inner.registerProcessingTimeTimer(time)
      }
      def deleteProcessingTimeTimer(time: Long): Unit = inner.deleteProcessingTimeTimer(time)

      def get(state: String): AnyRef = inner.get(descriptor(state)).asInstanceOf[AnyRef]
      def set(state: String, value: AnyRef): Unit = {
        if (!storable(value))
          throw new IllegalArgumentException(
            s"$description sets its state '$state' to a ${value.getClass.getName}: trigger state " +
              "holds Long, Integer, Double, Boolean or String values (or null)"
          )
        inner.set(descriptor(state), value)
      }

      def mergedValues(state: String): java.util.List[AnyRef] = inner match {
        case m: OnMergeContext => m.mergedStates(descriptor(state)).map(_.asInstanceOf[AnyRef]).asJava
        case _ => throw new IllegalStateException(s"$description asked for merged values outside onMerge")
      }

      private def descriptor(state: String): StateDescriptor =
        byName.getOrElse(
          state,
          throw new IllegalStateException(
            s"$description uses the state '$state' that it does not declare in states() " +
              s"(it declares ${if (byName.isEmpty) "none" else byName.keys.toSeq.sorted.mkString(", ")})"
          )
        )

      // The runtime picks Spark's time mode from the declared clocks: a timer on another clock
      // would never fire there.
      private def clock(declared: Boolean, timer: String, declaration: String): Unit =
        if (!declared)
          throw new IllegalStateException(
            s"$description registers $timer, but its $declaration() is false: declare the clocks " +
              "a trigger sets timers on"
          )
    }
  }
}
