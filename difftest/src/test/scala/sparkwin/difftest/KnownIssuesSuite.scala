package sparkwin.difftest

import Dsl._

/** The disagreements these tests found where sparkwin is wrong or DESIGN.md is silent, each as
  * the minimal sequence that shows it ([[Exclusion.KnownIssue]]).
  *
  * The `agrees` tests are ignored until the engine is fixed: they compare with the issue's
  * exclusion turned off, so they pass once sparkwin does what the reference does (or DESIGN.md
  * adopts the difference and it becomes a [[Exclusion.Deliberate]] one). The `still shows`
  * tests run in CI: each sequence still disagrees, and only by what the issue's check excuses.
  * When a fix lands, that test fails: delete the issue from `Exclusion.knownIssues` and its
  * `still shows` case, and un-ignore its `agrees` test.
  */
class KnownIssuesSuite extends munit.FunSuite {

  sealed trait Case {
    def issue: Exclusion.KnownIssue
    def verdict(disabled: Set[Exclusion]): Verdict
    def trace: String
  }

  final case class FlinkCase(issue: Exclusion.KnownIssue, p: Pipeline, steps: Vector[Step]) extends Case {
    private lazy val run = FlinkDiff.run(p, steps)
    def verdict(disabled: Set[Exclusion]): Verdict = FlinkDiff.verdict(p, steps, run, disabled)
    def trace: String = run.fold(_.toString, Traces.flink)
  }

  final case class StormCase(issue: Exclusion.KnownIssue, p: StormPipeline, steps: Vector[Step])
      extends Case {
    private lazy val run = StormDiff.run(p, steps)
    def verdict(disabled: Set[Exclusion]): Verdict =
      run.fold(
        problem => Verdict(Vector(problem), Vector.empty),
        StormDiff.compare(_, timestamps = true, disabled)
      )
    def trace: String = run.fold(_.toString, Traces.storm)
  }

  val cases: Seq[(String, Case)] = Seq(
    // The timeout (1 ms) fires at processing time 18 in both. shouldClearOnTimeout = false:
    // Flink keeps the fired timeout, so the second element starts none; sparkwin starts one,
    // which fires an extra EARLY pane at processing time 22.
    "a timeout that fired is armed again" -> FlinkCase(
      Exclusion.TimeoutStateKeptWithoutClear,
      Pipeline(Tumbling(20, 0, true), Some(TimeoutT(EventTimeT, 1, false, false)), None, 40, true),
      Vector(El("a", 32L, 1), Pt(18L), El("a", 32L, 1), Pt(22L))
    ),
    // The window fires on time at watermark -15 (the nested EventTimeTrigger). Flink keeps the
    // pending timeout (processing time 1), which fires a LATE pane at 15; sparkwin dropped it.
    "a pending timeout after the nested trigger fired on a timer" -> FlinkCase(
      Exclusion.TimeoutStateKeptWithoutClear,
      Pipeline(Tumbling(20, 0, true), Some(TimeoutT(EventTimeT, 1, false, false)), None, 40, true),
      Vector(El("a", -47L, 1), Wm(-15L), Pt(15L))
    ),
    // Four elements merge into the session [12, 34); CountEvictor(2) keeps the 'last two'.
    // In arrival order those are 26 (value 38) and 23: sparkwin's sum is 39. Flink's buffer,
    // appended in hash-set order when the sessions merged, has two elements of value 1 last.
    "CountEvictor on a merged session" -> FlinkCase(
      Exclusion.CountEvictorOrderAfterMerge,
      Pipeline(Session(8), Some(PurgingT(CountT(4))), Some(CountEv(2, false)), 0, false),
      Vector(El("a", 17L, 1), El("a", 12L, 1), El("a", 26L, 38), El("a", 23L, 1))
    ),
    // Time windows of 25 every 27, lag 1. At watermark 81 the window (56, 81] is empty, and 82
    // is queued. 81 then arrives (exactly at the watermark, not late): Storm fires (56, 81] at
    // the next watermark (92); sparkwin's wake-up stays at 108, so it fires only at the end.
    "a Storm tuple at the watermark, in the window end due next" -> StormCase(
      Exclusion.StormWakeMissesTupleAtWatermark,
      StormPipeline(SDuration(25), SDuration(27), 1, true),
      Vector(El("a", 51L, 1), El("a", 82L, 1), Tick, El("a", 81L, 1), El("a", 93L, 1), Tick)
    ),
    // Count windows of 2 every 5 ms, lag 3. Watermark -5: Storm emits key b's window at -20 and
    // repeats it at -15, -10, -5; sparkwin holds the repeats back. b at -5 (not late) arrives:
    // Storm puts it in the window at 0 (2 tuples); sparkwin's deferred window at -5 takes it,
    // and the window at 0 is then held back as its repeat.
    "a Storm count window deferred as a repeat takes a later tuple" -> StormCase(
      Exclusion.StormDeferredWindowTakesLaterTuple,
      StormPipeline(SCount(2), SDuration(5), 3, true),
      Vector(El("b", -20L, 1), El("a", -2L, 1), Tick, El("b", -5L, 1))
    ),
    // Three channels. After Idle(0), channel 1 is active but unaligned (it came back below the
    // output, 139) and nothing is aligned; Active(2) rejoins at 230, aligned, and neither valve
    // emits on activation. Idle(1): sparkwin's valve recomputes and emits 230, firing [205, 215);
    // Flink's does not (channel 1 did not hold the output) and fires it only at the end.
    "a valve that advances when an unaligned channel goes idle" -> FlinkCase(
      Exclusion.ValveAdvancesOnAnyIdle,
      Pipeline(Tumbling(10, -5, true), None, None, 0, false, false, 3),
      Vector(
        CWm(139L, 0),
        Idle(1),
        Idle(2),
        Active(1),
        Active(2),
        El("a", 208L, 1),
        CWm(230L, 2),
        Idle(2),
        Idle(0),
        Active(2),
        Idle(1)
      )
    )
  )

  for ((name, c) <- cases) {
    test(s"${c.issue.name}: sparkwin agrees on $name".ignore) {
      val v = c.verdict(Set(c.issue))
      assert(v.ok, s"${c.issue.reason}\n${v.problems.mkString("\n")}\n${c.trace}")
    }

    test(s"${c.issue.name} still shows: $name") {
      val without = c.verdict(Set(c.issue))
      assert(
        !without.ok,
        s"${c.issue.name} no longer reproduces: remove it and un-ignore its test\n${c.trace}"
      )
      val `with` = c.verdict(Set.empty)
      assert(
        `with`.ok,
        s"${c.issue.name}'s check does not excuse it:\n${`with`.problems.mkString("\n")}\n${c.trace}"
      )
      assert(`with`.excused.exists(_.exclusion == c.issue), "the issue was not recognised")
    }
  }

  test("every known issue has a case") {
    assertEquals(cases.map(_._2.issue).toSet, Exclusion.knownIssues.toSet)
  }
}
