package sparkwin.core.trigger

import sparkwin.core.{Record, TimerClocks}
import sparkwin.core.window.Window

/** Beam's triggers, as state machines on the same trigger interface as Flink's.
  *
  * A result with `finish` means the trigger is done with the window: composites use it to move
  * on (AfterEach), to reset a child (Repeatedly) or to finish themselves; at the root it closes
  * the window. All of them work with merging windows.
  */
sealed abstract class BeamTrigger extends Trigger {
  override def beamPanes: Boolean = true
  override def canMerge: Boolean = children.forall(_.canMerge)
}

/** Fires once the pane has at least `count` elements; a once-trigger. */
final case class AfterPane(count: Long) extends BeamTrigger {
  import AfterPane.Count
  require(count > 0, s"count must be positive, got $count")
  override def states: Seq[StateDescriptor] = Seq(Count)

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val n = Slots.long(ctx, Count) + 1
    if (n >= count) { ctx.clear(Count); TriggerResult.FIRE_AND_FINISH }
    else { ctx.set(Count, n); TriggerResult.CONTINUE }
  }
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    Slots.mergeLongs(ctx, Count, _ + _)
  def clear(window: Window, ctx: TriggerContext): Unit = ctx.clear(Count)
}

object AfterPane {

  /** Elements in the pane so far. */
  val Count = new StateDescriptor("count")
}

/** Fires when processing time reaches the first element's arrival plus `delay`; a once-trigger.
  * Under `Repeatedly` each pane waits for its own first element.
  */
final case class AfterProcessingTime(delay: Long) extends BeamTrigger {
  override def ownClocks: TimerClocks = TimerClocks.Processing
  import AfterProcessingTime.FireAt
  require(delay >= 0, s"delay must not be negative, got $delay")
  override def states: Seq[StateDescriptor] = Seq(FireAt)

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    if (ctx.get(FireAt) == null) {
      val at = ctx.currentProcessingTime + delay
      ctx.set(FireAt, at)
      ctx.registerProcessingTimeTimer(at)
    }
    TriggerResult.CONTINUE
  }
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    Slots.optLong(ctx, FireAt) match {
      case Some(at) if time >= at => ctx.clear(FireAt); TriggerResult.FIRE_AND_FINISH
      case _ => TriggerResult.CONTINUE
    }
  // The earliest pending delay wins, as in Beam.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    Slots.mergeLongs(ctx, FireAt, math.min).foreach(ctx.registerProcessingTimeTimer)
  def clear(window: Window, ctx: TriggerContext): Unit = {
    Slots.optLong(ctx, FireAt).foreach(ctx.deleteProcessingTimeTimer)
    ctx.clear(FireAt)
  }
}

object AfterProcessingTime {

  /** When the pane fires. */
  val FireAt = new StateDescriptor("fireAt")
}

/** Fires when the watermark passes the end of the window (the on-time pane), with optional
  * early firings before it and late firings after it. Early and late triggers repeat
  * implicitly; without late firings the on-time firing finishes the trigger.
  */
final case class AfterWatermark(early: Option[Trigger], late: Option[Trigger]) extends BeamTrigger {
  override def ownClocks: TimerClocks = TimerClocks.Event
  import AfterWatermark.LatePhase
  override def states: Seq[StateDescriptor] = Seq(LatePhase)
  override def children: Seq[Trigger] = early.toSeq ++ late.toSeq
  override def childNames: Seq[String] = early.map(_ => "early").toSeq ++ late.map(_ => "late").toSeq

  private def earlyCtx(ctx: TriggerContext) = ctx.child(0)
  private def lateCtx(ctx: TriggerContext) = ctx.child(if (early.isDefined) 1 else 0)
  private def inLatePhase(ctx: TriggerContext): Boolean = ctx.get(LatePhase) == true
  private def endReached(window: Window, ctx: TriggerContext): Boolean =
    window.maxTimestamp <= ctx.currentWatermark

  private def onTime(window: Window, ctx: TriggerContext): TriggerResult = {
    early.foreach(_.clear(window, earlyCtx(ctx)))
    late match {
      case Some(l) =>
        l.clear(window, lateCtx(ctx))
        ctx.set(LatePhase, true)
        TriggerResult.FIRE
      case None => TriggerResult.FIRE_AND_FINISH
    }
  }

  /** A child fired: it starts over for the next pane. */
  private def repeat(child: Trigger, r: TriggerResult, window: Window, childCtx: TriggerContext) =
    if (r.fire) { child.clear(window, childCtx); TriggerResult.FIRE }
    else TriggerResult.CONTINUE

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (!inLatePhase(ctx)) {
      val end = endReached(window, ctx)
      if (!end) ctx.registerEventTimeTimer(window.maxTimestamp)
      early match {
        case Some(e) =>
          val r = e.onElement(record, ts, window, earlyCtx(ctx))
          if (end) onTime(window, ctx) else repeat(e, r, window, earlyCtx(ctx))
        case None => if (end) onTime(window, ctx) else TriggerResult.CONTINUE
      }
    } else
      late match {
        case Some(l) => repeat(l, l.onElement(record, ts, window, lateCtx(ctx)), window, lateCtx(ctx))
        case None => TriggerResult.CONTINUE
      }

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (!inLatePhase(ctx)) {
      if (time == window.maxTimestamp) onTime(window, ctx)
      else
        early match {
          case Some(e) => repeat(e, e.onEventTime(time, window, earlyCtx(ctx)), window, earlyCtx(ctx))
          case None => TriggerResult.CONTINUE
        }
    } else
      late match {
        case Some(l) => repeat(l, l.onEventTime(time, window, lateCtx(ctx)), window, lateCtx(ctx))
        case None => TriggerResult.CONTINUE
      }

  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (inLatePhase(ctx))
      late match {
        case Some(l) => repeat(l, l.onProcessingTime(time, window, lateCtx(ctx)), window, lateCtx(ctx))
        case None => TriggerResult.CONTINUE
      }
    else
      early match {
        case Some(e) => repeat(e, e.onProcessingTime(time, window, earlyCtx(ctx)), window, earlyCtx(ctx))
        case None => TriggerResult.CONTINUE
      }

  // The merged window stays in the late phase only if every merged window was in it and the
  // watermark is past its end; otherwise it goes back to early firings.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = {
    val allLate =
      (ctx.get(LatePhase) +: ctx.mergedStates(LatePhase)).forall(_ == true) && endReached(window, ctx)
    if (allLate) late.foreach(_.onMerge(window, ctx.child(if (early.isDefined) 1 else 0)))
    else {
      ctx.clear(LatePhase)
      early.foreach(_.onMerge(window, ctx.child(0)))
      late.foreach(_.clear(window, lateCtx(ctx)))
      if (!endReached(window, ctx)) ctx.registerEventTimeTimer(window.maxTimestamp)
    }
  }

  def clear(window: Window, ctx: TriggerContext): Unit = {
    ctx.deleteEventTimeTimer(window.maxTimestamp)
    early.foreach(_.clear(window, earlyCtx(ctx)))
    late.foreach(_.clear(window, lateCtx(ctx)))
    ctx.clear(LatePhase)
  }
}

object AfterWatermark {

  /** True once past the on-time firing. */
  val LatePhase = new StateDescriptor("latePhase")
}

/** Fires whenever `nested` fires, restarting it whenever it finishes; never finishes. */
final case class Repeatedly(nested: Trigger) extends BeamTrigger {
  override def children: Seq[Trigger] = nested :: Nil
  override def childNames: Seq[String] = Seq("nested")

  private def again(r: TriggerResult, window: Window, ctx: TriggerContext): TriggerResult =
    if (r.finish) { nested.clear(window, ctx.child(0)); r.copy(finish = false) }
    else r

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    again(nested.onElement(record, ts, window, ctx.child(0)), window, ctx)
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    again(nested.onEventTime(time, window, ctx.child(0)), window, ctx)
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    again(nested.onProcessingTime(time, window, ctx.child(0)), window, ctx)
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = nested.onMerge(window, ctx.child(0))
  def clear(window: Window, ctx: TriggerContext): Unit = nested.clear(window, ctx.child(0))
}

/** Runs its triggers one after another: fires whenever the current one fires, moves to the
  * next when the current one finishes, and finishes after the last.
  */
final case class AfterEach(triggers: Seq[Trigger]) extends BeamTrigger {
  import AfterEach.Current
  require(triggers.size >= 2, s"AfterEach needs at least two triggers, got ${triggers.size}")
  override def states: Seq[StateDescriptor] = Seq(Current)
  override def children: Seq[Trigger] = triggers

  private def current(ctx: TriggerContext): Int = Slots.long(ctx, Current).toInt

  private def step(r: TriggerResult, i: Int, ctx: TriggerContext): TriggerResult =
    if (!r.fire) TriggerResult.CONTINUE
    else if (!r.finish) TriggerResult.FIRE
    else if (i + 1 >= triggers.size) { ctx.clear(Current); TriggerResult.FIRE_AND_FINISH }
    else { ctx.set(Current, (i + 1).toLong); TriggerResult.FIRE }

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val i = current(ctx)
    step(triggers(i).onElement(record, ts, window, ctx.child(i)), i, ctx)
  }
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val i = current(ctx)
    step(triggers(i).onEventTime(time, window, ctx.child(i)), i, ctx)
  }
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val i = current(ctx)
    step(triggers(i).onProcessingTime(time, window, ctx.child(i)), i, ctx)
  }

  // The merged window continues from the furthest-advanced window; later triggers start fresh.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = {
    val i = Slots.mergeLongs(ctx, Current, math.max).getOrElse(0L).toInt
    triggers(i).onMerge(window, ctx.child(i))
    for (j <- i + 1 until triggers.size) triggers(j).clear(window, ctx.child(j))
  }

  def clear(window: Window, ctx: TriggerContext): Unit = {
    triggers.indices.foreach(i => triggers(i).clear(window, ctx.child(i)))
    ctx.clear(Current)
  }
}

object AfterEach {

  /** The index of the trigger now running. */
  val Current = new StateDescriptor("current")
}

/** Fires and finishes as soon as any of its triggers fires. */
final case class AfterFirst(triggers: Seq[Trigger]) extends BeamTrigger {
  require(triggers.size >= 2, s"AfterFirst needs at least two triggers, got ${triggers.size}")
  override def children: Seq[Trigger] = triggers

  private def any(rs: Seq[TriggerResult], window: Window, ctx: TriggerContext): TriggerResult =
    if (rs.exists(_.fire)) { clear(window, ctx); TriggerResult.FIRE_AND_FINISH }
    else TriggerResult.CONTINUE

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    any(triggers.indices.map(i => triggers(i).onElement(record, ts, window, ctx.child(i))), window, ctx)
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    any(triggers.indices.map(i => triggers(i).onEventTime(time, window, ctx.child(i))), window, ctx)
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    any(triggers.indices.map(i => triggers(i).onProcessingTime(time, window, ctx.child(i))), window, ctx)
  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    triggers.indices.foreach(i => triggers(i).onMerge(window, ctx.child(i)))
  def clear(window: Window, ctx: TriggerContext): Unit =
    triggers.indices.foreach(i => triggers(i).clear(window, ctx.child(i)))
}

/** Fires and finishes once every one of its triggers has fired. */
final case class AfterAll(triggers: Seq[Trigger]) extends BeamTrigger {
  import AfterAll.Fired
  require(triggers.size >= 2, s"AfterAll needs at least two triggers, got ${triggers.size}")
  require(triggers.size < 63, "AfterAll supports at most 62 triggers")
  override def states: Seq[StateDescriptor] = Seq(Fired)
  override def children: Seq[Trigger] = triggers

  private def collect(window: Window, ctx: TriggerContext)(
      fire: (Trigger, TriggerContext) => TriggerResult
  ): TriggerResult = {
    var done = Slots.long(ctx, Fired)
    for (i <- triggers.indices if (done & (1L << i)) == 0) {
      if (fire(triggers(i), ctx.child(i)).fire) { done |= 1L << i; triggers(i).clear(window, ctx.child(i)) }
    }
    if (done == (1L << triggers.size) - 1) { clear(window, ctx); TriggerResult.FIRE_AND_FINISH }
    else { ctx.set(Fired, if (done == 0) null else done); TriggerResult.CONTINUE }
  }

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    collect(window, ctx)((t, c) => t.onElement(record, ts, window, c))
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    collect(window, ctx)((t, c) => t.onEventTime(time, window, c))
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    collect(window, ctx)((t, c) => t.onProcessingTime(time, window, c))

  // A trigger that fired in any merged window counts as fired for the merged window.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = {
    val done = Slots.mergeLongs(ctx, Fired, _ | _).getOrElse(0L)
    for (i <- triggers.indices if (done & (1L << i)) == 0) triggers(i).onMerge(window, ctx.child(i))
  }

  def clear(window: Window, ctx: TriggerContext): Unit = {
    triggers.indices.foreach(i => triggers(i).clear(window, ctx.child(i)))
    ctx.clear(Fired)
  }
}

object AfterAll {

  /** Bit i: trigger i has fired. */
  val Fired = new StateDescriptor("fired")
}

/** Fires as `main` does until `until` fires; then fires a last time and finishes. */
final case class OrFinally(main: Trigger, until: Trigger) extends BeamTrigger {
  override def children: Seq[Trigger] = Seq(main, until)
  override def childNames: Seq[String] = Seq("main", "until")

  private def decide(m: TriggerResult, u: TriggerResult, window: Window, ctx: TriggerContext) =
    if (u.fire) { clear(window, ctx); TriggerResult.FIRE_AND_FINISH }
    else if (m.fire && m.finish) { clear(window, ctx); TriggerResult.FIRE_AND_FINISH }
    else if (m.fire) TriggerResult.FIRE
    else TriggerResult.CONTINUE

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val m = main.onElement(record, ts, window, ctx.child(0))
    decide(m, until.onElement(record, ts, window, ctx.child(1)), window, ctx)
  }
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val m = main.onEventTime(time, window, ctx.child(0))
    decide(m, until.onEventTime(time, window, ctx.child(1)), window, ctx)
  }
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val m = main.onProcessingTime(time, window, ctx.child(0))
    decide(m, until.onProcessingTime(time, window, ctx.child(1)), window, ctx)
  }
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = {
    main.onMerge(window, ctx.child(0)); until.onMerge(window, ctx.child(1))
  }
  def clear(window: Window, ctx: TriggerContext): Unit = {
    main.clear(window, ctx.child(0)); until.clear(window, ctx.child(1))
  }
}
