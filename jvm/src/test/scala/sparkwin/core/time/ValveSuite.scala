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

  test("when the last active channel goes idle holding the output back, the valve flushes to the maximum") {
    val v = new StatusWatermarkValve(2)
    v.inputWatermark(10, 0); v.inputWatermark(3, 1)
    assertEquals(v.markIdle(0), None) // channel 1 still holds the output at 3
    assertEquals(v.markIdle(1), Some(10L)) // every channel quiet: windows up to 10 may close
    assert(v.isIdle)
    assertEquals(v.currentWatermark, 10L)
    v.markActive(0)
    assert(!v.isIdle)
    assertEquals(v.inputWatermark(11, 0), Some(11L))
  }

  test("the last channel going idle without holding the output back flushes nothing") {
    val v = new StatusWatermarkValve(2)
    v.inputWatermark(10, 0); v.inputWatermark(3, 1)
    assertEquals(v.markIdle(1), Some(10L)) // channel 0 alone: 10
    v.inputWatermark(12, 0) // output 12; channel 1 (idle) stays at 3
    assertEquals(v.markIdle(0), None) // it held the output (12): the maximum is 12 already
    assert(v.isIdle)
    assertEquals(v.currentWatermark, 12L)
  }

  test("added channels start idle and are saved and restored with the rest") {
    val v = new StatusWatermarkValve(0)
    assert(v.isIdle)
    val a = v.addChannel()
    v.markActive(a)
    assertEquals(v.inputWatermark(5, a), Some(5L))
    val b = v.addChannel()
    assert(v.isChannelIdle(b) && !v.isChannelAligned(b))
    assertEquals(v.inputWatermark(20, a), Some(20L)) // b does not hold anything back
    v.markActive(b)
    assertEquals(v.inputWatermark(7, b), None) // behind the output: not aligned
    val bytes = new java.io.ByteArrayOutputStream()
    v.write(new java.io.DataOutputStream(bytes))
    val back = StatusWatermarkValve.read(
      new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray))
    )
    assertEquals(back.numChannels, 2)
    assertEquals(
      (back.currentWatermark, back.isChannelAligned(b), back.channelWatermark(b)),
      (20L, false, 7L)
    )
    assertEquals(back.inputWatermark(25, b), None)
    assertEquals(back.inputWatermark(30, a), Some(25L))
  }

  test("channel indexes are checked") {
    intercept[IllegalArgumentException](new StatusWatermarkValve(1).inputWatermark(1, 1))
  }
}
