package sparkwin.runtime.spark.task

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode

import sparkwin.core.window.WindowGrid
import sparkwin.plan.PlanDecoder

/** Which moves of a real-time partition's channels close a window: those summaries leave at once. */
class ClosingsSuite extends munit.FunSuite {

  test("a channel's closed end: the last window whose end less one its watermark reached") {
    // Tumbling 1 s, bound 2 s (delay 2001): [0, 1000) fires at watermark 999, largest time 3000.
    val tumbling = new Closings(WindowGrid(1000, 1000, 0), 2001)
    assertEquals(tumbling.closedEnd(2999), 0L)
    assertEquals(tumbling.closedEnd(3000), 1000L)
    assertEquals(tumbling.closedEnd(3999), 1000L)
    assertEquals(tumbling.closedEnd(4000), 2000L)
    // Sliding 10 s every 1 s, offset 300, delay 1: [1300, 11300) fires at watermark 11299.
    val sliding = new Closings(WindowGrid(10000, 1000, 300), 1)
    assertEquals(sliding.closedEnd(11299), 10300L)
    assertEquals(sliding.closedEnd(11300), 11300L)
  }

  test("one channel: a move across a window's end is urgent, a move within a slide is not") {
    val c = new Closings(WindowGrid(1000, 1000, 0), 1)
    assert(!c.moved(null, 500), "a new channel waits for the interval")
    assert(!c.moved(500L, 998))
    assert(c.moved(998L, 1000)) // watermark 999: [0, 1000) closes
    assert(!c.moved(1000L, 1500))
    assert(c.moved(1500L, 5000)) // several windows at once
  }

  test("several channels: urgent only when the slowest one crosses") {
    val c = new Closings(WindowGrid(1000, 1000, 0), 1)
    c.moved(null, 100) // channel a
    c.moved(null, 200) // channel b
    assert(!c.moved(100L, 1200), "a crossed, b still holds the partition back")
    assert(c.moved(200L, 1100), "b crossed: the partition's watermark closes [0, 1000)")
    assert(!c.moved(1100L, 2500), "b crossed again, a holds")
    assert(c.moved(1200L, 2100))
    c.moved(null, 50) // a new channel c, behind every window
    assert(!c.moved(2500L, 3500), "c holds now")
    assert(c.moved(50L, 4000))
  }

  test("only event-time tumbling and sliding windows with a watermark close on a known grid") {
    val mapper = new ObjectMapper()
    val base = mapper.readTree(LoopFixtures.tumblingPlanJson).asInstanceOf[ObjectNode]
    def planWith(edit: ObjectNode => Unit) = {
      val node = base.deepCopy()
      edit(node)
      PlanDecoder.decode(mapper.writeValueAsString(node))
    }
    val tumbling = Closings.of(planWith(_ => ()))
    assertEquals(tumbling.map(_.closedEnd(9)), Some(0L))
    assertEquals(tumbling.map(_.closedEnd(10)), Some(10L)) // bound 0: watermark 9 closes [0, 10)
    val session = mapper.createObjectNode().put("kind", "session").put("gapMs", 10).put("eventTime", true)
    assertEquals(Closings.of(planWith(n => { n.replace("assigner", session); () })), None)
    val processing = base.get("assigner").deepCopy().asInstanceOf[ObjectNode].put("eventTime", false)
    assertEquals(Closings.of(planWith(n => { n.replace("assigner", processing); () })), None)
    assertEquals(Closings.of(planWith(_.putNull("watermark"))), None)
  }
}
