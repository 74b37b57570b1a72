package sparkwin.difftest

import scala.util.control.NonFatal

/** Runs one input sequence through Storm's WindowManager (one per key) and sparkwin's Storm
  * windows, and compares windows per key and step, and late tuples per step.
  *
  * Event time: both take the lag watermark from the same input (Storm's own generator; on
  * sparkwin the `stormLag` strategy), emitted at each [[Step.Tick]] (an interval of processing
  * time); the input ends with a watermark far past every tuple. Without timestamps, Storm's
  * count policies run against sparkwin's Storm windows in arrival order (a plan without a
  * timestamp), comparing every pane but its bounds (sparkwin's end is the firing's processing
  * time, which Storm does not report).
  */
object StormDiff {
  val interval = 100L

  final case class Run(
      pipeline: StormPipeline,
      steps: Vector[Step],
      sparkwin: Vector[StepOut[Pane]],
      storm: Vector[StepOut[StormPane]],
      sparkwinMetrics: Map[String, Long],
      stormLateDropped: Long,
      atWatermark: Set[Int], // steps of elements, not late, exactly at Storm's watermark
      endAtWatermark: Set[Int] // those of them at the window end Storm's time slide waits at
  )

  def endWatermark(p: StormPipeline, steps: Seq[Step]): Long = {
    val maxTs = steps.collect { case Step.Element(e) => e.ts }.maxOption.getOrElse(0L)
    def span(s: StormSize) = s match {
      case StormSize.Duration(ms) => ms.toLong
      case StormSize.Count(_) => 1L
    }
    maxTs + p.lag + span(p.length) + 2 * span(p.slide)
  }

  /** `shifted = false` hands Storm the times as they are (to show that the shift is needed). */
  def run(
      p: StormPipeline,
      steps: Vector[Step],
      timestamps: Boolean = true,
      shifted: Boolean = true
  ): Either[Problem, Run] = {
    val keys = steps.collect { case Step.Element(e) => e.key }.distinct
    val storm = new StormReference(p, keys, timestamps, shifted)
    val s =
      if (timestamps) SparkwinEngine.storm(p, interval)
      else SparkwinEngine.stormArrival(p)
    val sw = Vector.newBuilder[StepOut[Pane]]
    val st = Vector.newBuilder[StepOut[StormPane]]
    var now = 0L
    val atWatermark = Set.newBuilder[Int]
    val endAtWatermark = Set.newBuilder[Int]
    def both(i: Int)(stormSide: => Unit, spark: => Unit): Unit = {
      try stormSide
      catch { case NonFatal(e) => throw new Crash("storm", i, e) }
      try spark
      catch { case NonFatal(e) => throw new Crash("sparkwin", i, e) }
      st += storm.drain()
      sw += s.drain()
    }
    try {
      steps.zipWithIndex.foreach { case (step, i) =>
        step match {
          case Step.Element(e) =>
            val wm = storm.watermark
            val stuckAt = storm.nextWindowEnd(e.key)
            both(i)(storm.element(e), s.element(e))
            if (timestamps && !storm.lastWasLate && e.ts == wm) atWatermark += i
            if (timestamps && !storm.lastWasLate && e.ts == wm && stuckAt.contains(wm)) endAtWatermark += i
          case Step.Tick =>
            now += interval
            both(i)(storm.tick(), s.processingTime(now))
          case other => throw new IllegalArgumentException(s"no $other in Storm sequences")
        }
      }
      if (timestamps) {
        val end = endWatermark(p, steps)
        both(steps.size)(storm.advanceTo(end), s.watermark(end))
      } else both(steps.size)((), ())
      Right(
        Run(
          p,
          steps,
          sw.result(),
          st.result(),
          s.metrics,
          storm.lateDropped,
          atWatermark.result(),
          endAtWatermark.result()
        )
      )
    } catch {
      case c: Crash => Left(Problem(s"crash:${c.who}", c.step, s"${c.who} threw ${c.getCause}"))
    }
  }

  private final class Crash(val who: String, val step: Int, cause: Throwable) extends RuntimeException(cause)

  def check(p: StormPipeline, steps: Vector[Step], timestamps: Boolean = true): Verdict =
    run(p, steps, timestamps) match {
      case Left(problem) => Verdict(Vector(problem), Vector.empty)
      case Right(r) => compare(r, timestamps)
    }

  /** Compares a run; `disabled` exclusions are not applied (to show that they are needed). */
  def compare(r: Run, timestamps: Boolean, disabled: Set[Exclusion] = Set.empty): Verdict = {
    val problems = Vector.newBuilder[Problem]
    val excused = Vector.newBuilder[Excused]
    if (timestamps) excused += Excused(Exclusion.StormStartsAtEarliestTuple, None)
    val repeats = !disabled(Exclusion.StormCountWindowNotRepeated)
    // Without timestamps Storm reports no bounds.
    def norm(p: Pane): Pane = if (timestamps) p else p.copy(start = None, end = None)
    // A tuple landing in a repeat window Storm already emitted (a known issue).
    val cut = scala.collection.mutable.HashMap.empty[String, Int]
    val repeatEnd = scala.collection.mutable.HashMap.empty[String, Long]
    r.steps.zipWithIndex.foreach { case (step, i) =>
      step match {
        // Both known issues need a tuple exactly at the watermark (not late), at or before a
        // window end that was already evaluated.
        case Step.Element(e)
            if !disabled(Exclusion.StormDeferredWindowTakesLaterTuple) && !cut.contains(e.key) && r
              .atWatermark(i) &&
              repeatEnd.get(e.key).exists(e.ts <= _) =>
          cut(e.key) = i
          excused += Excused(Exclusion.StormDeferredWindowTakesLaterTuple, Some(Scope.KeyFrom(e.key, i)))
        case Step.Element(e)
            if !disabled(Exclusion.StormWakeMissesTupleAtWatermark) && !cut.contains(e.key) && r
              .endAtWatermark(i) =>
          cut(e.key) = i
          excused += Excused(Exclusion.StormWakeMissesTupleAtWatermark, Some(Scope.KeyFrom(e.key, i)))
        case _ =>
      }
      r.storm(i).panes.filter(_.repeat).foreach { p =>
        p.pane.end.foreach(end =>
          repeatEnd(p.pane.key) = math.max(repeatEnd.getOrElse(p.pane.key, Long.MinValue), end)
        )
      }
    }
    val keys = (r.sparkwin.flatMap(_.panes.map(_.key)) ++ r.storm.flatMap(_.panes.map(_.pane.key))).distinct
    for (key <- keys) {
      val until = cut.getOrElse(key, Int.MaxValue)
      val sw = r.sparkwin.zipWithIndex.flatMap { case (so, i) =>
        if (i >= until) Nil else so.panes.filter(_.key == key).map(p => (i, norm(p)))
      }
      val st = r.storm.zipWithIndex.flatMap { case (so, i) =>
        if (i >= until) Nil else so.panes.filter(_.pane.key == key).map(p => (i, norm(p.pane), p.repeat))
      }
      var a = 0 // sparkwin
      var b = 0 // storm
      var failed = false
      while (!failed && (a < sw.size || b < st.size)) {
        val stormNext = if (b < st.size) Some(st(b)) else None
        val sparkNext = if (a < sw.size) Some(sw(a)) else None
        (sparkNext, stormNext) match {
          case (Some((i, p)), Some((j, q, repeat))) if p == q && (i == j || (repeats && repeat && i > j)) =>
            if (i != j) excused += Excused(Exclusion.StormCountWindowNotRepeated, None)
            a += 1; b += 1
          case (_, Some((_, _, true))) if repeats && st.drop(b).forall(_._3) =>
            // The key's output ends with windows that only repeat: sparkwin does not re-emit them.
            excused += Excused(Exclusion.StormCountWindowNotRepeated, None)
            b += 1
          case _ =>
            failed = true
            val at = math.min(
              sparkNext.map(_._1).getOrElse(Int.MaxValue),
              stormNext.map(_._1).getOrElse(Int.MaxValue)
            )
            problems += Problem(
              "windows",
              at,
              s"key $key: sparkwin ${sw.drop(a).take(4).map { case (i, p) => s"@$i $p" }.mkString("; ")} " +
                s"but Storm ${st
                    .drop(b)
                    .take(4)
                    .map { case (i, p, rp) => s"@$i $p${if (rp) " (repeat)" else ""}" }
                    .mkString("; ")}"
            )
        }
      }
    }
    for (i <- r.sparkwin.indices) {
      val swLate = r.sparkwin(i).late
      val stLate = r.storm(i).late
      if (swLate != stLate) problems += Problem("late", i, s"sparkwin late $swLate but Storm late $stLate")
    }
    val dropped = r.sparkwinMetrics("droppedLate")
    if (dropped != r.stormLateDropped)
      problems += Problem(
        "metric:droppedLate",
        r.steps.size,
        s"sparkwin droppedLate=$dropped but Storm dropped ${r.stormLateDropped}"
      )
    val elements = r.steps.count(_.isInstanceOf[Step.Element]).toLong
    if (r.sparkwinMetrics("elementsIn") != elements)
      problems += Problem(
        "metric:elementsIn",
        r.steps.size,
        s"sparkwin elementsIn=${r.sparkwinMetrics("elementsIn")}, $elements given"
      )
    Verdict(
      problems.result(),
      excused.result(),
      r.sparkwin.map(_.panes.size).sum,
      r.sparkwin.map(_.late.size).sum
    )
  }
}
