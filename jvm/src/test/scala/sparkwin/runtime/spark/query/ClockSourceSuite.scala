package sparkwin.runtime.spark.query

import ClockSource.{Position, Schedule}
import sparkwin.runtime.spark.task.{Wake, WakeReports}

/** The clock's schedule and positions: it ticks when the earliest reported wake-up has come,
  * learns a whole query's next wake-up only from a tick (which every key group hears), and its
  * offsets read back as written.
  */
class ClockSourceSuite extends munit.FunSuite {
  test("a query ticks at once until its groups have reported") {
    assertEquals(new Schedule().next, Long.MinValue)
  }

  test("a tick's reports replace the schedule; other batches' only bring it forward") {
    val s = new Schedule
    s.ticked()
    assertEquals(s.next, Long.MaxValue) // nothing more until the tick's batch reports
    s.reported(Some(Wake(500, complete = true)))
    assertEquals(s.next, 500L)
    s.reported(Some(Wake(900, complete = false))) // a data batch: some groups, later
    assertEquals(s.next, 500L)
    s.reported(Some(Wake(300, complete = false))) // a data batch: a group needs earlier
    assertEquals(s.next, 300L)
    s.reported(None) // a batch in which no group ran
    assertEquals(s.next, 300L)
    s.ticked()
    s.reported(Some(Wake(Long.MaxValue, complete = true))) // nothing waits: quiet
    assertEquals(s.next, Long.MaxValue)
  }

  test("wake reports merge to the earliest, and a tick anywhere makes them complete") {
    val r = new WakeReports
    r.add(("q1", Wake(700, complete = false)))
    r.add(("q1", Wake(400, complete = true)))
    r.add(("q2", Wake(100, complete = false)))
    val other = new WakeReports
    other.add(("q1", Wake(600, complete = false)))
    r.merge(other)
    assertEquals(r.take("q1"), Some(Wake(400, complete = true)))
    assertEquals(r.take("q1"), None) // taken: the next batch starts afresh
    assertEquals(r.take("q2"), Some(Wake(100, complete = false)))
    assert(r.isZero)
  }

  test("a report outside a streaming query's task goes nowhere") {
    val r = new WakeReports
    r.report(5, tick = true)
    assert(r.isZero)
  }

  test("the driver forgets a pipeline's reports once nothing of the pipeline holds them") {
    var kept = new WakeReports
    val keptToken = WakeReports.remember(kept)
    val goneToken = WakeReports.remember(new WakeReports)
    var tries = 0
    while (WakeReports.forToken(goneToken).isDefined && tries < 100) {
      System.gc(); Thread.sleep(10); tries += 1
    }
    assertEquals(WakeReports.forToken(goneToken), None)
    assert(WakeReports.forToken(keptToken).exists(_ eq kept)) // its plan still holds it
    WakeReports.remember(new WakeReports) // drops the forgotten entry
    assert(WakeReports.registered <= 2, WakeReports.registered)
    kept = null
  }

  test("positions read back as written; anything else is refused") {
    val p = Position(12, 1795657072668L)
    assertEquals(Position.parse(p.json()), p)
    assertEquals(Position.parse(Position(0, Long.MinValue).json()), Position(0, Long.MinValue))
    val e = intercept[IllegalStateException](Position.parse("""{"logOffset":3}"""))
    assert(e.getMessage.contains("not a sparkwin clock offset"))
  }
}
