package sparkwin.engine

import scala.util.Random

import org.scalacheck.{Gen, Prop}

import sparkwin.TestSupport._
import sparkwin.agg.{Aggregate => A, NumericKind}
import sparkwin.local.LocalBackend
import sparkwin.trigger.EventTimeTrigger
import sparkwin.window._

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
    OperatorSpec(
      assigner,
      EventTimeTrigger,
      None,
      0,
      lateOutput,
      WindowFunction.Aggregates(aggs.toIndexedSeq),
      AccumulationMode.Accumulating
    )

  private final class Run(s: OperatorSpec, sliced: Boolean) {
    val backend = new LocalBackend
    val out = new Collect
    val op: Operator = if (sliced) Operator(s, backend, out) else new WindowOperator(s, backend, out)
    assertEquals(op.isInstanceOf[SlicingWindowOperator], sliced)
  }

  private val counters = Seq(
    "elementsIn",
    "droppedLate",
    "lateSideOutput",
    "panesFired",
    "windowsOpened",
    "windowsCleaned",
    "unfiredAtCleanup"
  )

  private def check(assigner: WindowAssigner, aggs: Seq[A], seed: Long, lateOutput: Boolean): Unit = {
    val s = spec(assigner, aggs, lateOutput)
    val sliced = new Run(s, sliced = true)
    val generic = new Run(s, sliced = false)
    val rnd = new Random(seed)
    var clock = rnd.nextInt(50).toLong - 25 // negative event times too
    for (_ <- 0 until 200) {
      if (rnd.nextInt(8) == 0) {
        val wm = clock - rnd.nextInt(20)
        Seq(sliced, generic).foreach(_.op.advanceWatermark(wm))
      } else {
        clock += rnd.nextInt(4)
        val r = rec(s"k${rnd.nextInt(4)}", rnd.nextInt(50).toLong - 10, clock - rnd.nextInt(30))
        val ts = r.values(2).asInstanceOf[Long]
        Seq(sliced, generic).foreach { run =>
          run.backend.setCurrentKey(r.values(0)); run.op.processElement(r, ts)
        }
      }
      assertEquals(sliced.out.results.toList, generic.out.results.toList)
    }
    Seq(sliced, generic).foreach(_.op.advanceWatermark(Long.MaxValue))
    assertEquals(sliced.out.results.toList, generic.out.results.toList)
    assertEquals(sliced.out.late.toList, generic.out.late.toList)
    val (a, b) = (sliced.op.metrics.asMap, generic.op.metrics.asMap)
    counters.foreach(c => assertEquals(a(c), b(c), c))
    assert(sliced.out.results.nonEmpty)
    assertEquals(sliced.backend.numStateEntries, 0)
    assertEquals(sliced.backend.numKeysWithState, 0)
  }

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
    assert(!spec(sliding, mergeable, true).copy(trigger = sparkwin.trigger.CountTrigger(2)).sliceable)
    assert(!spec(TumblingWindows(10, 0, isEventTime = false), mergeable, true).sliceable)
    // Gaps between windows: their elements are in no window, which slices cannot tell.
    assert(!spec(SlidingWindows(4, 10, 0, isEventTime = true), mergeable, true).sliceable)
    // A window of thousands of slices would cost more to merge than it saves.
    assert(!spec(SlidingWindows(10007, 10000, 0, isEventTime = true), mergeable, true).sliceable)
  }
}
