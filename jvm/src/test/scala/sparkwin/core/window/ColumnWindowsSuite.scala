package sparkwin.core.window

import java.time.ZoneId

import sparkwin.TestSupport.rec
import sparkwin.core.{ArrayRecord, RecordError}

/** Calendar windows in a time zone, and windows computed from the row by Spark Columns. */
class ColumnWindowsSuite extends munit.FunSuite {
  private def clock(now: Long) = new WindowAssignerContext { def currentProcessingTime: Long = now }
  private val amsterdam = ZoneId.of("Europe/Amsterdam")
  private val Hour = 3600000L
  private def days(zone: ZoneId) = CalendarWindows(CalendarUnit.Day, zone, isEventTime = true)
  private def assign(a: WindowAssigner, ts: Long) = a.assignWindows(rec("k", 1, ts), ts, clock(0))

  test("a day in Amsterdam starts at local midnight: 23 hours when summer time starts, 25 when it ends") {
    // 2026-03-29 12:00 local (10:00Z): the day runs from 2026-03-28T23:00Z to 2026-03-29T22:00Z.
    assertEquals(assign(days(amsterdam), 1774778400000L), Seq(TimeWindow(1774738800000L, 1774821600000L)))
    assertEquals(1774821600000L - 1774738800000L, 23 * Hour)
    // 2026-10-25 12:00 local (11:00Z): from 2026-10-24T22:00Z to 2026-10-25T23:00Z.
    assertEquals(assign(days(amsterdam), 1792926000000L), Seq(TimeWindow(1792879200000L, 1792969200000L)))
    assertEquals(1792969200000L - 1792879200000L, 25 * Hour)
    // The window's first and last milliseconds belong to it; the next one opens the next day.
    assertEquals(assign(days(amsterdam), 1774738800000L).head, TimeWindow(1774738800000L, 1774821600000L))
    assertEquals(
      assign(days(amsterdam), 1774821600000L - 1).head.asInstanceOf[TimeWindow].end,
      1774821600000L
    )
    assertEquals(assign(days(amsterdam), 1774821600000L).head.asInstanceOf[TimeWindow].start, 1774821600000L)
  }

  test("where midnight does not exist the day starts at the first instant after the gap") {
    // Sao Paulo moved 2018-11-04 00:00 to 01:00 (-03 to -02): the day began at 03:00Z.
    val saoPaulo = days(ZoneId.of("America/Sao_Paulo"))
    assertEquals(assign(saoPaulo, 1541332800000L), Seq(TimeWindow(1541300400000L, 1541383200000L)))
    assertEquals(assign(saoPaulo, 1541300400000L - 1).head.asInstanceOf[TimeWindow].end, 1541300400000L)
  }

  test("ISO weeks from Monday, months and years in the zone") {
    val wednesday = 1796202000000L // 2026-12-02 10:00 local
    val week = CalendarWindows(CalendarUnit.Week, amsterdam, isEventTime = true)
    assertEquals(assign(week, wednesday), Seq(TimeWindow(1795993200000L, 1796598000000L)))
    val month = CalendarWindows(CalendarUnit.Month, amsterdam, isEventTime = true)
    assertEquals(assign(month, 1774778400000L), Seq(TimeWindow(1772319600000L, 1774994400000L)))
    val year = CalendarWindows(CalendarUnit.Year, amsterdam, isEventTime = true)
    assertEquals(assign(year, wednesday), Seq(TimeWindow(1767222000000L, 1798758000000L)))
    // UTC days are the epoch's aligned days.
    val utc = days(ZoneId.of("UTC"))
    for (ts <- Seq(-1L, 0L, 86399999L, 86400000L, -86400001L))
      assertEquals(
        assign(utc, ts),
        Seq(
          TimeWindow(Window.alignedStart(ts, 0, 86400000L), Window.alignedStart(ts, 0, 86400000L) + 86400000L)
        )
      )
  }

  test("in processing time the clock, not the element, picks the day") {
    val a = CalendarWindows(CalendarUnit.Day, amsterdam, isEventTime = false)
    assertEquals(
      a.assignWindows(rec("k", 1, 0L), 0L, clock(1774778400000L)),
      Seq(TimeWindow(1774738800000L, 1774821600000L))
    )
    assert(!a.isEventTime)
  }

  test("computed windows read start-end pairs of milliseconds from their column") {
    val a = ComputedWindows(0)
    def of(v: Any) = a.assignWindows(new ArrayRecord(Array[Any](v)), 3L, clock(0))
    assertEquals(of(Seq[Any](0L, 10L)), Seq(TimeWindow(0, 10)))
    assertEquals(of(List[Any](0L, 10L, 5L, 20L)), Seq(TimeWindow(0, 10), TimeWindow(5, 20)))
    assertEquals(of(Seq.empty[Any]), Seq()) // in no window: a counted drop
    for (
      (bad, why) <- Seq[(Any, String)](
        (null, "null"),
        (Seq[Any](0L, 10L, 5L), "not start-end pairs"),
        (Seq[Any](0L, null), "null"),
        (Seq[Any](10L, 10L), "empty"),
        (Seq[Any](Long.MinValue, 0L), "beyond")
      )
    ) {
      val e = intercept[RecordError](of(bad))
      assert(e.getMessage.contains(why), e.getMessage)
    }
  }
}
