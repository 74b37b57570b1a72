package sparkwin.core.trigger

import sparkwin.TestSupport._
import sparkwin.core.ArrayRecord
import sparkwin.core.window.{TimeWindow, TumblingWindows}
import sparkwin.operator.{PaneInfo, PaneTiming}
import sparkwin.operator.AccumulationMode.Discarding

/** A trigger that fires on the elements whose boolean column is true (a Spark Column's result). */
class ConditionTriggerSuite extends munit.FunSuite {
  private val window = TimeWindow(0, 10)

  test("true fires; false and null do not; nothing is kept") {
    val t = ConditionTrigger(0)
    def on(v: Any) = t.onElement(new ArrayRecord(Array[Any](v)), 1L, window, null)
    assertEquals(on(true), TriggerResult.FIRE)
    assertEquals(on(false), TriggerResult.CONTINUE)
    assertEquals(on(null), TriggerResult.CONTINUE)
    assertEquals(t.states, Nil)
    assert(t.canMerge)
    t.onMerge(window, null) // keeps nothing, so merging has nothing to do
  }

  test("as AfterWatermark's early firings, each marked element fires a pane of what came since") {
    val h = harness(
      TumblingWindows(10, 0, isEventTime = true),
      trigger = AfterWatermark(Some(ConditionTrigger(3)), None),
      aggregates = Seq(collectValues),
      mode = Discarding
    )
    def marked(key: String, value: Long, ts: Long, mark: Boolean): Unit =
      h.runner.processElement(new ArrayRecord(Array[Any](key, value, ts, mark)), ts, 0)
    h.watermark(0)
    marked("k", 1, 1, mark = false)
    assertEquals(h.take(), Nil)
    marked("k", 2, 2, mark = true)
    marked("k", 3, 3, mark = false)
    marked("k", 4, 4, mark = true)
    h.watermark(10)
    val panes = h.take().map(o => (o.pane, o.value))
    assertEquals[Any, Any](
      panes,
      List(
        (PaneInfo(PaneTiming.Early, 0, true, false), Seq(1L, 2L)),
        (PaneInfo(PaneTiming.Early, 1, false, false), Seq(3L, 4L)),
        (PaneInfo(PaneTiming.OnTime, 2, false, true), Seq())
      )
    )
  }
}
