package sparkwin.engine

import scala.util.Random

import org.scalacheck.{Gen, Prop}

import sparkwin.TestSupport._
import sparkwin.agg.{Aggregate => A, NumericKind}
import sparkwin.local.LocalBackend
import sparkwin.trigger.EventTimeTrigger
import sparkwin.window._

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

  private final class Run(s: OperatorSpec, fast: Boolean) {
    val backend = new LocalBackend
    val out = new Collect
    val op: Operator = if (fast) Operator(s, backend, out) else new WindowOperator(s, backend, out)
    assertEquals(op.isInstanceOf[SessionWindowOperator], fast)
  }

  private val counters = Seq(
    "elementsIn",
    "droppedLate",
    "lateSideOutput",
    "panesFired",
    "windowsOpened",
    "windowsMerged",
    "windowsCleaned",
    "unfiredAtCleanup"
  )

  private def check(gap: Long, seed: Long, lateOutput: Boolean, forget: Boolean): Unit = {
    val s = spec(gap, lateOutput)
    val fast = new Run(s, fast = true)
    val generic = new Run(s, fast = false)
    val rnd = new Random(seed)
    var clock = rnd.nextInt(50).toLong - 25 // negative event times too
    for (_ <- 0 until 300) {
      if (rnd.nextInt(8) == 0) {
        val wm = clock - rnd.nextInt(20)
        Seq(fast, generic).foreach(_.op.advanceWatermark(wm))
      } else {
        clock += rnd.nextInt(4)
        val r = rec(s"k${rnd.nextInt(4)}", rnd.nextInt(50).toLong - 10, clock - rnd.nextInt(30))
        val ts = r.values(2).asInstanceOf[Long]
        if (forget && rnd.nextInt(3) == 0) {
          // The key's state as a read from the store gives it: nothing cached, timer unknown.
          fast.backend.setCurrentKey(r.values(0))
          val st = fast.backend.state
          st.hotWindow = null; st.hotContents = null; st.sessionTimer = Long.MinValue
        }
        Seq(fast, generic).foreach { run =>
          run.backend.setCurrentKey(r.values(0)); run.op.processElement(r, ts)
        }
      }
      assertEquals(fast.out.results.toList, generic.out.results.toList)
    }
    Seq(fast, generic).foreach(_.op.advanceWatermark(Long.MaxValue))
    assertEquals(fast.out.results.toList, generic.out.results.toList)
    assertEquals(fast.out.late.toList, generic.out.late.toList)
    val (a, b) = (fast.op.metrics.asMap, generic.op.metrics.asMap)
    counters.foreach(c => assertEquals(a(c), b(c), c))
    assert(fast.out.results.nonEmpty)
    assert(a("windowsMerged") > 0)
    assertEquals(fast.backend.numStateEntries, 0)
    assertEquals(fast.backend.numKeysWithState, 0)
  }

  for (gap <- Seq(1L, 5L, 12L); lateOutput <- Seq(true, false); forget <- Seq(false, true)) {
    property(s"gap $gap, late output $lateOutput, state re-read $forget: same panes and counters") {
      Prop.forAll(Gen.long)(seed => check(gap, seed, lateOutput, forget))
    }
  }

  test("an element bridging two sessions merges all three into one pane") {
    val fast = new Run(spec(10, lateOutput = true), fast = true)
    for (ts <- Seq(0L, 18L, 9L)) {
      fast.backend.setCurrentKey("k"); fast.op.processElement(rec("k", ts, ts), ts)
    }
    fast.op.advanceWatermark(Long.MaxValue)
    assertEquals(fast.out.results.map(_.toString).toList.size, 1)
    assertEquals(fast.op.metrics.windowsMerged, 2L)
  }

  test("what runs on the session operator and what does not") {
    assert(spec(5, lateOutput = true).sessionFastPath)
    assert(!spec(5, true).copy(allowedLateness = 1).sessionFastPath)
    assert(!spec(5, true).copy(trigger = sparkwin.trigger.CountTrigger(2)).sessionFastPath)
    assert(!spec(5, true, Seq(collectValues)).sessionFastPath)
    assert(!spec(5, true, Seq(A.First("f", 1))).sessionFastPath)
    assert(!spec(5, true).copy(assigner = SessionWindows(5, 1, isEventTime = true)).sessionFastPath)
    assert(!spec(5, true).copy(assigner = SessionWindows(5, -1, isEventTime = false)).sessionFastPath)
  }
}
