package sparkwin.operator

import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._

import org.scalacheck.{Gen, Prop}

import sparkwin.TestSupport._
import sparkwin.core.agg.{Aggregate => A, NumericKind}
import sparkwin.core.window._
import sparkwin.operator.Selection.Algorithm.Sliced
import sparkwin.operator.Selection.Layout.Keyed

/** The slicing operator is an optimisation, not a semantics: on random streams with disorder,
  * late elements and watermarks it emits what Flink's window operator emits for the same
  * spec (same panes in the same order, same late elements) and keeps the same counters.
  */
class SlicingDifferentialSuite extends munit.ScalaCheckSuite {
  private val mergeable = Seq(
    A.Sum("s", 1, NumericKind.Integral),
    A.Count("n", -1),
    A.Min("min", 1),
    A.Max("max", 1),
    A.First("first", 1),
    A.Last("last", 1)
  )

  private def spec(assigner: WindowAssigner, aggs: Seq[A], lateOutput: Boolean): OperatorSpec =
    aggregateSpec(assigner, aggs, lateOutput)

  private def check(assigner: WindowAssigner, aggs: Seq[A], seed: Long, lateOutput: Boolean): Unit =
    DifferentialCheck.check(
      spec(assigner, aggs, lateOutput),
      (Sliced, Keyed),
      seed,
      steps = 200,
      widen = flag
    )

  // Column 3: a boolean for countIf, which keeps the invertible aggregates off the packed layout.
  private val flag = (r: ArrayRecord, rnd: scala.util.Random) =>
    new ArrayRecord(r.values :+ (if (rnd.nextInt(3) == 0) null else rnd.nextBoolean()))

  private val assigners = Seq(
    "tumbling" -> TumblingWindows(10, 0, isEventTime = true),
    "tumbling with offset" -> TumblingWindows(10, 3, isEventTime = true),
    "sliding, size a multiple of slide" -> SlidingWindows(12, 4, 0, isEventTime = true),
    "sliding, size not a multiple of slide" -> SlidingWindows(10, 6, 1, isEventTime = true)
  )

  for ((name, assigner) <- assigners; lateOutput <- Seq(true, false)) {
    property(s"$name, late output $lateOutput: same panes, late elements and counters") {
      Prop.forAll(Gen.long)(seed => check(assigner, mergeable, seed, lateOutput))
    }
  }

  property("windows of more slices than the packed layout takes: same panes as Flink's operator") {
    Prop.forAll(Gen.long)(seed => check(SlidingWindows(300, 1, 0, isEventTime = true), mergeable, seed, true))
  }

  // Windows of many slices keep a running total per key: subtracting for these, two stacks for
  // the mergeable ones above. The stream's disorder (up to 30) reaches slices the total holds.
  private val invertible =
    Seq(A.Count("n", -1), A.Count("values", 1), A.Sum("s", 1, NumericKind.Integral), A.CountIf("yes", 3))
  private val manySlices = Seq(
    "60 slices" -> SlidingWindows(60, 1, 0, isEventTime = true),
    "15 slices, offset" -> SlidingWindows(90, 12, 3, isEventTime = true),
    "3 slices" -> SlidingWindows(9, 3, 0, isEventTime = true)
  )
  for (
    (name, assigner) <- manySlices; (kind, aggs) <- Seq("invertible" -> invertible, "mergeable" -> mergeable)
  ) {
    property(s"$name, $kind aggregates: a running total gives Flink's operator's panes") {
      Prop.forAll(Gen.long)(seed => check(assigner, aggs, seed, lateOutput = true))
    }
  }

  property("tumbling windows slice any aggregate, collected lists in arrival order") {
    Prop.forAll(Gen.long) { seed =>
      check(TumblingWindows(10, 0, isEventTime = true), Seq(collectValues, A.Avg("avg", 1)), seed, true)
    }
  }

  test("what is sliced and what is not") {
    val tumbling = TumblingWindows(10, 0, isEventTime = true)
    val sliding = SlidingWindows(10, 5, 0, isEventTime = true)
    assert(spec(tumbling, Seq(collectValues), lateOutput = true).sliceable)
    assert(!spec(sliding, Seq(collectValues), lateOutput = true).sliceable)
    assert(spec(sliding, mergeable, lateOutput = true).sliceable)
    assert(!spec(sliding, mergeable, true).copy(allowedLateness = 1).sliceable)
    assert(!spec(sliding, mergeable, true).copy(trigger = sparkwin.core.trigger.CountTrigger(2)).sliceable)
    assert(!spec(TumblingWindows(10, 0, isEventTime = false), mergeable, true).sliceable)
    // Gaps between windows: their elements are in no window, which slices cannot tell.
    assert(!spec(SlidingWindows(4, 10, 0, isEventTime = true), mergeable, true).sliceable)
    // However many slices a window has: a slice merges into each of its windows once, where
    // each of its elements would update every one of them.
    assert(spec(SlidingWindows(10007, 10000, 0, isEventTime = true), mergeable, true).sliceable)
  }
}
