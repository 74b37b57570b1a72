package sparkwin.operator

import sparkwin.operator.algorithms.Algorithms
import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._

import org.scalacheck.{Gen, Prop}

import sparkwin.TestSupport._
import sparkwin.core.agg.{Aggregate => A, NumericKind}
import sparkwin.runtime.local.LocalBackend
import sparkwin.core.window._

/** The packed operators lay state out by slice or key id in primitive arrays: on random streams
  * of interleaved keys, with disorder, late elements and watermarks, it still emits what Flink's
  * window operator emits (same panes in the same order, same late elements, same counters and
  * keys with state after every step).
  */
class PackedDifferentialSuite extends munit.ScalaCheckSuite {
  private val packable = packableAggregates(long = 1, nullable = 3, double = 4)

  private def spec(assigner: WindowAssigner, aggs: Seq[A], lateOutput: Boolean): OperatorSpec =
    aggregateSpec(assigner, aggs, lateOutput)

  /** Columns 3 (a string, null one time in four) and 4 (a double, null one time in three). */
  private def widen(r: ArrayRecord, rnd: scala.util.Random): ArrayRecord = {
    val text = if (rnd.nextInt(4) == 0) null else "x"
    val amount = if (rnd.nextInt(3) == 0) null else java.lang.Double.valueOf(rnd.nextInt(20) * 0.5)
    new ArrayRecord(r.values ++ Array[Any](text, amount))
  }

  /** Four busy keys, and 150 others that push key ids past a page of 64. */
  private def key(rnd: scala.util.Random): String =
    if (rnd.nextBoolean()) s"k${rnd.nextInt(4)}" else s"other${rnd.nextInt(150)}"

  private def check(assigner: WindowAssigner, aggs: Seq[A], seed: Long, lateOutput: Boolean): Unit =
    DifferentialCheck.check(
      spec(assigner, aggs, lateOutput),
      (Selection.Algorithm.Sliced, Selection.Layout.Packed),
      seed,
      steps = 300,
      key = key,
      widen = widen
    )

  private val assigners = Seq(
    "tumbling" -> TumblingWindows(10, 0, isEventTime = true),
    "tumbling with offset" -> TumblingWindows(10, 3, isEventTime = true),
    "sliding, size a multiple of slide" -> SlidingWindows(12, 4, 0, isEventTime = true),
    "sliding, size not a multiple of slide" -> SlidingWindows(10, 6, 1, isEventTime = true),
    "sliding, one slice per window" -> SlidingWindows(8, 8, 2, isEventTime = true)
  )

  for ((name, assigner) <- assigners; lateOutput <- Seq(true, false)) {
    property(s"$name, late output $lateOutput: same panes, late elements and counters") {
      Prop.forAll(Gen.long)(seed => check(assigner, packable, seed, lateOutput))
    }
  }

  for (gap <- Seq(1L, 5L, 12L); lateOutput <- Seq(true, false)) {
    property(s"sessions, gap $gap, late output $lateOutput: same panes, late elements and counters") {
      Prop.forAll(Gen.long) { seed =>
        val sessions = spec(SessionWindows(gap, -1, isEventTime = true), packable, lateOutput)
        val (packed, _) = DifferentialCheck.check(
          sessions,
          (Selection.Algorithm.Session, Selection.Layout.Packed),
          seed,
          steps = 300,
          DifferentialCheck.dataCounters :+ "windowsMerged",
          key = key,
          widen = widen
        )
        if (gap > 1) assert(packed.op.metrics.windowsMerged > 0) // gap 1 merges rarely
      }
    }
  }

  test("the local runtime packs count, sum and avg over sliced windows, and nothing else") {
    import Selection.Algorithm.{General, Session, Sliced}
    import Selection.Layout.{Keyed, Packed}
    val tumbling = TumblingWindows(10, 0, isEventTime = true)
    def kind(s: OperatorSpec, packed: Boolean = true) = {
      val c = Selection.choose(s, packed)
      (c.algorithm, c.layout)
    }
    assertEquals(kind(spec(tumbling, packable, lateOutput = true)), (Sliced, Packed))
    assertEquals(kind(spec(tumbling, Seq(A.Min("m", 1)), lateOutput = true)), (Sliced, Keyed))
    assertEquals(
      kind(spec(tumbling, Seq(A.Sum("s", 1, NumericKind.Decimal)), lateOutput = true)),
      (Sliced, Keyed)
    )
    assertEquals(kind(spec(tumbling, packable, true).copy(allowedLateness = 1)), (General, Keyed))
    val sessions = SessionWindows(10, -1, isEventTime = true)
    assertEquals(kind(spec(sessions, packable, lateOutput = true)), (Session, Packed))
    assertEquals(kind(spec(sessions, Seq(A.Max("m", 1)), lateOutput = true)), (Session, Keyed))
    // More slices per window than the packed layout gathers: sliced, one key at a time.
    val fine = SlidingWindows(600, 1, 0, isEventTime = true)
    assertEquals(kind(spec(fine, packable, lateOutput = true)), (Sliced, Keyed))
    assertEquals(kind(spec(SlidingWindows(256, 1, 0, isEventTime = true), packable, true)), (Sliced, Packed))
    // Spark's per-key backends keep the per-key layout.
    assertEquals(kind(spec(tumbling, packable, true), packed = false), (Sliced, Keyed))
    assert(!new sparkwin.runtime.spark.task.SparkKeyBackend(packable.toIndexedSeq).packable)
    assertEquals(
      Algorithms.operator(spec(tumbling, packable, true), new LocalBackend, new Collect).choice.layout,
      Packed
    )
  }
}
