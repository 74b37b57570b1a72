package sparkwin.core.time

import scala.collection.mutable.ArrayBuffer

import sparkwin.core.ArrayRecord

/** The watermarks of a stream read element by element: what the live driver and replay's
  * watermark pass both run.
  */
class SourceWatermarksSuite extends munit.FunSuite {

  private val element = new ArrayRecord(Array[Any](null))

  /** Runs every tick up to `limit`, as the driver does between elements. */
  private def ticksUpTo(w: SourceWatermarks, limit: Long): Seq[Long] = {
    val visited = ArrayBuffer.empty[Long]
    var t = w.nextTick(limit)
    while (t != Long.MaxValue) { w.tick(t); visited += t; t = w.nextTick(limit) }
    visited.toSeq
  }

  test("the minimum of the channels' generated watermarks, emitted at the first tick after new data") {
    val out = ArrayBuffer.empty[Long]
    val strategy = WatermarkStrategy.forBoundedOutOfOrderness(0).copy(interval = 100L)
    val w = new SourceWatermarks(Some(strategy), 2, 0L, out += _)
    w.onElement(0, element, 50L, 10L)
    w.onElement(1, element, 30L, 20L)
    assertEquals(out.toSeq, Nil) // periodic: nothing before a tick
    assertEquals(ticksUpTo(w, 1000L), Seq(100L)) // later ticks could change nothing
    assertEquals(out.toSeq, Seq(29L))
    w.onElement(1, element, 80L, 150L)
    assertEquals(ticksUpTo(w, 1000L), Seq(200L))
    assertEquals((out.toSeq, w.current), (Seq(29L, 49L), 49L))
  }

  test("a channel that goes quiet for the idle timeout goes idle at a tick, and releases the rest") {
    val out = ArrayBuffer.empty[Long]
    val strategy =
      WatermarkStrategy.forBoundedOutOfOrderness(0).copy(interval = 100L, idleTimeout = Some(300L))
    val w = new SourceWatermarks(Some(strategy), 2, 0L, out += _)
    w.onElement(0, element, 500L, 10L)
    w.onElement(1, element, 30L, 20L)
    assertEquals(ticksUpTo(w, 250L), Seq(100L))
    assertEquals(out.toSeq, Seq(29L))
    w.onElement(0, element, 600L, 250L)
    // Channel 1's deadline (20 + 300) falls between ticks: it goes idle at 400, channel 0 not.
    assertEquals(ticksUpTo(w, 450L), Seq(300L, 400L))
    assertEquals(out.last, 599L)
    assert(w.valve.isChannelIdle(1) && !w.valve.isChannelIdle(0))
  }

  test("without a strategy the channels' watermarks come from outside, and nothing ticks") {
    val out = ArrayBuffer.empty[Long]
    val w = new SourceWatermarks(None, 2, 0L, out += _)
    w.onElement(0, element, 500L, 10L)
    assertEquals(w.nextTick(Long.MaxValue - 1), Long.MaxValue)
    w.inputWatermark(40L, 0)
    w.inputWatermark(20L, 1)
    w.markIdle(1)
    assertEquals(out.toSeq, Seq(20L, 40L))
  }
}
