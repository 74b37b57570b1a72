package sparkwin.core.trigger

import sparkwin.TestSupport._
import sparkwin.operator.{AccumulationMode, PaneInfo, PaneTiming}
import sparkwin.operator.AccumulationMode.{Accumulating, Discarding}
import sparkwin.core.window._

/** Beam's trigger and pane semantics (Beam's ReduceFnRunner examples, in milliseconds). */
class BeamTriggerSuite extends munit.FunSuite {
  private val fixed10 = TumblingWindows(10, 0, isEventTime = true)
  private def earlyLate = AfterWatermark(Some(AfterPane(2)), Some(AfterPane(1)))
  private def panes(h: Harness) = h.take().map(o => (o.pane, o.value))
  private def p(t: PaneTiming, i: Long, last: Boolean = false) = PaneInfo(t, i, i == 0, last)
  import PaneTiming._

  for (mode <- Seq(Accumulating, Discarding)) {
    def acc[A](a: A, d: A): A = if (mode == Accumulating) a else d

    test(s"early every 2, late every element, lateness 5 ($mode)") {
      val h =
        harness(fixed10, trigger = earlyLate, lateness = 5, aggregates = Seq(collectValues), mode = mode)
      h.watermark(0).add("k", 1, 1)
      assertEquals(h.take(), Nil)
      h.add("k", 2, 3)
      assertEquals[Any, Any](panes(h), List((p(Early, 0), Seq(1L, 2L))))
      h.add("k", 3, 5).watermark(12)
      assertEquals[Any, Any](panes(h), List((p(OnTime, 1), acc(Seq(1L, 2L, 3L), Seq(3L)))))
      h.add("k", 4, 7)
      assertEquals[Any, Any](panes(h), List((p(Late, 2), acc(Seq(1L, 2L, 3L, 4L), Seq(4L)))))
      h.add("k", 5, 9)
      assertEquals[Any, Any](panes(h), List((p(Late, 3), acc(Seq(1L, 2L, 3L, 4L, 5L), Seq(5L)))))
      h.watermark(15) // expiry with nothing new: no final pane
      assertEquals(h.take(), Nil)
      h.add("k", 6, 2)
      assertEquals(h.lateValues, List(6L))
      assertEquals(h.stateEntries, 0)
    }

    test(s"with no lateness the on-time pane is the last, and is emitted even if empty ($mode)") {
      val h = harness(fixed10, trigger = earlyLate, aggregates = Seq(collectValues), mode = mode)
      h.watermark(0).add("k", 1, 1).add("k", 2, 3)
      assertEquals[Any, Any](panes(h), List((p(Early, 0), Seq(1L, 2L))))
      h.watermark(12)
      assertEquals[Any, Any](panes(h), List((p(OnTime, 1, last = true), acc(Seq(1L, 2L), Seq()))))
      h.add("k", 4, 7)
      assertEquals(h.lateValues, List(4L))
    }

    test(s"a repeated count trigger still gets on-time and late labels ($mode)") {
      val h = harness(
        fixed10,
        trigger = Repeatedly(AfterPane(2)),
        lateness = 5,
        aggregates = Seq(collectValues),
        mode = mode
      )
      h.watermark(0).add("k", 1, 1).add("k", 2, 3)
      assertEquals[Any, Any](panes(h), List((p(Early, 0), Seq(1L, 2L))))
      h.add("k", 3, 5).watermark(12)
      assertEquals(h.take(), Nil)
      h.add("k", 4, 7)
      assertEquals[Any, Any](panes(h), List((p(OnTime, 1), acc(Seq(1L, 2L, 3L, 4L), Seq(3L, 4L)))))
      h.add("k", 5, 8).watermark(13).add("k", 6, 9)
      assertEquals[Any, Any](panes(h), List((p(Late, 2), acc(Seq(1L, 2L, 3L, 4L, 5L, 6L), Seq(5L, 6L)))))
      h.watermark(15)
      assertEquals(h.take(), Nil)
      assertEquals(h.stateEntries, 0)
    }

    test(s"sessions: a merged session is a new window with its own panes ($mode)") {
      val h = harness(
        SessionWindows(10, -1, isEventTime = true),
        trigger = AfterWatermark(Some(AfterPane(2)), None),
        aggregates = Seq(collectValues),
        mode = mode
      )
      h.watermark(0).add("k", 1, 1).add("k", 2, 2) // [1,11) + [2,12) -> [1,12): counts 1 + 1
      val first = h.take()
      assertEquals[Any, Any](
        first.map(o => (o.start, o.end, o.pane, o.value)),
        List((1L, 12L, p(Early, 0), Seq(1L, 2L)))
      )
      h.add("k", 3, 20) // [20,30)
      h.add("k", 4, 11) // [11,21) bridges both: [1,30)
      assertEquals[Any, Any](
        h.take().map(o => (o.start, o.end, o.pane, o.value)),
        List((1L, 30L, p(Early, 0), acc(Seq(1L, 2L, 3L, 4L), Seq(3L, 4L))))
      )
      h.watermark(31)
      assertEquals[Any, Any](panes(h), List((p(OnTime, 1, last = true), acc(Seq(1L, 2L, 3L, 4L), Seq()))))
      h.add("k", 5, 25) // [25,35) is not expired: a new session beside the emitted one
      h.watermark(34)
      assertEquals[Any, Any](
        h.take().map(o => (o.start, o.end, o.pane, o.value)),
        List((25L, 35L, p(OnTime, 0, last = true), Seq(5L)))
      )
      assertEquals(h.stateEntries, 0)
    }
  }

  test("a window whose data all arrived late gets a LATE first pane") {
    val h = harness(
      fixed10,
      trigger = AfterWatermark(None, Some(AfterPane(1))),
      lateness = 10,
      aggregates = Seq(collectValues)
    )
    h.watermark(12).add("k", 1, 5)
    assertEquals[Any, Any](panes(h), List((p(Late, 0), Seq(1L))))
  }

  test("orFinally: repeated panes of 2 until the 5th element closes the window") {
    val h = harness(
      GlobalWindows,
      trigger = OrFinally(Repeatedly(AfterPane(2)), AfterPane(5)),
      aggregates = Seq(collectValues),
      mode = Discarding
    )
    (1L to 6L).foreach(v => h.add("k", v, v))
    val out = h.take()
    assertEquals[Any, Any](out.map(_.value), List(Seq(1L, 2L), Seq(3L, 4L), Seq(5L)))
    assertEquals(out.map(_.pane.isLast), List(false, false, true))
    assertEquals(h.metrics.droppedClosedWindow, 1L) // the 6th element: the window is closed
  }

  test("afterEach runs its triggers in order and finishes after the last") {
    val h = harness(
      GlobalWindows,
      trigger = AfterEach(Seq(AfterPane(2), AfterPane(3))),
      aggregates = Seq(collectValues),
      mode = Discarding
    )
    (1L to 6L).foreach(v => h.add("k", v, v))
    val out = h.take()
    assertEquals[Any, Any](out.map(_.value), List(Seq(1L, 2L), Seq(3L, 4L, 5L)))
    assertEquals(out.map(_.pane.isLast), List(false, true))
    assertEquals(h.metrics.droppedClosedWindow, 1L)
  }

  test("afterFirst fires on whichever comes first, processing-time delay or count") {
    val h = harness(
      GlobalWindows,
      trigger = Repeatedly(AfterFirst(Seq(AfterPane(3), AfterProcessingTime(100)))),
      aggregates = Seq(collectValues),
      mode = Discarding
    )
    h.procTime(0).add("k", 1, 1).add("k", 2, 2)
    h.procTime(99)
    assertEquals(h.take(), Nil)
    h.procTime(100)
    assertEquals[Any, Any](h.take().map(_.value), List(Seq(1L, 2L)))
    h.procTime(150).add("k", 3, 3).add("k", 4, 4).add("k", 5, 5) // count wins
    assertEquals[Any, Any](h.take().map(_.value), List(Seq(3L, 4L, 5L)))
    h.procTime(250) // the delay of the finished pane was cleared: no empty pane
    assertEquals(h.take(), Nil)
  }

  test("afterAll fires once both the count and the delay are satisfied") {
    val h = harness(
      GlobalWindows,
      trigger = AfterAll(Seq(AfterPane(2), AfterProcessingTime(100))),
      aggregates = Seq(collectValues)
    )
    h.procTime(0).add("k", 1, 1)
    h.procTime(100)
    assertEquals(h.take(), Nil) // the delay is satisfied, the count is not
    h.add("k", 2, 2)
    assertEquals[Any, Any](h.take().map(o => (o.value, o.pane.isLast)), List((Seq(1L, 2L), true)))
  }

  test("processing-time early firings: each pane waits for its own first element") {
    val h = harness(
      TumblingWindows(1000, 0, isEventTime = true),
      trigger = AfterWatermark(Some(AfterProcessingTime(50)), None),
      aggregates = Seq(collectValues),
      mode = Discarding
    )
    h.procTime(0).add("k", 1, 10)
    h.procTime(40).add("k", 2, 20)
    h.procTime(50)
    assertEquals[Any, Any](panes(h), List((p(Early, 0), Seq(1L, 2L))))
    h.procTime(70).add("k", 3, 30)
    h.procTime(119)
    assertEquals(h.take(), Nil)
    h.procTime(120)
    assertEquals[Any, Any](panes(h), List((p(Early, 1), Seq(3L))))
    h.watermark(999)
    assertEquals[Any, Any](panes(h), List((p(OnTime, 2, last = true), Seq())))
  }

  test("Beam triggers work on sessions: counts merge by summing") {
    val h = harness(
      SessionWindows(10, -1, isEventTime = true),
      trigger = Repeatedly(AfterPane(3)),
      aggregates = Seq(countAll)
    )
    h.add("k", 1, 0).add("k", 1, 20) // two sessions, one element each
    h.add("k", 1, 10) // bridges: merged count 2, plus this element: 3
    assertEquals[Any, Any](h.take().map(o => (o.start, o.end, o.value)), List((0L, 30L, 3L)))
  }

  test("a Beam pipeline flushes unfired elements in a last pane when the window expires") {
    val h = harness(fixed10, trigger = Repeatedly(AfterPane(5)), aggregates = Seq(countAll))
    h.add("k", 1, 1).add("k", 1, 2)
    h.watermark(9)
    assertEquals[Any, Any](h.take().map(o => (o.value, o.pane)), List((2L, p(OnTime, 0, last = true))))
  }

  test("a Flink pipeline does not flush at expiry but counts what never fired") {
    val h = harness(fixed10, trigger = CountTrigger(5), aggregates = Seq(countAll))
    h.add("k", 1, 1).add("k", 1, 2)
    h.watermark(9)
    assertEquals(h.take(), Nil)
    assertEquals(h.metrics.unfiredAtCleanup, 2L)
  }

  test("the window's end fires the on-time pane while early firings are pending") {
    val h = harness(
      fixed10,
      trigger = AfterWatermark(Some(AfterPane(2)), Some(AfterPane(1))),
      lateness = 5,
      aggregates = Seq(countAll)
    )
    h.add("k", 1, 1).watermark(9)
    assertEquals[Any, Any](panes(h), List((p(OnTime, 0), 1L)))
  }

  locally { val _ = AccumulationMode.Accumulating }
}
