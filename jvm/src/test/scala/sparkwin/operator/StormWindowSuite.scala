package sparkwin.operator

import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._

import sparkwin.TestSupport._
import sparkwin.core.window.{StormSize, StormWindow, StormWindows}
import sparkwin.runtime.TimeMove

/** Storm's windowing: the documentation's example and the vectors of Storm's own tests. */
class StormWindowSuite extends munit.FunSuite {
  import StormSize.{Count, Duration}

  private def storm(length: StormSize, slide: StormSize, lag: Long) =
    harness(StormWindows(length, slide, lag), aggregates = Seq(collectValues))

  /** Each tuple's value is its id; results as (start, end, ids). */
  private def windows(h: Harness): List[(Long, Long, Any)] =
    h.take().map(o => o.window match { case StormWindow(s, e) => (s, e, o.value); case w => fail(s"$w") })

  private def ids(h: Harness): List[Any] = h.take().map(_.value)

  test("Storm's documented example: window 20s, slide 10s, lag 5s") {
    val six = 6 * 3600 * 1000L // 6:00:00
    def at(s: Long) = six + s * 1000
    val h = storm(Duration(20000), Duration(10000), 5000)
    Seq(3L, 5L, 7L, 18L, 26L, 36L).zipWithIndex.foreach { case (s, i) => h.add("k", i + 1L, at(s)) }
    h.watermark(at(31)) // max timestamp 6:00:36 minus the 5s lag
    assertEquals[Any, Any](
      windows(h),
      List(
        (at(-10), at(10), Seq(1L, 2L, 3L)),
        (at(0), at(20), Seq(1L, 2L, 3L, 4L)),
        (at(10), at(30), Seq(4L, 5L))
      )
    )
    // e6 (6:00:36) waits: its first window ends at 6:00:40, after the watermark.
    h.watermark(at(40))
    assertEquals[Any, Any](windows(h), List((at(20), at(40), Seq(5L, 6L))))
  }

  test("time length, time slide: windows advance by the slide and skip empty stretches") {
    val h = storm(Duration(20), Duration(10), Int.MaxValue)
    h.add("k", 1, 603).add("k", 2, 605).add("k", 3, 607).watermark(609)
    assertEquals(ids(h), Nil)
    h.add("k", 4, 618).add("k", 5, 626).add("k", 6, 636).watermark(631)
    assertEquals[Any, Any](ids(h), List(Seq(1L, 2L, 3L), Seq(1L, 2L, 3L, 4L), Seq(4L, 5L)))
    h.add("k", 7, 825).add("k", 8, 826).add("k", 9, 827).add("k", 10, 839).watermark(834)
    assertEquals[Any, Any](
      windows(h),
      List((620L, 640L, Seq(5L, 6L)), (630L, 650L, Seq(6L)), (810L, 830L, Seq(7L, 8L, 9L)))
    )
  }

  test("with a lag, a tuple past end + lag stops the scan; one within it waits") {
    val h = storm(Duration(20), Duration(10), 5)
    Seq(603L, 605L, 607L, 618L, 626L, 632L, 629L, 636L).zipWithIndex.foreach { case (t, i) =>
      h.add("k", i + 1L, t)
    }
    h.watermark(631)
    assertEquals[Any, Any](ids(h), List(Seq(1L, 2L, 3L), Seq(1L, 2L, 3L, 4L), Seq(4L, 5L, 7L)))
  }

  test("count length, time slide: the last n tuples at each window end") {
    val h = storm(Count(3), Duration(10), 0)
    Seq(603L, 605L, 607L, 618L, 626L, 636L).zipWithIndex.foreach { case (t, i) => h.add("k", i + 1L, t) }
    h.watermark(631)
    assertEquals[Any, Any](ids(h), List(Seq(1L, 2L, 3L), Seq(2L, 3L, 4L), Seq(3L, 4L, 5L)))
    Seq(665L, 666L, 667L, 679L).zipWithIndex.foreach { case (t, i) => h.add("k", i + 7L, t) }
    h.watermark(674)
    val out = windows(h)
    assertEquals[Any, Any](
      out.map(_._3),
      List(Seq(4L, 5L, 6L), Seq(4L, 5L, 6L), Seq(4L, 5L, 6L), Seq(7L, 8L, 9L))
    )
    assertEquals(out.map(_._2), List(640L, 650L, 660L, 670L))
    assert(out.forall(_._1 == Long.MinValue), "count-length windows have no start")
  }

  test("time length, count slide: a window every n tuples at or before the watermark") {
    val h = storm(Duration(20), Count(3), 0)
    Seq(603L, 605L, 607L, 618L, 625L, 626L, 629L, 636L).zipWithIndex.foreach { case (t, i) =>
      h.add("k", i + 1L, t)
    }
    h.watermark(631)
    assertEquals[Any, Any](windows(h), List((587L, 607L, Seq(1L, 2L, 3L)), (606L, 626L, Seq(3L, 4L, 5L, 6L))))
    Seq(665L, 666L, 667L, 669L, 679L).zipWithIndex.foreach { case (t, i) => h.add("k", i + 9L, t) }
    h.watermark(674)
    assertEquals[Any, Any](ids(h), List(Seq(9L), Seq(9L, 10L, 11L, 12L)))
  }

  test("count length, count slide: tumbling and sliding") {
    val ts = Seq(10L, 10L, 11L, 12L, 12L, 12L, 12L, 13L, 14L, 15L)
    val tumbling = storm(Count(2), Count(2), 0)
    ts.zipWithIndex.foreach { case (t, i) => tumbling.add("k", i + 1L, t) }
    tumbling.watermark(20)
    assertEquals[Any, Any](
      ids(tumbling),
      List(Seq(1L, 2L), Seq(3L, 4L), Seq(5L, 6L), Seq(7L, 8L), Seq(9L, 10L))
    )
    val sliding = storm(Count(5), Count(2), 0)
    ts.zipWithIndex.foreach { case (t, i) => sliding.add("k", i + 1L, t) }
    sliding.watermark(20)
    assertEquals[Any, Any](
      ids(sliding),
      List(
        Seq(1L, 2L),
        Seq(1L, 2L, 3L, 4L),
        Seq(2L, 3L, 4L, 5L, 6L),
        Seq(4L, 5L, 6L, 7L, 8L),
        Seq(6L, 7L, 8L, 9L, 10L)
      )
    )
  }

  test("a tuple older than the watermark is late; one equal to it is not") {
    val h = storm(Duration(20), Duration(10), 0)
    h.add("k", 1, 100).watermark(105)
    h.add("k", 2, 104).add("k", 3, 105)
    assertEquals(h.lateValues, List(2L))
    h.watermark(200)
    assertEquals[Any, Any](ids(h), List(Seq(1L), Seq(1L, 3L), Seq(3L)))
  }

  test("keys are windowed independently and state drains once windows pass") {
    val h = storm(Duration(20), Duration(10), 0)
    h.add("a", 1, 5).add("b", 2, 7).add("a", 3, 15)
    h.watermark(1000)
    val out = h.take().map(o => (o.key, o.window.asInstanceOf[StormWindow].end, o.value)).toSet
    assertEquals[Any, Any](
      out,
      Set(
        ("a", 10L, Seq(1L)),
        ("a", 20L, Seq(1L, 3L)),
        ("a", 30L, Seq(3L)),
        ("b", 10L, Seq(2L)),
        ("b", 20L, Seq(2L))
      )
    )
    assertEquals(h.stateEntries, 0)
  }

  test("end of input fires every remaining window and terminates") {
    for (slide <- Seq[StormSize](Duration(10), Count(2))) {
      val h = storm(Duration(20), slide, 0)
      h.add("k", 1, 5).add("k", 2, 17).add("k", 3, 33)
      h.runner.moveClocks(TimeMove.EndOfInput)
      assert(h.take().nonEmpty, s"slide $slide")
    }
    val t = storm(Duration(20), Duration(10), 0)
    t.add("k", 1, 5).add("k", 2, 17).add("k", 3, 33)
    t.runner.moveClocks(TimeMove.EndOfInput)
    assertEquals[Any, Any](
      windows(t).map(w => (w._2, w._3)),
      List((10L, Seq(1L)), (20L, Seq(1L, 2L)), (30L, Seq(2L)), (40L, Seq(3L)), (50L, Seq(3L)))
    )
    assertEquals(t.stateEntries, 0)
  }
}
