package sparkwin.operator

import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._

import scala.util.Random

import org.scalacheck.{Gen, Prop}

import sparkwin.TestSupport._
import sparkwin.core.agg.{Aggregate => A, NumericKind}
import sparkwin.core.window._

/** Pre-aggregation is invisible: for a combinable pipeline, feeding groups of elements that
  * share their windows through `processPartial` gives exactly what feeding every element does.
  */
class CombinerPropertySuite extends munit.ScalaCheckSuite {
  private val aggs = Seq(
    A.Sum("s", 1, NumericKind.Integral),
    A.Count("n", -1),
    A.Min("min", 1),
    A.Max("max", 2),
    A.Avg("avg", 1)
  )

  private def batches(seed: Long): Seq[Either[Long, Seq[(String, Long, Long)]]] = {
    val rnd = new Random(seed)
    var clock = 0L
    (0 until 2 + rnd.nextInt(8)).map { i =>
      clock += rnd.nextInt(30)
      if (i % 2 == 1) Left(clock - rnd.nextInt(15))
      else
        Right(
          Seq.fill(rnd.nextInt(25))((s"k${rnd.nextInt(3)}", 1L + rnd.nextInt(9), clock - rnd.nextInt(40)))
        )
    }
  }

  for (
    (name, assigner) <- Seq(
      "tumbling" -> TumblingWindows(10, 0, isEventTime = true),
      "sliding" -> SlidingWindows(10, 4, 0, isEventTime = true)
    )
  ) {
    property(s"$name: partial groups equal element-by-element processing") {
      Prop.forAll(Gen.long) { seed =>
        val one = harness(assigner, lateOutput = false, aggregates = aggs)
        val grouped = harness(assigner, lateOutput = false, aggregates = aggs)
        assert(grouped.runner.operator.spec.combinable)
        for (step <- batches(seed)) step match {
          case Left(wm) => one.watermark(wm); grouped.watermark(wm)
          case Right(rows) =>
            rows.foreach { case (k, v, ts) => one.add(k, v, ts) }
            // Group as the combiner does: by key and window set, in order of first appearance.
            val noClock = new WindowAssignerContext { def currentProcessingTime = 0L }
            val groups = rows.groupBy { case (k, _, ts) =>
              val ws = assigner.assignWindows(null, ts, noClock); (k, ws.headOption, ws.size)
            }
            val order = rows.map { case (k, _, ts) =>
              val ws = assigner.assignWindows(null, ts, noClock); (k, ws.headOption, ws.size)
            }.distinct
            for (id <- order) {
              val members = groups(id)
              val accs = aggs.map(_.newAccumulator()).toArray
              members.foreach { case (k, v, ts) => accs.foreach(_.add(rec(k, v, ts), ts)) }
              grouped.runner.processPartial(id._1, members.head._3, accs, members.size)
            }
        }
        assertEquals(grouped.take().map(_.toString), one.take().map(_.toString))
        assertEquals(grouped.metrics.droppedLate, one.metrics.droppedLate)
        assertEquals(grouped.stateEntries, one.stateEntries)
      }
    }
  }

  test("order-sensitive aggregates, lateness or a late output make a pipeline not combinable") {
    val tumbling = TumblingWindows(10, 0, isEventTime = true)
    def combinable(
        aggregates: Seq[sparkwin.core.agg.Aggregate],
        lateness: Long = 0,
        lateOutput: Boolean = false
    ) =
      harness(
        tumbling,
        aggregates = aggregates,
        lateness = lateness,
        lateOutput = lateOutput
      ).runner.operator.spec.combinable
    assert(combinable(aggs))
    assert(!combinable(Seq(A.First("f", 1))))
    assert(!combinable(Seq(A.CollectList("l", 1))))
    assert(!combinable(aggs, lateness = 5))
    assert(!combinable(aggs, lateOutput = true))
    assert(
      !harness(SessionWindows(5, -1, isEventTime = true), lateOutput = false).runner.operator.spec.combinable
    )
  }
}
