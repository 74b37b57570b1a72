package sparkwin.operator

import sparkwin.TestSupport._
import sparkwin.core.window.{StormSize, StormWindow, StormWindows}

/** Storm's windows without a timestamp field: counts fire as tuples arrive, durations on
  * processing time; no watermark is ever given and nothing is late.
  */
class StormArrivalSuite extends munit.FunSuite {
  import StormSize.{Count, Duration}

  private def storm(length: StormSize, slide: StormSize) =
    harness(StormWindows(length, slide, 0, isEventTime = false), aggregates = Seq(collectValues))

  /** (start, end, ids) of each window; a count length has no start (Long.MinValue). */
  private def windows(h: Harness): List[(Long, Long, Any)] =
    h.take().map(o => o.window match { case StormWindow(s, e) => (s, e, o.value); case w => fail(s"$w") })

  private def ids(h: Harness): List[Any] = h.take().map(_.value)

  // The event time a tuple carries is never read: give each a nonsense one.
  private def arrive(h: Harness, id: Long): Unit = h.add("k", id, -id * 1000)

  test("Storm's default mode: Count(5) sliding by Count(2) over 8 tuples gives 4 windows as they arrive") {
    val h = storm(Count(5), Count(2))
    val seen = (1L to 8L).map { id => arrive(h, id); ids(h) }
    assertEquals[Any, Any](
      seen.toList,
      List(
        Nil,
        List(Seq(1L, 2L)),
        Nil,
        List(Seq(1L, 2L, 3L, 4L)),
        Nil,
        List(Seq(2L, 3L, 4L, 5L, 6L)),
        Nil,
        List(Seq(4L, 5L, 6L, 7L, 8L))
      )
    )
    assertEquals(h.metrics.droppedLate + h.metrics.lateSideOutput, 0L)
  }

  test("tumbling counts: every third tuple closes a window of three") {
    val h = storm(Count(3), Count(3))
    (1L to 7L).foreach(arrive(h, _))
    assertEquals[Any, Any](ids(h), List(Seq(1L, 2L, 3L), Seq(4L, 5L, 6L)))
    // As in Storm, tuples expire when the next window fires: 4, 5, 6 go with tuple 9.
    assertEquals(h.stateEntries, 4)
  }

  test("durations: windows (now - length, now] every slide of processing time, until empty") {
    val h = storm(Duration(10000), Duration(5000))
    h.procTime(1000); arrive(h, 1)
    h.procTime(4000); arrive(h, 2)
    h.procTime(7000); arrive(h, 3)
    h.procTime(30000)
    assertEquals[Any, Any](
      windows(h),
      List(
        (-5000L, 5000L, Seq(1L, 2L)),
        (0L, 10000L, Seq(1L, 2L, 3L)),
        (5000L, 15000L, Seq(3L))
      )
    )
    assertEquals(h.stateEntries, 0, "expired tuples leave no state")
  }

  test("a tuple arriving at a firing's instant belongs to the next firing") {
    val h = storm(Duration(10000), Duration(5000))
    h.procTime(1000); arrive(h, 1)
    h.procTime(5000); arrive(h, 2) // the timer at 5000 fired before this tuple
    h.procTime(10000)
    assertEquals[Any, Any](ids(h), List(Seq(1L), Seq(1L, 2L)))
  }

  test("a count length on a duration slide is not repeated while no tuple arrives") {
    val h = storm(Count(2), Duration(5000))
    h.procTime(1000); arrive(h, 1)
    h.procTime(2000); arrive(h, 2)
    h.procTime(3000); arrive(h, 3)
    h.procTime(12000)
    assertEquals[Any, Any](windows(h), List((Long.MinValue, 5000L, Seq(2L, 3L))))
    h.procTime(13000); arrive(h, 4)
    h.procTime(40000)
    assertEquals[Any, Any](windows(h), List((Long.MinValue, 15000L, Seq(3L, 4L))))
  }

  test("a duration length on a count slide expires idle tuples on time") {
    val h = storm(Duration(5000), Count(2))
    h.procTime(1000); arrive(h, 1)
    h.procTime(2000); arrive(h, 2)
    assertEquals[Any, Any](windows(h), List((-3000L, 2000L, Seq(1L, 2L))))
    h.procTime(8000); arrive(h, 3)
    h.procTime(9000); arrive(h, 4)
    assertEquals[Any, Any](windows(h), List((4000L, 9000L, Seq(3L, 4L))))
    h.procTime(30000)
    assertEquals(h.stateEntries, 0)
    assertEquals(h.take(), Nil)
  }

  test("keys count their own tuples") {
    val h = storm(Count(2), Count(2))
    h.add("a", 1, 0).add("b", 2, 0).add("a", 3, 0)
    assertEquals[Any, Any](h.take().map(o => (o.key, o.value)), List(("a", Seq(1L, 3L))))
  }
}
