package sparkwin.core.time

import scala.collection.mutable.ArrayBuffer

import sparkwin.TestSupport.rec

class GeneratorSuite extends munit.FunSuite {
  private def channel(s: WatermarkStrategy, start: Long = 0L) = {
    val valve = new StatusWatermarkValve(1)
    val out = ArrayBuffer.empty[Long]
    (new WatermarkChannel(0, s.newGenerator(start), valve, out += _), valve, out)
  }

  test("bounded out-of-orderness is max - bound - 1, emitted only when it grows") {
    val (ch, _, out) = channel(WatermarkStrategy.forBoundedOutOfOrderness(3))
    ch.onPeriodicEmit(0) // nothing seen: the initial Long.MinValue is never emitted
    ch.onEvent(rec("k", 1, 10), 10, 0); ch.onPeriodicEmit(200)
    ch.onEvent(rec("k", 1, 7), 7, 0); ch.onPeriodicEmit(400)
    ch.onEvent(rec("k", 1, 15), 15, 0); ch.onPeriodicEmit(600)
    assertEquals(out.toList, List(6L, 11L))
  }

  test("monotonous timestamps: max - 1") {
    val (ch, _, out) = channel(WatermarkStrategy.forMonotonousTimestamps())
    ch.onEvent(rec("k", 1, 100), 100, 0); ch.onPeriodicEmit(200)
    assertEquals(out.toList, List(99L))
  }

  test("punctuated: emits on marker elements only") {
    val s = WatermarkStrategy(WatermarkStrategy.Punctuated(1, 0), None, 200)
    val (ch, _, out) = channel(s)
    ch.onEvent(new sparkwin.core.ArrayRecord(Array("k", false, 10L)), 10, 0)
    ch.onPeriodicEmit(200)
    assertEquals(out.toList, Nil)
    ch.onEvent(new sparkwin.core.ArrayRecord(Array("k", true, 20L)), 20, 0)
    assertEquals(out.toList, List(19L))
  }

  test("idleness: no element for the timeout marks the channel idle; an element reactivates") {
    val s = WatermarkStrategy.forBoundedOutOfOrderness(0).copy(idleTimeout = Some(1000L))
    val (ch, valve, _) = channel(s)
    ch.onEvent(rec("k", 1, 10), 10, 100)
    ch.onPeriodicEmit(1000)
    assert(!valve.isChannelIdle(0))
    ch.onPeriodicEmit(1100) // 1100 - 100 >= 1000
    assert(valve.isChannelIdle(0))
    ch.onEvent(rec("k", 1, 20), 20, 1150)
    assert(!valve.isChannelIdle(0))
  }
}
