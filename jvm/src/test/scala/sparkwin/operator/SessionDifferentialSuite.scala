package sparkwin.operator

import sparkwin.operator.algorithms.Algorithms
import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._

import org.scalacheck.{Gen, Prop}

import sparkwin.TestSupport._
import sparkwin.core.agg.{Aggregate => A, NumericKind}
import sparkwin.runtime.local.LocalBackend
import sparkwin.core.trigger.EventTimeTrigger
import sparkwin.core.window._

/** The session operator is an optimisation, not a semantics: on random streams with disorder,
  * late elements, bridging elements and watermarks it emits what Flink's window operator emits
  * for the same spec (same panes in the same order, same late elements), keeps the same
  * counters and leaves no state, also when a key's state comes back from the store without
  * what the operator caches (as on Spark, every micro-batch).
  */
class SessionDifferentialSuite extends munit.ScalaCheckSuite {
  private val aggs = Seq(
    A.Sum("s", 1, NumericKind.Integral),
    A.Count("n", -1),
    A.Min("min", 2),
    A.Max("max", 2),
    A.Avg("avg", 1)
  )

  private def spec(gap: Long, lateOutput: Boolean, a: Seq[A] = aggs): OperatorSpec =
    OperatorSpec(
      SessionWindows(gap, -1, isEventTime = true),
      EventTimeTrigger,
      None,
      0,
      lateOutput,
      WindowFunction.Aggregates(a.toIndexedSeq),
      AccumulationMode.Accumulating
    )

  private def check(gap: Long, seed: Long, lateOutput: Boolean, forget: Boolean): Unit = {
    val (fast, _) = DifferentialCheck.check(
      spec(gap, lateOutput),
      (Selection.Algorithm.Session, Selection.Layout.Keyed),
      seed,
      steps = 300,
      DifferentialCheck.dataCounters :+ "windowsMerged",
      (run, r, rnd) =>
        if (forget && rnd.nextInt(3) == 0) {
          // The key's state as a read from the store gives it: its timer unknown.
          run.backend.setCurrentKey(r.get(0))
          run.backend.state.asInstanceOf[sparkwin.operator.session.SessionState].forgetTimer()
        }
    )
    assert(fast.op.metrics.windowsMerged > 0)
  }

  for (gap <- Seq(1L, 5L, 12L); lateOutput <- Seq(true, false); forget <- Seq(false, true)) {
    property(s"gap $gap, late output $lateOutput, state re-read $forget: same panes and counters") {
      Prop.forAll(Gen.long)(seed => check(gap, seed, lateOutput, forget))
    }
  }

  test("an element bridging two sessions merges all three into one pane") {
    val backend = new LocalBackend
    val out = new Collect
    val op = Algorithms.operator(spec(10, lateOutput = true), backend, out)
    for (ts <- Seq(0L, 18L, 9L)) {
      backend.setCurrentKey("k"); op.processElement(rec("k", ts, ts), ts)
    }
    op.moveClocks(Long.MaxValue, ClockMove.Keep, ClockMove.Advance)
    assertEquals(out.results.map(_.short).toList, List(("k", 0L, 28L, 27L)))
    assertEquals(op.metrics.windowsMerged, 2L)
  }

  test("what runs on the session operator and what does not") {
    assert(spec(5, lateOutput = true).sessionFastPath)
    assert(!spec(5, true).copy(allowedLateness = 1).sessionFastPath)
    assert(!spec(5, true).copy(trigger = sparkwin.core.trigger.CountTrigger(2)).sessionFastPath)
    assert(!spec(5, true, Seq(collectValues)).sessionFastPath)
    assert(!spec(5, true, Seq(A.First("f", 1))).sessionFastPath)
    assert(!spec(5, true).copy(assigner = SessionWindows(5, 1, isEventTime = true)).sessionFastPath)
    assert(!spec(5, true).copy(assigner = SessionWindows(5, -1, isEventTime = false)).sessionFastPath)
  }
}
