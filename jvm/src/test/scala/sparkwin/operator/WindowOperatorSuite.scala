package sparkwin.operator

import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._

import sparkwin.TestSupport._
import sparkwin.core.evictor.{CountEvictor, DeltaEvictor, TimeEvictor}
import sparkwin.core.trigger._
import sparkwin.core.window._

class WindowOperatorSuite extends munit.FunSuite {
  private def tumbling(size: Long) = TumblingWindows(size, 0, isEventTime = true)

  test("tumbling: fires when the watermark reaches maxTimestamp, then cleans up") {
    val h = harness(tumbling(10))
    h.add("a", 1, 1).add("a", 5, 5).add("b", 7, 3)
    h.watermark(8)
    assertEquals[Any, Any](h.take(), Nil)
    h.watermark(9)
    val out = h.take()
    assertEquals[Any, Any](out.map(_.short).toSet, Set(("a", 0L, 10L, 6L), ("b", 0L, 10L, 7L)))
    assert(out.forall(o => o.pane == PaneInfo(PaneTiming.OnTime, 0, isFirst = true, isLast = true)))
    assertEquals[Any, Any](h.stateEntries, 0)
  }

  test("an element exactly at a window's end belongs to the next window") {
    val h = harness(tumbling(10))
    h.add("a", 1, 9).add("a", 2, 10)
    h.watermark(9)
    assertEquals[Any, Any](h.short(), List(("a", 0L, 10L, 1L)))
    h.watermark(19)
    assertEquals[Any, Any](h.short(), List(("a", 10L, 20L, 2L)))
  }

  test("negative timestamps land in windows before the epoch") {
    val h = harness(tumbling(10))
    h.add("a", 1, -1).add("a", 2, -10).add("a", 4, -11)
    h.watermark(-1)
    assertEquals[Any, Any](h.short().toSet, Set(("a", -20L, -10L, 4L), ("a", -10L, 0L, 3L)))
  }

  test("late element without allowed lateness goes to the side output") {
    val h = harness(tumbling(10))
    h.add("a", 1, 1).watermark(9).take()
    h.add("a", 5, 9) // window [0,10) is late at watermark 9
    assertEquals[Any, Any](h.take(), Nil)
    assertEquals[Any, Any](h.lateValues, List(5L))
    assertEquals[Any, Any](h.metrics.lateSideOutput, 1L)
    assertEquals[Any, Any](h.stateEntries, 0)
  }

  test("late element within allowed lateness fires again with the whole window") {
    val h = harness(tumbling(10), lateness = 5)
    h.add("a", 1, 1).add("a", 5, 5).watermark(9)
    val onTime = h.take()
    assertEquals[Any, Any](onTime.map(_.short), List(("a", 0L, 10L, 6L)))
    assertEquals[Any, Any](onTime.head.pane, PaneInfo(PaneTiming.OnTime, 0, isFirst = true, isLast = false))
    h.add("a", 3, 3)
    val late = h.take()
    assertEquals[Any, Any](late.map(_.short), List(("a", 0L, 10L, 9L)))
    assertEquals[Any, Any](late.head.pane, PaneInfo(PaneTiming.Late, 1, isFirst = false, isLast = false))
    h.watermark(13).add("a", 10, 4)
    assertEquals[Any, Any](h.short(), List(("a", 0L, 10L, 19L)))
    h.watermark(14) // cleanup at maxTimestamp + lateness: nothing fires
    assertEquals[Any, Any](h.take(), Nil)
    assertEquals[Any, Any](h.stateEntries, 0)
    h.add("a", 100, 3) // beyond lateness
    assertEquals[Any, Any](h.take(), Nil)
    assertEquals[Any, Any](h.lateValues, List(100L))
  }

  test("late elements are counted as dropped when no side output is set") {
    val h = harness(tumbling(10), lateOutput = false)
    h.add("a", 1, 1).watermark(20).add("a", 2, 2).add("a", 3, 25)
    assertEquals[Any, Any](h.metrics.droppedLate, 1L)
    assertEquals[Any, Any](h.out.late.size, 0)
  }

  test("a watermark one before maxTimestamp does not fire") {
    val h = harness(tumbling(10))
    h.add("a", 1, 0).watermark(8)
    assertEquals[Any, Any](h.take(), Nil)
  }

  test("sliding windows: each element counts in every window that holds it") {
    val h = harness(SlidingWindows(10, 5, 0, isEventTime = true))
    h.add("a", 1, 7).add("a", 10, 12)
    h.watermark(100)
    assertEquals[Any, Any](
      h.short().toSet,
      Set(("a", 0L, 10L, 1L), ("a", 5L, 15L, 11L), ("a", 10L, 20L, 10L))
    )
    assertEquals[Any, Any](h.stateEntries, 0)
  }

  test("sliding: an element late for one window still counts in the others, not as late") {
    val h = harness(SlidingWindows(10, 5, 0, isEventTime = true))
    h.add("a", 1, 1).watermark(9).take()
    h.add("a", 2, 8) // [0,10) is late, [5,15) is open
    assertEquals[Any, Any](h.lateValues, Nil)
    h.watermark(14)
    assertEquals[Any, Any](h.short(), List(("a", 5L, 15L, 2L)))
  }

  test("sessions: elements within the gap merge; a bridging element joins two sessions") {
    val h = harness(SessionWindows(5, -1, isEventTime = true))
    h.add("a", 1, 0).add("a", 2, 12) // [0,5) and [12,17)
    h.add("a", 4, 6) // [6,11) touches neither
    h.add("a", 8, 9) // [9,14) bridges [6,11) and [12,17) into [6,17)
    h.watermark(100)
    assertEquals[Any, Any](h.short().toSet, Set(("a", 0L, 5L, 1L), ("a", 6L, 17L, 14L)))
    assertEquals[Any, Any](h.stateEntries, 0)
  }

  test("sessions: a merge while the older window's timer is pending fires only the merged window") {
    val h = harness(SessionWindows(10, -1, isEventTime = true))
    h.add("a", 1, 0) // [0,10), timer at 9
    h.add("a", 2, 8) // [8,18) merges into [0,18); the timer at 9 must not fire
    h.watermark(9)
    assertEquals[Any, Any](h.take(), Nil)
    h.watermark(17)
    val out = h.take()
    assertEquals[Any, Any](out.map(_.short), List(("a", 0L, 18L, 3L)))
    assertEquals[Any, Any](h.metrics.windowsMerged, 1L)
    assertEquals[Any, Any](h.stateEntries, 0)
    // Opened: [0,10), [0,18); cleaned: [0,10) by the merge, [0,18) at expiry.
    assertEquals[Any, Any]((h.metrics.windowsOpened, h.metrics.windowsCleaned), (2L, 2L))
  }

  test("sessions: touching windows merge") {
    val h = harness(SessionWindows(5, -1, isEventTime = true))
    h.add("a", 1, 0).add("a", 1, 5).add("a", 1, 10).add("a", 1, 16)
    h.watermark(100)
    assertEquals[Any, Any](h.short().toSet, Set(("a", 0L, 15L, 3L), ("a", 16L, 21L, 1L)))
  }

  test("sessions with a dynamic gap") {
    val h = harness(SessionWindows(0, 1, isEventTime = true)) // gap = the element's value
    h.add("a", 10, 0).add("a", 3, 12) // [0,10) and [12,15) stay apart
    h.watermark(100)
    assertEquals[Any, Any](h.short().toSet, Set(("a", 0L, 10L, 10L), ("a", 12L, 15L, 3L)))
  }

  test("sessions with lateness: a late element merging into a fired session fires it again") {
    val h = harness(SessionWindows(5, -1, isEventTime = true), lateness = 10)
    h.add("a", 1, 0).watermark(4)
    assertEquals[Any, Any](h.short(), List(("a", 0L, 5L, 1L)))
    h.add("a", 2, 3) // [3,8) merges with [0,5) -> [0,8), watermark 4 < 7: fires at 7
    h.watermark(7)
    val out = h.take()
    assertEquals[Any, Any](out.map(_.short), List(("a", 0L, 8L, 3L)))
    // The merged session is a new window: its panes are numbered afresh, as in Beam.
    assertEquals[Any, Any](out.head.pane, PaneInfo(PaneTiming.OnTime, 0, isFirst = true, isLast = false))
    h.watermark(17)
    assertEquals[Any, Any](h.stateEntries, 0)
  }

  test("count trigger fires every n elements and keeps contents (accumulating)") {
    val h = harness(tumbling(100), trigger = CountTrigger(2))
    h.add("a", 1, 1).add("a", 2, 2).add("a", 3, 3).add("a", 4, 4)
    val out = h.take()
    assertEquals[Any, Any](out.map(_.value), List(3L, 10L))
    assertEquals[Any, Any](out.map(_.pane.timing), List(PaneTiming.Early, PaneTiming.Early))
    h.watermark(99) // no on-time firing: the count trigger replaced the event-time trigger
    assertEquals[Any, Any](h.take(), Nil)
    assertEquals[Any, Any](h.stateEntries, 0)
  }

  test("discarding mode: each pane holds only what arrived since the last firing") {
    val h = harness(tumbling(100), trigger = CountTrigger(2), mode = AccumulationMode.Discarding)
    h.add("a", 1, 1).add("a", 2, 2).add("a", 3, 3).add("a", 4, 4)
    assertEquals[Any, Any](h.take().map(_.value), List(3L, 7L))
  }

  test("purging trigger clears contents after each firing") {
    val h = harness(tumbling(100), trigger = PurgingTrigger(CountTrigger(2)))
    h.add("a", 1, 1).add("a", 2, 2).add("a", 3, 3).add("a", 4, 4).add("a", 5, 5)
    assertEquals[Any, Any](h.take().map(_.value), List(3L, 7L))
    h.watermark(99)
    assertEquals[Any, Any](h.stateEntries, 0)
  }

  test("continuous event-time trigger catches up interval by interval in one watermark") {
    val h = harness(tumbling(100), trigger = ContinuousEventTimeTrigger(30))
    h.add("a", 1, 5)
    h.watermark(120)
    val out = h.take()
    assertEquals[Any, Any](out.size, 4) // at 30, 60, 90 and the window end 99
    assertEquals[Any, Any](out.map(_.pane.timing).last, PaneTiming.OnTime)
    assertEquals[Any, Any](out.map(_.pane.index), List(0L, 1L, 2L, 3L))
    assertEquals[Any, Any](h.stateEntries, 0)
  }

  test("continuous event-time trigger fires as the watermark passes each interval") {
    val h = harness(tumbling(100), trigger = ContinuousEventTimeTrigger(30))
    h.add("a", 1, 5).watermark(29)
    assertEquals[Any, Any](h.take(), Nil)
    h.watermark(30)
    assertEquals[Any, Any](h.take().map(_.value), List(1L))
    h.add("a", 2, 40).watermark(60)
    assertEquals[Any, Any](h.take().map(_.value), List(3L))
  }

  test("delta trigger fires when an element is more than the threshold from the last firing") {
    val h = harness(GlobalWindows, trigger = DeltaTrigger(5.0, DeltaFunction(Seq(1))))
    h.add("a", 1, 1).add("a", 3, 2).add("a", 6, 3).add("a", 7, 4).add("a", 8, 5).add("a", 13, 6)
    // reference 1: 3 and 6 are not more than 5 away; 7 is (fire, reference 7); 8 not; 13 is
    assertEquals[Any, Any](h.take().map(_.value), List(17L, 38L))
  }

  test("processing-time windows fire on the clock and ignore event time") {
    val h = harness(TumblingWindows(100, 0, isEventTime = false))
    h.procTime(10).add("a", 1, 999999).procTime(50).add("a", 2, -5)
    h.procTime(98)
    assertEquals[Any, Any](h.take(), Nil)
    h.procTime(99)
    assertEquals[Any, Any](h.short(), List(("a", 0L, 100L, 3L)))
    assertEquals[Any, Any](h.stateEntries, 0)
  }

  test("continuous processing-time trigger on a processing-time window") {
    val h =
      harness(TumblingWindows(100, 0, isEventTime = false), trigger = ContinuousProcessingTimeTrigger(20))
    h.procTime(5).add("a", 1, 0)
    h.procTime(45)
    assertEquals[Any, Any](h.take().map(_.value), List(1L, 1L)) // at 20 and 40
    h.add("a", 2, 0).procTime(99)
    assertEquals[Any, Any](h.take().map(_.value), List(3L, 3L, 3L)) // at 60, 80, and the end 99
    assertEquals[Any, Any](h.stateEntries, 0)
  }

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

  test("count windows: tumbling by n with a purging count trigger on global windows") {
    val h = harness(GlobalWindows, trigger = PurgingTrigger(CountTrigger(3)), aggregates = Seq(collectValues))
    (1L to 7L).foreach(v => h.add("a", v, v))
    assertEquals[Any, Any](h.take().map(_.value), List(Seq(1L, 2L, 3L), Seq(4L, 5L, 6L)))
  }

  test("count windows: sliding by n every m with a count evictor (Flink countWindow(3, 2))") {
    val h = harness(
      GlobalWindows,
      trigger = CountTrigger(2),
      evictor = Some(CountEvictor(3, doEvictAfter = false)),
      aggregates = Seq(collectValues)
    )
    (1L to 6L).foreach(v => h.add("a", v, v))
    assertEquals[Any, Any](h.take().map(_.value), List(Seq(1L, 2L), Seq(2L, 3L, 4L), Seq(4L, 5L, 6L)))
  }

  test("time evictor keeps elements within the size of the newest timestamp") {
    val h = harness(tumbling(100), evictor = Some(TimeEvictor(10, doEvictAfter = false)))
    h.add("a", 1, 5).add("a", 2, 50).add("a", 4, 45).add("a", 8, 41).add("a", 16, 40)
    h.watermark(99)
    assertEquals[Any, Any](h.take().map(_.value), List(14L)) // cutoff 50 - 10 = 40: keeps 50, 45, 41
  }

  test("evict-after: the function sees everything, the window keeps the survivors") {
    val h = harness(
      tumbling(100),
      trigger = CountTrigger(2),
      evictor = Some(CountEvictor(1, doEvictAfter = true)),
      aggregates = Seq(collectValues)
    )
    h.add("a", 1, 1).add("a", 2, 2).add("a", 3, 3).add("a", 4, 4)
    assertEquals[Any, Any](h.take().map(_.value), List(Seq(1L, 2L), Seq(2L, 3L, 4L)))
  }

  test("delta evictor removes elements at least the threshold from the last one") {
    val h = harness(
      tumbling(100),
      evictor = Some(DeltaEvictor(5.0, DeltaFunction(Seq(1)), doEvictAfter = false)),
      aggregates = Seq(collectValues)
    )
    h.add("a", 1, 1).add("a", 9, 2).add("a", 4, 3).add("a", 7, 4)
    h.watermark(99)
    assertEquals[Any, Any](h.take().map(_.value), List(Seq(9L, 4L, 7L))) // |1-7| = 6 >= 5 goes
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

  test("end of input fires every open event-time window") {
    val h = harness(tumbling(10), lateness = 1000)
    h.add("a", 1, 1).add("a", 2, 55)
    h.runner.endOfInput()
    assertEquals[Any, Any](h.short().toSet, Set(("a", 0L, 10L, 1L), ("a", 50L, 60L, 2L)))
    assertEquals[Any, Any](h.stateEntries, 0)
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
