package sparkwin.difftest

import scala.util.Random

import Dsl._

/** The comparator is not vacuous: when sparkwin runs a slightly different pipeline than the
  * reference, the differential runs notice, on fixed sequences and on random ones.
  */
class SanitySuite extends munit.FunSuite {

  private def planted(p: Pipeline, sparkwin: Pipeline, steps: Vector[Step]): Verdict =
    FlinkDiff
      .run(p, steps, Some(sparkwin))
      .fold(pr => Verdict(Vector(pr), Vector.empty), FlinkDiff.compare(_))

  private val steps =
    Vector(El("a", 1L, 1), El("a", 9L, 2), El("b", 10L, 3), Wm(10L), El("a", 2L, 4), El("a", 3L, 5), Wm(30L))

  private val mutations: Seq[(String, Pipeline, Pipeline)] = Seq(
    ("window size", Pipeline(Tumbling(10, 0, true)), Pipeline(Tumbling(11, 0, true))),
    ("offset", Pipeline(Tumbling(10, 0, true)), Pipeline(Tumbling(10, 1, true))),
    ("allowed lateness", Pipeline(Tumbling(10, 0, true), lateness = 5), Pipeline(Tumbling(10, 0, true))),
    (
      "late side output",
      Pipeline(Tumbling(10, 0, true), sideOutput = true),
      Pipeline(Tumbling(10, 0, true), sideOutput = false)
    ),
    (
      "count trigger",
      Pipeline(Tumbling(20, 0, true), Some(CountT(2))),
      Pipeline(Tumbling(20, 0, true), Some(CountT(3)))
    ),
    (
      "purging",
      Pipeline(Tumbling(20, 0, true), Some(CountT(2))),
      Pipeline(Tumbling(20, 0, true), Some(PurgingT(CountT(2))))
    ),
    (
      "evict before or after",
      Pipeline(Tumbling(20, 0, true), Some(CountT(2)), Some(CountEv(1, false))),
      Pipeline(Tumbling(20, 0, true), Some(CountT(2)), Some(CountEv(1, true)))
    ),
    ("session gap", Pipeline(Session(5)), Pipeline(Session(6)))
  )

  for ((name, flink, sparkwin) <- mutations) {
    test(s"a different $name is noticed") {
      assert(planted(flink, flink, steps).ok, "the unmutated pipeline should agree")
      assert(!planted(flink, sparkwin, steps).ok, s"sparkwin ran $sparkwin and nobody noticed")
    }
  }

  test("random sequences notice an allowed lateness that is one millisecond off") {
    val detected = (0 until 100).count { i =>
      val r = new Random(i.toLong)
      val p = Families.tumbling.pipeline(r).copy(lateness = 3)
      val s = Families.tumbling.steps(r, p)
      !planted(p, p.copy(lateness = 4), s).ok
    }
    assert(detected > 0, "100 random sequences never told lateness 3 from 4")
  }

  test("Storm runs notice a lag that is one millisecond off") {
    val p = StormPipeline(SDuration(10), SDuration(5), 0, true)
    val s = Vector(El("a", 1L, 1), El("a", 5L, 2), El("a", 11L, 3), Tick, El("a", 10L, 4), Tick)
    val keys = Seq("a")
    // Storm with lag 0 against sparkwin with lag 1: the watermarks differ by one.
    val storm = new StormReference(p, keys, timestamps = true)
    val spark = SparkwinEngine.storm(p.copy(lag = 1), StormDiff.interval)
    var now = 0L
    val outs = s.map {
      case Step.Element(e) => storm.element(e); spark.element(e); (storm.drain(), spark.drain())
      case _ =>
        now += StormDiff.interval; storm.tick(); spark.processingTime(now); (storm.drain(), spark.drain())
    }
    assert(outs.exists { case (a, b) => a.panes.map(_.pane) != b.panes || a.late != b.late })
  }
}
