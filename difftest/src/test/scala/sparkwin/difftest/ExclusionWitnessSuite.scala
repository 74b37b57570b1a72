package sparkwin.difftest

import Dsl._

/** Each deliberate exclusion earns its place: on its witness sequence the comparison passes,
  * and fails once that exclusion is turned off (so the difference is real, and the check
  * recognises it).
  */
class ExclusionWitnessSuite extends munit.FunSuite {

  private def flink(p: Pipeline, steps: Vector[Step])(disabled: Set[Exclusion]): Verdict =
    FlinkDiff.verdict(p, steps, FlinkDiff.run(p, steps), disabled)

  private def storm(p: StormPipeline, steps: Vector[Step], shiftedWhenEnabled: Boolean = true)(
      disabled: Set[Exclusion]
  ): Verdict = {
    val shifted = shiftedWhenEnabled && !disabled(Exclusion.StormStartsAtEarliestTuple)
    StormDiff.run(p, steps, timestamps = true, shifted) match {
      case Left(problem) => Verdict(Vector(problem), Vector.empty)
      case Right(r) => StormDiff.compare(r, timestamps = true, disabled)
    }
  }

  val witnesses: Seq[(Exclusion.Deliberate, Set[Exclusion] => Verdict)] = Seq(
    // 4 lies in the gap between [3, 4) and [6, 7): sparkwin counts it, Flink says nothing.
    Exclusion.NoWindowCounted -> flink(Pipeline(Sliding(1, 3, 0, true)), Vector(El("a", 4L, 1), Wm(10L))),
    // First periodic firing: sparkwin at -10 (floor of -15 is -20), Flink at -1 (-15 - (-5) = -10,
    // plus 10 is 0, capped at the window's max timestamp): only sparkwin fires at watermark -5.
    Exclusion.ContinuousFloorAlignment -> flink(
      Pipeline(Tumbling(20, 0, true), Some(ContinuousT(10))),
      Vector(El("a", -15L, 1), Wm(-5L))
    ),
    // The cleanup timer at 9: Flink's timeout trigger fires on it; the count of 5 is not reached.
    Exclusion.TimeoutFiresOnlyOnOwnTimer -> flink(
      Pipeline(Tumbling(10, 0, true), Some(TimeoutT(CountT(5), 100, false, true))),
      Vector(El("a", 1L, 1), Wm(20L))
    ),
    // The timeout clears the nested EventTimeTrigger, which deletes the timer at 9, which is
    // also the window's cleanup timer: Flink's window never fires or goes; sparkwin's does.
    Exclusion.CleanupSurvivesTriggerDeletion -> flink(
      Pipeline(Tumbling(10, 0, true), Some(TimeoutT(EventTimeT, 1, false, true))),
      Vector(El("a", 1L, 1), Pt(5L), Wm(20L))
    ),
    // [0, 5) and [3, 8) merge into [0, 8); then an element whose own window is [0, 8).
    Exclusion.SessionJoinsEqualMergedWindow -> flink(
      Pipeline(DynamicSession),
      Vector(El("a", 0L, 5), El("a", 3L, 5), El("a", 0L, 8), Wm(100L))
    ),
    // A timestamp outside Spark's range: sparkwin's errors output, where Flink wraps the window.
    Exclusion.EventTimeRange -> flink(
      Pipeline(Tumbling(10, 0, true)),
      Vector(El("a", Long.MaxValue - 2, 1), Wm(20L))
    ),
    Exclusion.BeamPaneInfo -> flink(Pipeline(Tumbling(10, 0, true)), Vector(El("a", 1L, 1), Wm(20L))),
    // One element, a count of two: it never reaches a pane.
    Exclusion.UnfiredCounted -> flink(
      Pipeline(Tumbling(10, 0, true), Some(CountT(2))),
      Vector(El("a", 1L, 1), Wm(20L))
    ),
    // Unshifted, Storm's first watermark is 0 and -5 is late.
    Exclusion.StormStartsAtEarliestTuple -> storm(
      StormPipeline(SDuration(10), SDuration(10), 0, true),
      Vector(El("a", -5L, 1), El("a", 20L, 1), Tick)
    ),
    // Key a's one tuple: Storm emits its window at 5, 10, ... up to the watermark 30.
    Exclusion.StormCountWindowNotRepeated -> storm(
      StormPipeline(SCount(1), SDuration(5), 0, true),
      Vector(El("a", 1L, 1), El("b", 30L, 1), Tick)
    )
  )

  for ((x, verdict) <- witnesses) {
    test(s"${x.name} is needed and recognised") {
      val on = verdict(Set.empty)
      assert(on.ok, s"with ${x.name}: ${on.problems.mkString("\n")}")
      assert(on.excused.exists(_.exclusion == x), s"${x.name} was not recognised")
      val off = verdict(Set(x))
      assert(!off.ok, s"without ${x.name} the sequence still agrees: it witnesses nothing")
    }
  }

  test("every deliberate exclusion has a witness") {
    assertEquals(witnesses.map(_._1).toSet, Exclusion.deliberate.toSet)
  }
}
