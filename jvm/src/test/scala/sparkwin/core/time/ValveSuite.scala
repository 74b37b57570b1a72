package sparkwin.core.time

class ValveSuite extends munit.FunSuite {
  test("output is the minimum over channels and only grows") {
    val v = new StatusWatermarkValve(2)
    assertEquals(v.inputWatermark(10, 0), None) // channel 1 still at -inf
    assertEquals(v.inputWatermark(5, 1), Some(5L))
    assertEquals(v.inputWatermark(20, 1), Some(10L))
    assertEquals(v.inputWatermark(8, 0), None) // channels never go backwards
    assertEquals(v.currentWatermark, 10L)
  }

  test("an idle channel stops holding the output back") {
    val v = new StatusWatermarkValve(2)
    v.inputWatermark(10, 0); v.inputWatermark(3, 1)
    assertEquals(v.currentWatermark, 3L)
    assertEquals(v.markIdle(1), Some(10L))
    assertEquals(v.inputWatermark(15, 0), Some(15L))
  }

  test("watermarks on an idle channel are ignored") {
    val v = new StatusWatermarkValve(2)
    v.inputWatermark(10, 0); v.inputWatermark(10, 1)
    v.markIdle(1)
    assertEquals(v.inputWatermark(99, 1), None)
    assertEquals(v.channelWatermark(1), 10L)
  }

  test("a channel rejoining behind the output is not aligned until it catches up") {
    val v = new StatusWatermarkValve(2)
    v.inputWatermark(5, 0); v.inputWatermark(5, 1)
    v.markIdle(1)
    v.inputWatermark(20, 0)
    assertEquals(v.currentWatermark, 20L)
    v.markActive(1)
    assert(!v.isChannelAligned(1))
    assertEquals(v.inputWatermark(12, 1), None) // behind the output: does not pull it back
    assertEquals(v.currentWatermark, 20L)
    assertEquals(v.inputWatermark(25, 0), Some(25L)) // channel 1 still not aligned
    assertEquals(v.inputWatermark(30, 1), None) // caught up: aligned, and now it holds back
    assert(v.isChannelAligned(1))
    assertEquals(v.inputWatermark(40, 0), Some(30L))
  }

  test("when every channel is idle the valve is idle and emits nothing") {
    val v = new StatusWatermarkValve(2)
    v.inputWatermark(10, 0); v.inputWatermark(3, 1)
    assertEquals(v.markIdle(0), None)
    assertEquals(v.markIdle(1), None)
    assert(v.isIdle)
    assertEquals(v.currentWatermark, 3L)
    v.markActive(0)
    assert(!v.isIdle)
    assertEquals(v.inputWatermark(11, 0), Some(11L))
  }

  test("channel indexes are checked") {
    intercept[IllegalArgumentException](new StatusWatermarkValve(1).inputWatermark(1, 1))
  }
}
