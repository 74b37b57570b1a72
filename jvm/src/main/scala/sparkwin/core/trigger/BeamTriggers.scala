package sparkwin.core.trigger

import sparkwin.core.Record
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
  require(count > 0, s"count must be positive, got $count")
  override protected def ownSlots: Int = 1

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val n = Slots.long(ctx, slot(0)) + 1
    if (n >= count) { ctx.clearState(slot(0)); TriggerResult.FIRE_AND_FINISH }
    else { ctx.setState(slot(0), n); TriggerResult.CONTINUE }
  }
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    Slots.mergeLongs(ctx, slot(0), _ + _)
  def clear(window: Window, ctx: TriggerContext): Unit = ctx.clearState(slot(0))
}

/** Fires when processing time reaches the first element's arrival plus `delay`; a once-trigger.
  * Under `Repeatedly` each pane waits for its own first element.
  */
final case class AfterProcessingTime(delay: Long) extends BeamTrigger {
  require(delay >= 0, s"delay must not be negative, got $delay")
  override protected def ownSlots: Int = 1 // when to fire

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    if (ctx.getState(slot(0)) == null) {
      val at = ctx.currentProcessingTime + delay
      ctx.setState(slot(0), at)
      ctx.registerProcessingTimeTimer(at)
    }
    TriggerResult.CONTINUE
  }
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    TriggerResult.CONTINUE
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    Slots.optLong(ctx, slot(0)) match {
      case Some(at) if time >= at => ctx.clearState(slot(0)); TriggerResult.FIRE_AND_FINISH
      case _ => TriggerResult.CONTINUE
    }
  // The earliest pending delay wins, as in Beam.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    Slots.mergeLongs(ctx, slot(0), math.min).foreach(ctx.registerProcessingTimeTimer)
  def clear(window: Window, ctx: TriggerContext): Unit = {
    Slots.optLong(ctx, slot(0)).foreach(ctx.deleteProcessingTimeTimer)
    ctx.clearState(slot(0))
  }
}

/** Fires when the watermark passes the end of the window (the on-time pane), with optional
  * early firings before it and late firings after it. Early and late triggers repeat
  * implicitly; without late firings the on-time firing finishes the trigger.
  */
final case class AfterWatermark(early: Option[Trigger], late: Option[Trigger]) extends BeamTrigger {
  override protected def ownSlots: Int = 1 // true once past the on-time firing
  override def children: Seq[Trigger] = early.toSeq ++ late.toSeq

  private def inLatePhase(ctx: TriggerContext): Boolean = ctx.getState(slot(0)) == true
  private def endReached(window: Window, ctx: TriggerContext): Boolean =
    window.maxTimestamp <= ctx.currentWatermark

  private def onTime(window: Window, ctx: TriggerContext): TriggerResult = {
    early.foreach(_.clear(window, ctx))
    late match {
      case Some(l) =>
        l.clear(window, ctx)
        ctx.setState(slot(0), true)
        TriggerResult.FIRE
      case None => TriggerResult.FIRE_AND_FINISH
    }
  }

  /** A child fired: it starts over for the next pane. */
  private def repeat(child: Trigger, r: TriggerResult, window: Window, ctx: TriggerContext) =
    if (r.fire) { child.clear(window, ctx); TriggerResult.FIRE }
    else TriggerResult.CONTINUE

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (!inLatePhase(ctx)) {
      val end = endReached(window, ctx)
      if (!end) ctx.registerEventTimeTimer(window.maxTimestamp)
      val r = early.map(_.onElement(record, ts, window, ctx)).getOrElse(TriggerResult.CONTINUE)
      if (end) onTime(window, ctx) else repeat(early.orNull, r, window, ctx)
    } else
      late match {
        case Some(l) => repeat(l, l.onElement(record, ts, window, ctx), window, ctx)
        case None => TriggerResult.CONTINUE
      }

  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    if (!inLatePhase(ctx)) {
      if (time == window.maxTimestamp) onTime(window, ctx)
      else
        early match {
          case Some(e) => repeat(e, e.onEventTime(time, window, ctx), window, ctx)
          case None => TriggerResult.CONTINUE
        }
    } else
      late match {
        case Some(l) => repeat(l, l.onEventTime(time, window, ctx), window, ctx)
        case None => TriggerResult.CONTINUE
      }

  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val child = if (inLatePhase(ctx)) late else early
    child match {
      case Some(c) => repeat(c, c.onProcessingTime(time, window, ctx), window, ctx)
      case None => TriggerResult.CONTINUE
    }
  }

  // The merged window stays in the late phase only if every merged window was in it and the
  // watermark is past its end; otherwise it goes back to early firings.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = {
    val allLate =
      (ctx.getState(slot(0)) +: ctx.mergedStates(slot(0))).forall(_ == true) &&
        endReached(window, ctx)
    if (allLate) late.foreach(_.onMerge(window, ctx))
    else {
      ctx.clearState(slot(0))
      early.foreach(_.onMerge(window, ctx))
      late.foreach(_.clear(window, ctx))
      if (!endReached(window, ctx)) ctx.registerEventTimeTimer(window.maxTimestamp)
    }
  }

  def clear(window: Window, ctx: TriggerContext): Unit = {
    ctx.deleteEventTimeTimer(window.maxTimestamp)
    early.foreach(_.clear(window, ctx))
    late.foreach(_.clear(window, ctx))
    ctx.clearState(slot(0))
  }
}

/** Fires whenever `nested` fires, restarting it whenever it finishes; never finishes. */
final case class Repeatedly(nested: Trigger) extends BeamTrigger {
  override def children: Seq[Trigger] = nested :: Nil

  private def again(r: TriggerResult, window: Window, ctx: TriggerContext): TriggerResult =
    if (r.finish) { nested.clear(window, ctx); r.copy(finish = false) }
    else r

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    again(nested.onElement(record, ts, window, ctx), window, ctx)
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    again(nested.onEventTime(time, window, ctx), window, ctx)
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    again(nested.onProcessingTime(time, window, ctx), window, ctx)
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = nested.onMerge(window, ctx)
  def clear(window: Window, ctx: TriggerContext): Unit = nested.clear(window, ctx)
}

/** Runs its triggers one after another: fires whenever the current one fires, moves to the
  * next when the current one finishes, and finishes after the last.
  */
final case class AfterEach(triggers: Seq[Trigger]) extends BeamTrigger {
  require(triggers.size >= 2, s"AfterEach needs at least two triggers, got ${triggers.size}")
  override protected def ownSlots: Int = 1 // index of the current trigger
  override def children: Seq[Trigger] = triggers

  private def current(ctx: TriggerContext): Int = Slots.long(ctx, slot(0)).toInt

  private def step(r: TriggerResult, i: Int, ctx: TriggerContext): TriggerResult =
    if (!r.fire) TriggerResult.CONTINUE
    else if (!r.finish) TriggerResult.FIRE
    else if (i + 1 >= triggers.size) { ctx.clearState(slot(0)); TriggerResult.FIRE_AND_FINISH }
    else { ctx.setState(slot(0), (i + 1).toLong); TriggerResult.FIRE }

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val i = current(ctx)
    step(triggers(i).onElement(record, ts, window, ctx), i, ctx)
  }
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val i = current(ctx)
    step(triggers(i).onEventTime(time, window, ctx), i, ctx)
  }
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val i = current(ctx)
    step(triggers(i).onProcessingTime(time, window, ctx), i, ctx)
  }

  // The merged window continues from the furthest-advanced window; later triggers start fresh.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = {
    val i = Slots.mergeLongs(ctx, slot(0), math.max).getOrElse(0L).toInt
    triggers(i).onMerge(window, ctx)
    triggers.drop(i + 1).foreach(_.clear(window, ctx))
  }

  def clear(window: Window, ctx: TriggerContext): Unit = {
    triggers.foreach(_.clear(window, ctx))
    ctx.clearState(slot(0))
  }
}

/** Fires and finishes as soon as any of its triggers fires. */
final case class AfterFirst(triggers: Seq[Trigger]) extends BeamTrigger {
  require(triggers.size >= 2, s"AfterFirst needs at least two triggers, got ${triggers.size}")
  override def children: Seq[Trigger] = triggers

  private def any(rs: Seq[TriggerResult], window: Window, ctx: TriggerContext): TriggerResult =
    if (rs.exists(_.fire)) { clear(window, ctx); TriggerResult.FIRE_AND_FINISH }
    else TriggerResult.CONTINUE

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    any(triggers.map(_.onElement(record, ts, window, ctx)), window, ctx)
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    any(triggers.map(_.onEventTime(time, window, ctx)), window, ctx)
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    any(triggers.map(_.onProcessingTime(time, window, ctx)), window, ctx)
  override def onMerge(window: Window, ctx: OnMergeContext): Unit =
    triggers.foreach(_.onMerge(window, ctx))
  def clear(window: Window, ctx: TriggerContext): Unit = triggers.foreach(_.clear(window, ctx))
}

/** Fires and finishes once every one of its triggers has fired. */
final case class AfterAll(triggers: Seq[Trigger]) extends BeamTrigger {
  require(triggers.size >= 2, s"AfterAll needs at least two triggers, got ${triggers.size}")
  require(triggers.size < 63, "AfterAll supports at most 62 triggers")
  override protected def ownSlots: Int = 1 // bit i: trigger i has fired
  override def children: Seq[Trigger] = triggers

  private def collect(
      window: Window,
      ctx: TriggerContext
  )(fire: Trigger => TriggerResult): TriggerResult = {
    var done = Slots.long(ctx, slot(0))
    for ((t, i) <- triggers.zipWithIndex if (done & (1L << i)) == 0) {
      if (fire(t).fire) { done |= 1L << i; t.clear(window, ctx) }
    }
    if (done == (1L << triggers.size) - 1) { clear(window, ctx); TriggerResult.FIRE_AND_FINISH }
    else { ctx.setState(slot(0), if (done == 0) null else done); TriggerResult.CONTINUE }
  }

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult =
    collect(window, ctx)(_.onElement(record, ts, window, ctx))
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    collect(window, ctx)(_.onEventTime(time, window, ctx))
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult =
    collect(window, ctx)(_.onProcessingTime(time, window, ctx))

  // A trigger that fired in any merged window counts as fired for the merged window.
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = {
    val done = Slots.mergeLongs(ctx, slot(0), _ | _).getOrElse(0L)
    for ((t, i) <- triggers.zipWithIndex if (done & (1L << i)) == 0) t.onMerge(window, ctx)
  }

  def clear(window: Window, ctx: TriggerContext): Unit = {
    triggers.foreach(_.clear(window, ctx))
    ctx.clearState(slot(0))
  }
}

/** Fires as `main` does until `until` fires; then fires a last time and finishes. */
final case class OrFinally(main: Trigger, until: Trigger) extends BeamTrigger {
  override def children: Seq[Trigger] = Seq(main, until)

  private def decide(m: TriggerResult, u: TriggerResult, window: Window, ctx: TriggerContext) =
    if (u.fire) { clear(window, ctx); TriggerResult.FIRE_AND_FINISH }
    else if (m.fire && m.finish) { clear(window, ctx); TriggerResult.FIRE_AND_FINISH }
    else if (m.fire) TriggerResult.FIRE
    else TriggerResult.CONTINUE

  def onElement(record: Record, ts: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val m = main.onElement(record, ts, window, ctx)
    decide(m, until.onElement(record, ts, window, ctx), window, ctx)
  }
  def onEventTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val m = main.onEventTime(time, window, ctx)
    decide(m, until.onEventTime(time, window, ctx), window, ctx)
  }
  def onProcessingTime(time: Long, window: Window, ctx: TriggerContext): TriggerResult = {
    val m = main.onProcessingTime(time, window, ctx)
    decide(m, until.onProcessingTime(time, window, ctx), window, ctx)
  }
  override def onMerge(window: Window, ctx: OnMergeContext): Unit = {
    main.onMerge(window, ctx); until.onMerge(window, ctx)
  }
  def clear(window: Window, ctx: TriggerContext): Unit = {
    main.clear(window, ctx); until.clear(window, ctx)
  }
}
