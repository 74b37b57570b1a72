package sparkwin.core.time

import org.scalacheck.{Gen, Prop}

/** Channel watermarks of a stream read in batches: a generator per channel, idleness measured
  * from the batches' times, and the valve; copies that skip batches without data agree with
  * copies that saw every batch.
  */
class ChannelWatermarksSuite extends munit.ScalaCheckSuite {
  private val bounded = WatermarkStrategy.forBoundedOutOfOrderness(4)
  private val idle = bounded.copy(idleTimeout = Some(1000))

  private def bytes(c: ChannelWatermarks): Seq[Byte] = {
    val out = new java.io.ByteArrayOutputStream()
    c.write(new java.io.DataOutputStream(out))
    out.toByteArray.toSeq
  }

  test("the watermark is the slowest channel's: largest time seen, less the bound and one") {
    val c = ChannelWatermarks(bounded)
    assertEquals(c.watermark, Long.MinValue)
    assertEquals(c.boundary(100, Seq("p0" -> 50L, "p1" -> 30L)), 25L)
    assertEquals(c.boundary(200, Seq("p0" -> 90L)), 25L) // p1 lags
    assertEquals(c.boundary(300, Seq("p1" -> 70L)), 65L)
    assertEquals(c.channels, Seq(("p0", 85L, false), ("p1", 65L, false)))
  }

  test("a channel with no data for the idle timeout stops holding the others back") {
    val c = ChannelWatermarks(idle)
    c.boundary(0, Seq("p0" -> 10L, "p1" -> 10L))
    assertEquals(c.boundary(999, Seq("p0" -> 500L)), 5L) // p1 quiet for 999 ms: still active
    assertEquals(c.nextIdleDeadline, 1000L)
    assertEquals(c.boundary(1000, Nil), 495L) // p1 idle at 1000: p0 alone
    assert(c.channels.exists { case (id, _, isIdle) => id == "p1" && isIdle })
    // p1 comes back behind the watermark: its data does not pull it back, nor does p1 hold it.
    assertEquals(c.boundary(1100, Seq("p1" -> 20L, "p0" -> 700L)), 695L)
  }

  test("a channel's first data joins like a channel back from idleness: only once caught up") {
    val c = ChannelWatermarks(bounded)
    assertEquals(c.boundary(0, Seq("p0" -> 100L)), 95L) // an unseen channel holds nothing back
    assertEquals(c.boundary(10, Seq("p9" -> 40L)), 95L) // a new partition, far behind
    assertEquals(c.boundary(20, Seq("p0" -> 200L)), 195L) // p9 not aligned: p0 goes on
    assertEquals(c.boundary(30, Seq("p9" -> 300L)), 195L) // caught up: aligned again
    assertEquals(c.boundary(40, Seq("p0" -> 400L)), 295L) // and now it holds p0 back
  }

  test("with holdNew a channel holds the output from its first data, even behind it") {
    val c = ChannelWatermarks(idle, holdNew = true)
    assertEquals(c.boundary(0, Seq("p0" -> 100L)), 95L)
    assertEquals(c.boundary(10, Seq("p9" -> 40L)), 95L) // never moves back...
    assertEquals(c.boundary(20, Seq("p0" -> 200L)), 95L) // ...and p9 holds p0 back at once
    assertEquals(c.boundary(30, Seq("p9" -> 150L)), 145L)
    // Back from idleness it joins as any channel does: only once caught up.
    assertEquals(c.boundary(1030, Seq("p0" -> 2000L)), 1995L) // p9 idle at 1030
    assertEquals(c.boundary(1040, Seq("p9" -> 160L, "p0" -> 2100L)), 2095L)
    // Saved and read back, a known channel is not new again.
    val out = new java.io.ByteArrayOutputStream()
    c.write(new java.io.DataOutputStream(out))
    val in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(out.toByteArray))
    val back = ChannelWatermarks.read(idle, in, holdNew = true)
    assertEquals(back.boundary(1050, Seq("p9" -> 170L, "p0" -> 2200L)), 2195L)
  }

  test("when every channel has gone idle the watermark flushes to the furthest channel") {
    val c = ChannelWatermarks(idle)
    c.boundary(0, Seq("p0" -> 100L, "p1" -> 50L))
    assertEquals(c.watermark, 45L)
    assertEquals(c.boundary(5000, Nil), 95L) // both idle at 1000: windows up to p0's close
    assert(c.isIdle)
  }

  test("saved and read back, the watermarks go on as before") {
    val c = ChannelWatermarks(idle)
    c.boundary(0, Seq("b" -> 10L, "a" -> 20L))
    c.boundary(700, Seq("a" -> 40L))
    val saved = new java.io.ByteArrayOutputStream()
    c.write(new java.io.DataOutputStream(saved))
    val back = ChannelWatermarks.read(
      idle,
      new java.io.DataInputStream(new java.io.ByteArrayInputStream(saved.toByteArray))
    )
    assertEquals(bytes(back), bytes(c))
    assertEquals(back.boundary(1500, Seq("a" -> 90L)), c.boundary(1500, Seq("a" -> 90L)))
    assertEquals(bytes(back), bytes(c))
  }

  test("declared channels hold the output back from the first data until they deliver") {
    val declared = ChannelWatermarks(bounded, Seq("p0", "p1", "p2"))
    val seen = ChannelWatermarks(bounded)
    assertEquals(declared.boundary(0, Nil), Long.MinValue)
    assertEquals(declared.channels, Nil) // nothing joins before a batch with data
    // p0 is read first: alone it would move the output, but p1 and p2 have not delivered.
    assertEquals(seen.boundary(100, Seq("p0" -> 1000L)), 995L)
    assertEquals(declared.boundary(100, Seq("p0" -> 1000L)), Long.MinValue)
    assertEquals(declared.channels.map(_._1), Seq("p0", "p1", "p2"))
    assert(declared.channels.forall(!_._3))
    // p1's backfill comes next, behind p0: late for the undeclared copy, not for this one.
    assertEquals(seen.boundary(200, Seq("p1" -> 500L)), 995L)
    assertEquals(declared.boundary(200, Seq("p1" -> 500L)), Long.MinValue)
    assertEquals(declared.boundary(300, Seq("p2" -> 700L)), 495L)
    assertEquals(declared.boundary(400, Seq("p1" -> 2000L)), 695L)
  }

  test("a declared channel that never delivers goes idle the timeout after the first data") {
    val c = ChannelWatermarks(idle, Seq("p0", "p1"))
    c.boundary(0, Nil)
    c.boundary(5000, Seq("p0" -> 100L)) // the stream's first data: p1's clock starts here
    assertEquals(c.watermark, Long.MinValue)
    assertEquals(c.nextIdleDeadline, 6000L)
    assertEquals(c.boundary(5999, Nil), Long.MinValue)
    assertEquals(c.boundary(6000, Nil), 95L) // both idle: p0 alone, flushed
    assertEquals(c.channels, Seq(("p0", 95L, true), ("p1", Long.MinValue, true)))
    // p1 finally delivers behind the output: it rejoins once caught up, as any channel does.
    assertEquals(c.boundary(6100, Seq("p1" -> 50L)), 95L)
  }

  test("a channel declared after the output moved joins only once it has caught up") {
    val c = ChannelWatermarks(bounded, Seq("p0"))
    c.boundary(0, Seq("p0" -> 100L))
    val saved = new java.io.ByteArrayOutputStream()
    c.write(new java.io.DataOutputStream(saved))
    // Restarted with a partition more: p1 joins at the next data but cannot pull the output back.
    val more = ChannelWatermarks.read(
      bounded,
      new java.io.DataInputStream(new java.io.ByteArrayInputStream(saved.toByteArray)),
      Seq("p0", "p1")
    )
    assertEquals(more.boundary(10, Seq("p0" -> 200L)), 195L)
    assertEquals(more.channels, Seq(("p0", 195L, false), ("p1", Long.MinValue, false)))
    assertEquals(more.boundary(20, Seq("p1" -> 300L)), 195L) // caught up: aligned
    assertEquals(more.boundary(30, Seq("p0" -> 400L)), 295L) // and now it holds p0 back
  }

  test("with holdNew the channels a batch announces hold the output back before they deliver") {
    val announced = Seq("0", "1", "2")
    val c = ChannelWatermarks(idle, holdNew = true)
    assertEquals(c.boundary(0, Nil, announced), Long.MinValue)
    assertEquals(c.channels, Nil) // nothing joins before a batch with data
    // Partition 0's task delivers first: alone it would move the output past 1 and 2's rows.
    assertEquals(c.boundary(10, Seq("0" -> 1000L), announced), Long.MinValue)
    assertEquals(c.channels.map(_._1), Seq("0", "1", "2"))
    assertEquals(c.boundary(20, Seq("2" -> 700L), announced), Long.MinValue)
    assertEquals(c.boundary(500, Seq("0" -> 1200L), announced), Long.MinValue)
    // Partition 1 never delivers: idleness is the way out, the timeout after its announcement.
    assertEquals(c.nextIdleDeadline, 1010L)
    assertEquals(c.boundary(1009, Nil, announced), Long.MinValue)
    assertEquals(c.boundary(1010, Nil, announced), 695L)
    assertEquals(c.channels.map(_._3), Seq(false, true, false))
  }

  test("with holdNew a partition announced after the output moved holds it until it delivers") {
    val c = ChannelWatermarks(idle, holdNew = true)
    c.boundary(0, Seq("0" -> 100L), Seq("0"))
    val saved = new java.io.ByteArrayOutputStream()
    c.write(new java.io.DataOutputStream(saved))
    // A restart (or a later batch) reads a partition more: it holds the output from its
    // announcement, behind it, until it catches up or goes idle.
    val more = ChannelWatermarks.read(
      idle,
      new java.io.DataInputStream(new java.io.ByteArrayInputStream(saved.toByteArray)),
      holdNew = true
    )
    assertEquals(more.boundary(10, Seq("0" -> 200L), Seq("0", "1")), 95L)
    assertEquals(more.channels, Seq(("0", 195L, false), ("1", Long.MinValue, false)))
    assertEquals(more.boundary(20, Seq("1" -> 150L), Seq("0", "1")), 145L)
    assertEquals(more.boundary(30, Seq("0" -> 300L, "1" -> 400L), Seq("0", "1")), 295L)
  }

  test("a channel declared twice is refused") {
    val e = intercept[IllegalArgumentException](ChannelWatermarks(bounded, Seq("1", "2", "1")))
    assert(e.getMessage.contains("channels declared twice: 1"), e.getMessage)
  }

  private val batches = for {
    n <- Gen.choose(1, 30)
    steps <- Gen.listOfN(
      n,
      for {
        gap <- Gen.choose(0L, 900L)
        data <- Gen.frequency(
          2 -> Gen.const(Seq.empty[(String, Long)]),
          5 -> Gen.listOf(Gen.zip(Gen.oneOf("p0", "p1", "p2", "p3"), Gen.choose(-50L, 3000L)))
        )
      } yield (gap, data)
    )
  } yield steps

  private val declarations = Gen.someOf("p1", "p3", "p7").map(_.toSeq)

  property("a copy that skips batches without data computes what a copy that saw them does") {
    Prop.forAll(batches, declarations, Gen.long, Gen.oneOf(false, true)) { (steps, named, seed, holdNew) =>
      // Channels the plan declares, or (holdNew) source partitions each batch announces.
      val (declared, announced) = if (holdNew) (Nil, named) else (named, Nil)
      val rnd = new scala.util.Random(seed)
      val every = ChannelWatermarks(idle, declared, holdNew)
      val some = ChannelWatermarks(idle, declared, holdNew)
      var time = 0L
      steps.foreach { case (gap, data) =>
        time += gap
        every.boundary(time, data, announced)
        if (data.nonEmpty || rnd.nextBoolean()) {
          some.boundary(time, data, announced)
          assertEquals(some.watermark, every.watermark)
          assertEquals(bytes(some), bytes(every))
        }
      }
      true
    }
  }

  property("without idleness no announced partition's rows can be late for another's progress") {
    // Whatever order the partitions' summaries reach a group in, the output never passes a
    // partition's own watermark: a row is late only behind its own partition's earlier rows.
    val partitions = Seq("p0", "p1", "p2", "p3")
    Prop.forAll(batches) { steps =>
      val c = ChannelWatermarks(bounded, holdNew = true)
      val seen = scala.collection.mutable.Map.empty[String, Long]
      var time = 0L
      steps.foreach { case (gap, data) =>
        time += gap
        c.boundary(time, data, partitions)
        data.foreach { case (id, max) => seen(id) = math.max(seen.getOrElse(id, Long.MinValue), max) }
        val slowest = partitions.map(id => seen.get(id).fold(Long.MinValue)(_ - 5)).min
        assert(c.watermark <= slowest, s"${c.watermark} past the slowest partition's $slowest")
      }
      true
    }
  }

  property("unchanged since the last write or read means the same bytes") {
    Prop.forAll(batches, declarations, Gen.oneOf(bounded, idle), Gen.oneOf(false, true)) {
      (steps, declared, strategy, holdNew) =>
        var c = ChannelWatermarks(strategy, declared, holdNew)
        var written = bytes(c)
        var time = 0L
        steps.foreach { case (gap, data) =>
          time += gap
          c.boundary(time, data, if (holdNew) declared else Nil)
          if (!c.isChanged) assertEquals(bytes(c), written)
          written = bytes(c)
          assert(!c.isChanged) // a write makes them current
          if (data.isEmpty) { // read back, they are current too
            val in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(written.toArray))
            c = ChannelWatermarks.read(strategy, in, declared, holdNew)
            assert(!c.isChanged)
          }
        }
        true
    }
  }

  test("a boundary without data changes nothing unless a channel goes idle") {
    val c = ChannelWatermarks(idle)
    c.boundary(0, Seq("p0" -> 10L))
    bytes(c)
    c.boundary(500, Nil)
    assert(!c.isChanged) // p0 quiet for 500 ms of 1000
    c.boundary(1000, Nil)
    assert(c.isChanged) // p0 idle
  }
}
