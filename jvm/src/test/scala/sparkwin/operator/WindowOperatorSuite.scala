package sparkwin.operator

import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._

import sparkwin.TestSupport._
import sparkwin.core.evictor.{CountEvictor, DeltaEvictor, TimeEvictor}
import sparkwin.core.trigger._
import sparkwin.core.window._

/** The operator's behaviour beyond the transcripts in `tests/scenarios` (run by ScenarioSuite
  * and by pytest): timeouts, process functions, global windows, gaps, aggregates, refusals.
  */
class WindowOperatorSuite extends munit.FunSuite {
  private def tumbling(size: Long) = TumblingWindows(size, 0, isEventTime = true)

  test("processing-timeout trigger fires a count window that stalls") {
    val h = harness(
      GlobalWindows,
      trigger = PurgingTrigger(
        ProcessingTimeoutTrigger(CountTrigger(3), 100, resetTimerOnNewRecord = false, clearOnTimeout = true)
      )
    )
    h.procTime(0).add("a", 1, 0).add("a", 2, 0).add("a", 3, 0)
    assertEquals[Any, Any](h.take().map(_.value), List(6L))
    h.procTime(10).add("a", 4, 0)
    h.procTime(109)
    assertEquals[Any, Any](h.take(), Nil)
    h.procTime(110)
    assertEquals[Any, Any](h.take().map(_.value), List(4L))
  }

  test("process functions receive the pane's elements in arrival order") {
    val h = harness(tumbling(10), process = true)
    h.add("a", 3, 1).add("a", 1, 2).add("a", 2, 0).watermark(9)
    assertEquals[Any, Any](h.take().map(_.value), List(List(3L, 1L, 2L)))
    assertEquals[Any, Any](h.stateEntries, 0)
  }

  test("global windows with the default trigger never fire and never clean up") {
    val h = harness(GlobalWindows)
    h.add("a", 1, 1).watermark(Long.MaxValue - 1)
    assertEquals[Any, Any](h.take(), Nil)
    assert(h.stateEntries > 0)
  }

  test("a sliding assigner with gaps counts elements that fall in no window") {
    val h = harness(SlidingWindows(3, 5, 0, isEventTime = true))
    h.add("a", 1, 4)
    assertEquals[Any, Any](h.metrics.droppedNoWindow, 1L)
  }

  test("all aggregates at once") {
    import sparkwin.core.agg.{Aggregate => A, NumericKind}
    val h = harness(
      tumbling(10),
      aggregates = Seq(
        A.Count("n", -1),
        A.Sum("s", 1, NumericKind.Integral),
        A.Avg("avg", 1),
        A.Min("min", 1),
        A.Max("max", 1),
        A.First("first", 1),
        A.Last("last", 1),
        A.CollectList("list", 1),
        A.CollectSet("set", 1)
      )
    )
    h.add("a", 5, 3).add("a", 2, 1).add("a", 5, 8).add("a", 9, 2)
    h.watermark(9)
    assertEquals[Any, Any](
      h.take().head.values,
      Seq[Any](4L, 21L, 5.25, 2L, 9L, 2L, 5L, Seq(5L, 2L, 5L, 9L), Seq(5L, 2L, 9L))
    )
  }

  test("a trigger that cannot merge is refused for sessions") {
    intercept[IllegalArgumentException] {
      harness(SessionWindows(5, -1, isEventTime = true), trigger = DeltaTrigger(1, DeltaFunction(Seq(1))))
    }
  }
}
