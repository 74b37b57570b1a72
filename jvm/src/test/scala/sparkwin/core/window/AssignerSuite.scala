package sparkwin.core.window

import sparkwin.TestSupport.rec

class AssignerSuite extends munit.FunSuite {
  private val noClock = new WindowAssignerContext { def currentProcessingTime: Long = 0L }
  private def assign(a: WindowAssigner, ts: Long) = a.assignWindows(rec("k", 1, ts), ts, noClock)

  test("aligned start floors negative timestamps into the right window") {
    assertEquals(Window.alignedStart(-1, 0, 10), -10L)
    assertEquals(Window.alignedStart(-10, 0, 10), -10L)
    assertEquals(Window.alignedStart(-11, 0, 10), -20L)
    assertEquals(Window.alignedStart(5, 2, 10), 2L)
    assertEquals(Window.alignedStart(1, 2, 10), -8L)
    assertEquals(Window.alignedStart(5, -3, 10), -3L)
  }

  test("tumbling: an element exactly at a boundary opens the next window") {
    val a = TumblingWindows(10, 0, isEventTime = true)
    assertEquals(assign(a, 9), Seq(TimeWindow(0, 10)))
    assertEquals(assign(a, 10), Seq(TimeWindow(10, 20)))
    assertEquals(assign(a, -1), Seq(TimeWindow(-10, 0)))
  }

  test("tumbling with offset shifts the grid") {
    val a = TumblingWindows(10, 3, isEventTime = true)
    assertEquals(assign(a, 2), Seq(TimeWindow(-7, 3)))
    assertEquals(assign(a, 3), Seq(TimeWindow(3, 13)))
  }

  test("sliding: every start s with s <= ts < s + size, latest first") {
    val a = SlidingWindows(10, 5, 0, isEventTime = true)
    assertEquals(assign(a, 7), Seq(TimeWindow(5, 15), TimeWindow(0, 10)))
    assertEquals(assign(a, -3), Seq(TimeWindow(-5, 5), TimeWindow(-10, 0)))
    assertEquals(assign(a, 10), Seq(TimeWindow(10, 20), TimeWindow(5, 15)))
  }

  test("sliding: size need not be a multiple of slide") {
    val a = SlidingWindows(10, 4, 0, isEventTime = true)
    for (ts <- -50L to 50L) {
      val ws = assign(a, ts).map(_.asInstanceOf[TimeWindow])
      assert(ws.forall(w => w.start <= ts && ts < w.end), s"ts $ts in $ws")
      val expected = (-100L to 100L).filter(s => Math.floorMod(s, 4L) == 0 && s <= ts && ts < s + 10)
      assertEquals(ws.map(_.start).sorted, expected, s"ts $ts")
    }
  }

  test("sliding with size < slide leaves gaps without windows") {
    val a = SlidingWindows(3, 5, 0, isEventTime = true)
    assertEquals(assign(a, 1), Seq(TimeWindow(0, 3)))
    assertEquals(assign(a, 4), Seq.empty)
  }

  test("processing-time assigners use the clock, not the element") {
    val clock = new WindowAssignerContext { def currentProcessingTime: Long = 1234L }
    val a = TumblingWindows(100, 0, isEventTime = false)
    assertEquals(a.assignWindows(rec("k", 1, 5), 5, clock), Seq(TimeWindow(1200, 1300)))
  }

  test("sessions: static and dynamic gaps") {
    assertEquals(assign(SessionWindows(5, -1, isEventTime = true), 7), Seq(TimeWindow(7, 12)))
    val dyn = SessionWindows(0, 1, isEventTime = true) // gap read from field 1 (the value)
    assertEquals(dyn.assignWindows(rec("k", 30, 100), 100, noClock), Seq(TimeWindow(100, 130)))
    intercept[IllegalArgumentException](dyn.assignWindows(rec("k", 0, 100), 100, noClock))
  }

  test("constructor checks reject bad sizes") {
    intercept[IllegalArgumentException](TumblingWindows(0, 0, isEventTime = true))
    intercept[IllegalArgumentException](TumblingWindows(10, 10, isEventTime = true))
    intercept[IllegalArgumentException](SlidingWindows(10, 0, 0, isEventTime = true))
    intercept[IllegalArgumentException](SessionWindows(0, -1, isEventTime = true))
  }

  test("touching windows intersect and merge") {
    assert(TimeWindow(0, 5).intersects(TimeWindow(5, 10)))
    assert(!TimeWindow(0, 5).intersects(TimeWindow(6, 10)))
    val merged = TimeWindows.mergeOverlapping(Seq(TimeWindow(5, 10), TimeWindow(0, 5), TimeWindow(20, 25)))
    assertEquals(merged, Seq((TimeWindow(0, 10), Seq(TimeWindow(0, 5), TimeWindow(5, 10)))))
  }

  test("event times outside Spark's range are errors, and so are dynamic gaps no long can hold") {
    assert(sparkwin.core.EventTime.inRange(sparkwin.core.EventTime.Max))
    assert(!sparkwin.core.EventTime.inRange(sparkwin.core.EventTime.Max + 1))
    assert(!sparkwin.core.EventTime.inRange(sparkwin.core.EventTime.Min - 1))
    val huge = new sparkwin.core.ArrayRecord(Array[Any](Long.MaxValue))
    intercept[sparkwin.core.RecordError](SessionWindows.dynamicGap(huge, 0))
  }
}
