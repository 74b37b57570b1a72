package sparkwin.timer

import sparkwin.window.TimeWindow

class TimerQueueSuite extends munit.FunSuite {
  test("timers are unique per key, window and timestamp; deleted timers never fire") {
    val q = new TimerQueue
    assert(q.add(Timer(10, 1, TimeWindow(0, 11))))
    assert(!q.add(Timer(10, 1, TimeWindow(0, 11))))
    q.add(Timer(10, 2, TimeWindow(0, 11)))
    q.add(Timer(5, 1, TimeWindow(0, 6)))
    q.add(Timer(7, 1, TimeWindow(0, 8)))
    assert(q.remove(Timer(7, 1, TimeWindow(0, 8))))
    val fired = Iterator.continually(q.pollDue(10)).takeWhile(_ != null).toList
    assertEquals(fired.map(t => (t.timestamp, t.keyId)), List((5L, 1L), (10L, 1L), (10L, 2L)))
    assert(q.isEmpty)
  }

  test("nothing is due before its time") {
    val q = new TimerQueue
    q.add(Timer(10, 0, TimeWindow(0, 11)))
    assertEquals(q.pollDue(9), null)
    assertEquals(q.pollDue(10).timestamp, 10L)
  }
}
