package sparkwin.operator

import sparkwin.TestSupport
import sparkwin.core.window.{GlobalWindow, TimeWindow, TumblingWindows}
import sparkwin.runtime.local.LocalBackend

/** The shell's timer service (one place registers, deletes and counts the current key's timers)
  * and its lateness (one place says what is late).
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
    timers.queuedElsewhere()
    assertEquals(metrics.timersRegistered, 3L)
  }

  private def operator(lateness: Long, eventTime: Boolean = true) = {
    val spec = TestSupport
      .aggregateSpec(
        TumblingWindows(10, 0, isEventTime = eventTime),
        Seq(TestSupport.countAll),
        lateOutput = false
      )
      .copy(allowedLateness = lateness)
    WindowOperator(spec, new LocalBackend(packable = false), new TestSupport.Collect)
  }

  test("late is behind the watermark by more than the allowed lateness, by the largest timestamp") {
    val op = operator(lateness = 5)
    op.advanceWatermark(20)
    assert(op.isLateAt(15) && !op.isLateAt(16))
    assert(op.isLate(TimeWindow(0, 16)) && !op.isLate(TimeWindow(0, 17)))
    // A lateness that overflows the window's end never makes it late.
    assert(!operator(lateness = Long.MaxValue).isLateAt(Long.MaxValue - 3))
  }

  test("nothing is late in processing time, nor before the first watermark") {
    val processing = operator(lateness = 0, eventTime = false)
    processing.advanceWatermark(100)
    assert(!processing.isLateAt(0))
    assert(!operator(lateness = 0).isLateAt(Long.MinValue + 1))
  }
}
