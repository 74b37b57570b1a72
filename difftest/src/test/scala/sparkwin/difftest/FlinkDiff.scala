package sparkwin.difftest

import scala.util.control.NonFatal

import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner

/** Runs one input sequence through Flink's window operator and sparkwin's engine and compares
  * them step by step: panes (key, window, values, derived pane fields, order), late elements,
  * counters, and the state left once the input ends with a watermark (or processing time) of
  * +infinity.
  */
object FlinkDiff {

  final case class Run(
      pipeline: Pipeline,
      steps: Vector[Step],
      sparkwin: Vector[StepOut[Pane]],
      flink: Vector[StepOut[FlinkPane]],
      sparkwinMetrics: Map[String, Long],
      sparkwinState: Int,
      flinkState: Int,
      flinkLateDropped: Long,
      reference: FlinkReference,
      watermarks: Vector[(Long, Long)] // after each step: (sparkwin's, Flink's operator's)
  )

  /** Runs the sequence; a crash on either side is a problem of its own. `sparkwinPipeline`
    * differs from `p` only in the comparator's own sanity tests.
    */
  def run(
      p: Pipeline,
      steps: Vector[Step],
      sparkwinPipeline: Option[Pipeline] = None
  ): Either[Problem, Run] = {
    val f = new FlinkReference(p)
    val s = SparkwinEngine.flink(sparkwinPipeline.getOrElse(p))
    val sw = Vector.newBuilder[StepOut[Pane]]
    val wms = Vector.newBuilder[(Long, Long)]
    val fl = Vector.newBuilder[StepOut[FlinkPane]]
    var at = 0
    def both(i: Int)(flink: => Unit, spark: => Unit): Unit = {
      at = i
      f.step = i
      try flink
      catch { case NonFatal(e) => throw new Crash("flink", i, e) }
      // An error row (an element sparkwin refuses) stops the run like a throw.
      val sparkOut =
        try { spark; s.drain() }
        catch { case NonFatal(e) => throw new Crash("sparkwin", i, e) }
      fl += f.drain()
      sw += sparkOut
      wms += ((s.currentWatermark, f.currentWatermark))
    }
    try {
      steps.zipWithIndex.foreach { case (st, i) =>
        st match {
          case Step.Element(e) => both(i)(f.element(e), s.element(e))
          case Step.Watermark(wm) => both(i)(f.watermark(wm), s.watermark(wm))
          case Step.ProcessingTime(t) => both(i)(f.processingTime(t), s.processingTime(t))
          case Step.ChannelWatermark(wm, c) => both(i)(f.watermark(wm, c), s.watermark(wm, c))
          case Step.Idle(c) => both(i)(f.markIdle(c), s.markIdle(c))
          case Step.Active(c) => both(i)(f.markActive(c), s.markActive(c))
          case Step.Tick => throw new IllegalArgumentException("ticks are for Storm")
        }
      }
      both(steps.size)(
        f.end(),
        if (p.eventTime) s.endOfInput()
        else if (p.assigner != Assigner.Global) s.processingTime(Long.MaxValue)
      )
      // Then processing time to +infinity too: Flink leaves a processing-time timer behind for
      // a session merged away under ContinuousProcessingTimeTrigger (the merge moves the fire
      // time's state before clear() could delete its timer); it fires, finds no window, and
      // goes. Nothing may fire here.
      if (p.eventTime) both(steps.size + 1)(f.processingTime(Long.MaxValue), s.processingTime(Long.MaxValue))
      Right(
        Run(
          p,
          steps,
          sw.result(),
          fl.result(),
          s.metrics,
          s.numStateEntries,
          f.numStateEntries,
          f.lateDropped,
          f,
          wms.result()
        )
      )
    } catch {
      case c: Crash => Left(Problem(s"crash:${c.who}", c.step, s"${c.who} threw ${c.getCause}"))
    } finally {
      try f.close()
      catch { case NonFatal(_) => }
    }
  }

  private final class Crash(val who: String, val step: Int, cause: Throwable) extends RuntimeException(cause)

  def check(p: Pipeline, steps: Vector[Step]): Verdict = verdict(p, steps, run(p, steps))

  /** The verdict on a run; sparkwin stopping at an element is excused only by
    * [[Exclusion.EventTimeRange]].
    */
  def verdict(
      p: Pipeline,
      steps: Vector[Step],
      run: Either[Problem, Run],
      disabled: Set[Exclusion] = Set.empty
  ): Verdict =
    run match {
      case Left(problem)
          if problem.tag == "crash:sparkwin" && !disabled(Exclusion.EventTimeRange) &&
            outOfRange(steps.lift(problem.step)) =>
        Verdict(Vector.empty, Vector(Excused(Exclusion.EventTimeRange, None)))
      case Left(problem) => Verdict(Vector(problem), Vector.empty)
      case Right(r) => compare(r, disabled)
    }

  private def outOfRange(step: Option[Step]): Boolean = step match {
    case Some(Step.Element(e)) => !sparkwin.core.EventTime.inRange(e.ts)
    case _ => false
  }

  // ---------------------------------------------------------------------------------------------
  // Exclusions

  private def flinkWindows(p: Pipeline, e: Ev): Seq[(Option[Long], Option[Long])] = {
    val a = FlinkReference.assignerOf(p.assigner)
    val ctx = new WindowAssigner.WindowAssignerContext { def getCurrentProcessingTime: Long = 0L }
    val ws = a.assignWindows(FlinkReference.tuple(e), e.ts, ctx)
    scala.jdk.CollectionConverters.CollectionHasAsScala(ws).asScala.toSeq.map(FlinkReference.bounds)
  }

  private def scope(p: Pipeline, key: String, bounds: (Option[Long], Option[Long]), step: Int): Scope =
    p.assigner match {
      case Assigner.Session(_) | Assigner.DynamicSession => Scope.KeyFrom(key, step)
      case _ => Scope.WindowFrom(key, bounds._1, bounds._2, step)
    }

  private def continuousInterval(t: TriggerSpec): Option[Long] = t match {
    case TriggerSpec.ContinuousEventTime(i) => Some(i)
    case TriggerSpec.Purging(n) => continuousInterval(n)
    case TriggerSpec.ProcessingTimeout(n, _, _, _) => continuousInterval(n)
    case _ => None
  }

  /** Would the nested trigger of a ProcessingTimeoutTrigger fire at this timer? */
  private def nestedFires(t: TriggerSpec, cause: Cause, maxTimestamp: Long): Boolean = (t, cause) match {
    case (TriggerSpec.EventTime, Cause.EventTimer(time)) => time == maxTimestamp
    case (TriggerSpec.ProcessingTime, Cause.ProcessingTimer(time)) => time == maxTimestamp
    case (TriggerSpec.Purging(n), c) => nestedFires(n, c, maxTimestamp)
    case (TriggerSpec.ContinuousEventTime(_), Cause.EventTimer(_)) => true // its own timers
    case _ => false
  }

  def recognise(r: Run, disabled: Set[Exclusion] = Set.empty): Vector[Excused] =
    recogniseAll(r).filterNot(x => disabled(x.exclusion))

  private def recogniseAll(r: Run): Vector[Excused] = {
    val p = r.pipeline
    val out = Vector.newBuilder[Excused]
    out += Excused(Exclusion.BeamPaneInfo, None)
    valveAdvancesOnIdle(r).foreach(i =>
      out += Excused(Exclusion.ValveAdvancesOnAnyIdle, Some(Scope.AllFrom(i)))
    )
    out += Excused(Exclusion.UnfiredCounted, None)
    r.reference.equalToMerged.foreach { case (k, step) =>
      out += Excused(Exclusion.SessionJoinsEqualMergedWindow, Some(Scope.KeyFrom(k, step)))
    }
    for (_ <- 0L until r.reference.noWindow) out += Excused(Exclusion.NoWindowCounted, None)
    p.trigger.flatMap(continuousInterval).foreach { interval =>
      r.steps.zipWithIndex.foreach {
        case (Step.Element(e), i) if e.ts < 0 && e.ts % interval != 0 =>
          flinkWindows(p, e)
            .foreach(b => out += Excused(Exclusion.ContinuousFloorAlignment, Some(scope(p, e.key, b, i))))
        case _ =>
      }
    }
    p.trigger match {
      case Some(TriggerSpec.ProcessingTimeout(nested, timeout, _, clearOnTimeout)) =>
        val registered = r.reference.annotator.processingTimersRegistered
        r.flink.zipWithIndex.foreach { case (so, i) =>
          so.panes.foreach { fp =>
            val max = fp.pane.end.map(_ - 1).getOrElse(Long.MaxValue)
            val own = fp.cause match {
              case Cause.ProcessingTimer(t) =>
                registered.exists { case (k, w, time, now) =>
                  k == fp.pane.key && FlinkReference
                    .bounds(w) == ((fp.pane.start, fp.pane.end)) && time == t &&
                  now + timeout == t
                }
              case _ => false
            }
            if (fp.cause != Cause.Element && !own && !nestedFires(nested, fp.cause, max))
              out += Excused(
                Exclusion.TimeoutFiresOnlyOnOwnTimer,
                Some(scope(p, fp.pane.key, (fp.pane.start, fp.pane.end), i))
              )
            if (fp.cause != Cause.Element && !clearOnTimeout)
              out += Excused(
                Exclusion.TimeoutStateKeptWithoutClear,
                Some(scope(p, fp.pane.key, (fp.pane.start, fp.pane.end), i + 1))
              )
          }
        }
      case _ =>
    }
    if (
      p.evictor.exists(_.isInstanceOf[EvictorSpec.CountEv]) && (p.assigner match {
        case Assigner.Session(_) | Assigner.DynamicSession => true
        case _ => false
      })
    )
      r.reference.annotator.merges.foreach { case (k, step) =>
        out += Excused(Exclusion.CountEvictorOrderAfterMerge, Some(Scope.KeyFrom(k, step)))
      }
    r.reference.annotator.cleanupTimerDeletions.foreach { case (k, w, step) =>
      out += Excused(
        Exclusion.CleanupSurvivesTriggerDeletion,
        Some(scope(p, k, FlinkReference.bounds(w), step))
      )
    }
    out.result()
  }

  /** Steps of late elements that Flink's assigner gives no window: late in both engines. */
  def lateWithoutWindow(r: Run): Seq[Int] =
    r.steps.zipWithIndex.flatMap {
      case (Step.Element(e), i)
          if r.pipeline.eventTime && flinkWindows(r.pipeline, e).isEmpty &&
            e.ts + r.pipeline.lateness <= r.reference.watermarkAt(i) =>
        Some(i)
      case _ => None
    }

  /** Steps at which a channel (not the last active one) went idle and sparkwin's valve advanced
    * from the watermark both had while Flink's stayed.
    */
  def valveAdvancesOnIdle(r: Run): Seq[Int] = {
    val idle = Array.fill(r.pipeline.channels)(false)
    r.steps.zipWithIndex.flatMap {
      case (Step.Idle(c), i) =>
        idle(c) = true
        val before = if (i == 0) (Long.MinValue, Long.MinValue) else r.watermarks(i - 1)
        val (sw, fl) = r.watermarks(i)
        if (!idle.forall(identity) && before._1 == before._2 && fl == before._2 && sw > fl) Some(i) else None
      case (Step.Active(c), _) => idle(c) = false; None
      case _ => None
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Comparison

  private def hidden(scopes: Seq[Scope], key: String, start: Option[Long], end: Option[Long], step: Int) =
    scopes.exists {
      case Scope.KeyFrom(k, s) => k == key && step >= s
      case Scope.WindowFrom(k, st, en, s) => k == key && st == start && en == end && step >= s
      case Scope.AllFrom(s) => step >= s
    }

  private def grouped(ps: Seq[Pane]): Map[(String, Option[Long], Option[Long]), Seq[Pane]] =
    ps.groupBy(_.window)

  private def causeTime(c: Cause): Long = c match {
    case Cause.Element => Long.MinValue
    case Cause.EventTimer(t) => t
    case Cause.ProcessingTimer(t) => t
  }

  /** Compares a run; `disabled` exclusions are not applied (to show that they are needed). */
  def compare(r: Run, disabled: Set[Exclusion] = Set.empty): Verdict = {
    val excused = recognise(r, disabled)
    val scopes = excused.flatMap(_.scope)
    val problems = Vector.newBuilder[Problem]
    val endStep = r.steps.size
    for (i <- r.sparkwin.indices) {
      val sw = r.sparkwin(i).panes.filterNot(p => hidden(scopes, p.key, p.start, p.end, i))
      val flAll = r.flink(i).panes.filterNot(p => hidden(scopes, p.pane.key, p.pane.start, p.pane.end, i))
      val fl = flAll.map(_.pane)
      def bare(ps: Seq[Pane]) = ps.map(_.copy(timing = "", index = 0, first = false, last = false))
      val (swC, flC) = if (disabled(Exclusion.BeamPaneInfo)) (sw, bare(fl)) else (sw, fl)
      if (grouped(swC) != grouped(flC))
        problems += Problem(
          if (grouped(bare(sw)) == grouped(bare(fl))) "pane-info"
          else "panes",
          i,
          s"sparkwin ${sw.mkString("[", "; ", "]")} but Flink ${fl.mkString("[", "; ", "]")}"
        )
      else {
        val isElement = i < endStep && r.steps(i).isInstanceOf[Step.Element]
        if (isElement) {
          if (sw != fl)
            problems += Problem(
              "order",
              i,
              s"sparkwin order ${sw.mkString("; ")}, Flink ${fl.mkString("; ")}"
            )
        } else {
          // Map each sparkwin pane to Flink's (same window, same occurrence): their timers'
          // times must not go backwards. Equal times may come in any order (Flink's timer heap
          // does not order them).
          val seen = scala.collection.mutable.HashMap.empty[(String, Option[Long], Option[Long]), Int]
          val byWindow = flAll.groupBy(_.pane.window)
          val times = sw.map { p =>
            val n = seen.getOrElse(p.window, 0)
            seen(p.window) = n + 1
            causeTime(byWindow(p.window)(n).cause)
          }
          if (times != times.sorted)
            problems += Problem("order", i, s"sparkwin fired ${sw.mkString("; ")} at timer times $times")
        }
      }
      val swLate = r.sparkwin(i).late.filterNot(e => keyHidden(scopes, e.key, i))
      val flLate = r.flink(i).late.filterNot(e => keyHidden(scopes, e.key, i))
      if (swLate != flLate) problems += Problem("late", i, s"sparkwin late $swLate but Flink late $flLate")
    }

    // Counters.
    val m = r.sparkwinMetrics
    def metric(name: String, flink: Long): Unit =
      if (m(name) != flink)
        problems += Problem(s"metric:$name", endStep, s"sparkwin $name=${m(name)} but Flink $flink")
    metric("elementsIn", r.steps.count(_.isInstanceOf[Step.Element]).toLong)
    // Late elements in no window are late in both engines; the others sparkwin counts.
    if (!disabled(Exclusion.NoWindowCounted))
      metric("droppedNoWindow", r.reference.noWindow - lateWithoutWindow(r).size)
    else metric("droppedNoWindow", 0L) // as if sparkwin dropped them silently, as Flink does
    if (scopes.isEmpty) {
      val a = r.reference.annotator
      metric("lateSideOutput", r.flink.map(_.late.size.toLong).sum)
      metric("droppedLate", r.flinkLateDropped)
      metric("panesFired", r.flink.map(_.panes.size.toLong).sum)
      metric("unfiredAtCleanup", if (disabled(Exclusion.UnfiredCounted)) 0L else a.unfiredAtCleanup)
      metric("windowsOpened", a.windowsOpened)
      metric("windowsCleaned", a.windowsCleaned)
      metric("windowsMerged", a.windowsMerged)
    }

    // State once every window has expired (global windows never expire).
    if (r.pipeline.assigner != Assigner.Global) {
      if (r.sparkwinState != 0)
        problems += Problem(
          "state:sparkwin",
          endStep,
          s"sparkwin holds ${r.sparkwinState} state entries at the end"
        )
      val flinkLeaks = excused.exists(x =>
        x.exclusion == Exclusion.CleanupSurvivesTriggerDeletion || x.exclusion == Exclusion.SessionJoinsEqualMergedWindow
      )
      if (r.flinkState != 0 && !flinkLeaks)
        problems += Problem(
          "state:flink",
          endStep,
          s"Flink holds ${r.flinkState} state entries and timers at the end"
        )
    }
    Verdict(problems.result(), excused, r.sparkwin.map(_.panes.size).sum, r.sparkwin.map(_.late.size).sum)
  }

  private def keyHidden(scopes: Seq[Scope], key: String, step: Int): Boolean =
    scopes.exists {
      case Scope.KeyFrom(k, s) => k == key && step >= s
      case Scope.AllFrom(s) => step >= s
      case _ => false
    }
}
