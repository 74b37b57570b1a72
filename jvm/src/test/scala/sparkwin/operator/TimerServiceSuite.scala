package sparkwin.operator

import sparkwin.operator.algorithms.Algorithms
import sparkwin.TestSupport
import sparkwin.core.Record
import sparkwin.core.window.{GlobalWindow, TimeWindow, TumblingWindows, Window}
import sparkwin.operator.store.StateKind
import sparkwin.runtime.local.LocalBackend

/** The shell's timer service (one place registers, deletes, counts and fires the timers, each
  * with its key current) and its lateness (one place says what is late).
  */
class TimerServiceSuite extends munit.FunSuite {
  private def service() = {
    val backend = new LocalBackend(packable = false)
    backend.setCurrentKey("k")
    val metrics = new OperatorMetrics
    (new TimerService(backend, metrics), backend, metrics)
  }

  test("a timer is queued on its clock, and counted once however often it is registered") {
    val (timers, backend, metrics) = service()
    assert(timers.registerEventTime(9, TimeWindow(0, 10)))
    assert(!timers.registerEventTime(9, TimeWindow(0, 10)))
    assert(timers.register(eventTime = false, 5, GlobalWindow))
    assertEquals(metrics.timersRegistered, 2L)
    assertEquals((backend.eventTimers.nextTime, backend.processingTimers.nextTime), (9L, 5L))
    timers.delete(eventTime = true, 9, TimeWindow(0, 10))
    timers.deleteProcessingTime(5, GlobalWindow)
    assert(backend.eventTimers.isEmpty && backend.processingTimers.isEmpty)
    timers.registerKeyTimer(7)
    assertEquals(metrics.timersRegistered, 3L)
  }

  /** An algorithm that only records the timers the shell fires into it, with the key current. */
  private final class Recording(backend: LocalBackend) extends WindowAlgorithm {
    val fired = scala.collection.mutable.ArrayBuffer.empty[(Long, Any, Window, Boolean)]
    var onFire: Long => Unit = (_: Long) => ()
    def stateKind: Option[StateKind] = None
    def processElement(record: Record, timestamp: Long): Unit = ()
    def onTimer(time: Long, window: Window, eventTime: Boolean): Unit = {
      fired += ((time, backend.currentKey, window, eventTime))
      onFire(time)
    }
  }

  test("due timers fire by time, then key, then window, each with its key current; others wait") {
    val (timers, backend, _) = service()
    val algorithm = new Recording(backend)
    backend.setCurrentKey("b")
    timers.registerEventTime(5, TimeWindow(0, 6))
    timers.registerEventTime(9, TimeWindow(0, 10))
    timers.registerEventTime(20, TimeWindow(10, 21))
    backend.setCurrentKey("a")
    timers.registerEventTime(9, TimeWindow(5, 10))
    timers.registerEventTime(9, TimeWindow(0, 10))
    timers.registerEventTime(9, TimeWindow(0, 10)) // twice: fires once
    timers.registerProcessingTime(3, GlobalWindow) // another clock: not fired by the watermark
    assertEquals(timers.nextEventTime, 5L)
    assertEquals(timers.nextProcessingTime, 3L)
    timers.fireDue(eventTime = true, 10, algorithm)
    // Key ids are in order of first sight: "k" (the suite's), "b", then "a".
    assertEquals(
      algorithm.fired.toList,
      List[(Long, Any, Window, Boolean)](
        (5L, "b", TimeWindow(0, 6), true),
        (9L, "b", TimeWindow(0, 10), true),
        (9L, "a", TimeWindow(0, 10), true),
        (9L, "a", TimeWindow(5, 10), true)
      )
    )
    assertEquals(timers.nextEventTime, 20L)
    timers.registerProcessingTime(8, GlobalWindow)
    assertEquals((timers.nextProcessingTime, timers.lastProcessingTime), (3L, 8L))
    timers.deleteProcessingTime(8, GlobalWindow)
    algorithm.fired.clear()
    timers.fireDue(eventTime = false, 3, algorithm)
    assertEquals(algorithm.fired.toList, List[(Long, Any, Window, Boolean)]((3L, "a", GlobalWindow, false)))
    assertEquals((timers.nextProcessingTime, timers.lastProcessingTime), (Long.MaxValue, Long.MinValue))
  }

  test("a deleted timer never fires; one registered while firing fires in the same pass if due") {
    val (timers, backend, _) = service()
    val algorithm = new Recording(backend)
    timers.registerEventTime(4, GlobalWindow)
    timers.registerEventTime(6, GlobalWindow)
    timers.deleteEventTime(6, GlobalWindow)
    algorithm.onFire = time => if (time == 4) timers.registerEventTime(7, GlobalWindow)
    timers.fireDue(eventTime = true, 8, algorithm)
    assertEquals(algorithm.fired.map(_._1).toList, List(4L, 7L))
    assertEquals(timers.nextEventTime, Long.MaxValue)
  }

  test("key timers (the packed layouts') fire by time, then key id, with no window and the key set") {
    val (timers, backend, metrics) = service()
    val algorithm = new Recording(backend)
    backend.setCurrentKey("b")
    timers.registerKeyTimer(9)
    timers.registerKeyTimer(3) // an earlier one: both stay queued, the algorithm tells them apart
    backend.setCurrentKey("a")
    timers.registerKeyTimer(9)
    timers.registerEventTime(9, GlobalWindow)
    assertEquals((timers.nextEventTime, metrics.timersRegistered), (3L, 4L))
    timers.fireDue(eventTime = true, 9, algorithm)
    assertEquals(
      algorithm.fired.toList,
      List[(Long, Any, Window, Boolean)](
        (3L, "b", null, true),
        (9L, "a", GlobalWindow, true), // a queued timer first at equal times
        (9L, "b", null, true),
        (9L, "a", null, true)
      )
    )
  }

  test("an algorithm needs only its context: state, timers, output, clocks and lateness") {
    val spec = TestSupport.aggregateSpec(
      TumblingWindows(10, 0, isEventTime = true),
      Seq(TestSupport.countAll),
      lateOutput = true
    )
    val backend = new LocalBackend(packable = false)
    val out = new TestSupport.Collect
    val context = new WindowContext(spec, backend, out, new OperatorMetrics)
    // One timer per element at its window's end, one pane per timer, late elements aside.
    val algorithm = new WindowAlgorithm {
      def stateKind: Option[StateKind] = None
      def processElement(record: Record, timestamp: Long): Unit = {
        val window = TimeWindow(timestamp - timestamp % 10, timestamp - timestamp % 10 + 10)
        if (context.isLate(window)) context.late(record, timestamp)
        else context.timers.registerEventTime(window.maxTimestamp, window)
      }
      def onTimer(time: Long, window: Window, eventTime: Boolean): Unit =
        context.emitFinal(window, Array[Any](context.currentWatermark))
    }
    backend.setCurrentKey("x")
    algorithm.processElement(TestSupport.rec("x", 1, 3), 3)
    backend.setCurrentKey("y")
    algorithm.processElement(TestSupport.rec("y", 1, 12), 12)
    context.watermark = 15
    context.timers.fireDue(eventTime = true, 15, algorithm)
    algorithm.processElement(TestSupport.rec("y", 1, 4), 4)
    assertEquals(out.take().map(o => (o.key, o.start, o.value)), List[(Any, Long, Any)](("x", 0L, 15L)))
    assertEquals(out.late.map(_._2).toList, List(4L))
    assertEquals(context.timers.nextEventTime, 19L)
  }

  private def operator(lateness: Long, eventTime: Boolean = true) = {
    val spec = TestSupport
      .aggregateSpec(
        TumblingWindows(10, 0, isEventTime = eventTime),
        Seq(TestSupport.countAll),
        lateOutput = false
      )
      .copy(allowedLateness = lateness)
    Algorithms.operator(spec, new LocalBackend(packable = false), new TestSupport.Collect)
  }

  test(
    "one door moves the clocks: advance fires processing time then event time, set and restore fire nothing"
  ) {
    val spec = TestSupport.aggregateSpec(
      TumblingWindows(10, 0, isEventTime = true),
      Seq(TestSupport.countAll),
      lateOutput = false
    )
    val out = new TestSupport.Collect
    val backend = new LocalBackend(packable = false)
    val op = Algorithms.withChoice(
      spec,
      Selection.Choice(Selection.Algorithm.General, Selection.Layout.Keyed, "test"),
      backend,
      out
    )
    backend.setCurrentKey("k")
    op.processElement(TestSupport.rec("k", 1, 3), 3)
    op.moveClocks(ClockMove.Keep, 50, ClockMove.Set)
    assertEquals((op.currentWatermark, op.currentProcessingTime), (Long.MinValue, 50L))
    op.moveClocks(5, ClockMove.Keep, ClockMove.Advance)
    assertEquals((op.currentWatermark, op.currentProcessingTime, out.take()), (5L, 50L, Nil))
    op.moveClocks(2, 40, ClockMove.Restore) // backwards, for a key loaded from its own moment
    assertEquals((op.currentWatermark, op.currentProcessingTime), (2L, 40L))
    op.moveClocks(9, 45, ClockMove.Advance)
    assertEquals(out.take().map(_.short), List[(Any, Long, Long, Any)](("k", 0L, 10L, 1L)))
    assertEquals((op.currentWatermark, op.currentProcessingTime, op.nextEventTimer), (9L, 45L, Long.MaxValue))
    op.moveClocks(3, 44, ClockMove.Advance) // never backwards when advancing
    assertEquals((op.currentWatermark, op.currentProcessingTime), (9L, 45L))
  }

  test("late is behind the watermark by more than the allowed lateness, by the largest timestamp") {
    val op = operator(lateness = 5)
    op.moveClocks(20, ClockMove.Keep, ClockMove.Advance)
    assert(op.isLateAt(15) && !op.isLateAt(16))
    assert(op.isLate(TimeWindow(0, 16)) && !op.isLate(TimeWindow(0, 17)))
    // A lateness that overflows the window's end never makes it late.
    assert(!operator(lateness = Long.MaxValue).isLateAt(Long.MaxValue - 3))
  }

  test("nothing is late in processing time, nor before the first watermark") {
    val processing = operator(lateness = 0, eventTime = false)
    processing.moveClocks(100, ClockMove.Keep, ClockMove.Advance)
    assert(!processing.isLateAt(0))
    assert(!operator(lateness = 0).isLateAt(Long.MinValue + 1))
  }
}
