package sparkwin.core.timer

import sparkwin.core.window.TimeWindow

class TimerQueueSuite extends munit.FunSuite {
  test("timers are unique per key, window and timestamp; deleted timers never fire") {
    val q = new TimerQueue
    assert(q.add(Timer(10, 1, TimeWindow(0, 11))))
    assert(!q.add(Timer(10, 1, TimeWindow(0, 11))))
    q.add(Timer(10, 2, TimeWindow(0, 11)))
    q.add(Timer(5, 1, TimeWindow(0, 6)))
    q.add(Timer(7, 1, TimeWindow(0, 8)))
    assert(q.remove(Timer(7, 1, TimeWindow(0, 8))))
    val fired = Iterator.continually(q.pollDue(10)).takeWhile(_ != null).toList
    assertEquals(fired.map(t => (t.timestamp, t.keyId)), List((5L, 1L), (10L, 1L), (10L, 2L)))
    assert(q.isEmpty)
  }

  test("nothing is due before its time") {
    val q = new TimerQueue
    q.add(Timer(10, 0, TimeWindow(0, 11)))
    assertEquals(q.pollDue(9), null)
    assertEquals(q.pollDue(10).timestamp, 10L)
  }
}

/** The queue against the simplest correct model, a sorted set, under random adds, removals
  * and polls: same answers, same firing order, same size, same iteration.
  */
class TimerQueueModelSuite extends munit.ScalaCheckSuite {
  import org.scalacheck.{Gen, Prop}

  property("an instant's timers sort as the timer ordering sorts them, also past the packing bounds") {
    Prop.forAll(Gen.long) { seed =>
      val rnd = new scala.util.Random(seed)
      val n = rnd.nextInt(300)
      // Key ids: dense, repeated (several windows per key), or outside what packs into a long.
      val wide = rnd.nextInt(4) == 0
      val timers = Array.fill(n) {
        val id = if (wide && rnd.nextInt(50) == 0) rnd.nextLong() else rnd.nextInt(n + 1).toLong
        val start = rnd.nextInt(3).toLong * 10
        Timer(7L, id, TimeWindow(start, start + 10))
      }
      val expected = timers.sorted(Timer.ordering).toList
      TimerQueue.sortInstant(timers)
      assertEquals(timers.toList, expected)
    }
  }

  property("few instants: adds, removals and polls agree with a sorted set") {
    // Few instants, keys and windows, so duplicates, shared instants and re-adds are common.
    Prop.forAll(Gen.long)(seed => agreesWithModel(seed, instants = 6, keys = 5, ops = 300))
  }

  property("one or two instants, as a key's own queue mostly holds: agree with a sorted set") {
    // The one live instant is found without the map, with stale times below and above it.
    Prop.forAll(Gen.long)(seed => agreesWithModel(seed, instants = 2, keys = 3, ops = 300))
  }

  property("many instants: mixed adds, removals and polls agree with a sorted set") {
    Prop.forAll(Gen.long)(seed => agreesWithModel(seed, instants = 400, keys = 3, ops = 3000))
  }

  property("instants emptied by removals ahead of the clock are skipped and rebuilt away") {
    Prop.forAll(Gen.long) { seed =>
      val rnd = new scala.util.Random(seed)
      val q = new TimerQueue
      val model = new java.util.TreeSet[Timer](Timer.ordering)
      val added = Array.fill(600)(Timer(rnd.nextInt(1000).toLong, rnd.nextInt(3).toLong, TimeWindow(0, 10)))
      added.foreach(t => assertEquals(q.add(t), model.add(t)))
      // Most go again, in random order, with a few polls and re-adds among them.
      for (t <- rnd.shuffle(added.toList).take(550)) {
        assertEquals(q.remove(t), model.remove(t))
        if (rnd.nextInt(20) == 0) {
          val clock = rnd.nextInt(1000).toLong
          val expected = if (!model.isEmpty && model.first.timestamp <= clock) model.pollFirst() else null
          assertEquals(q.pollDue(clock), expected)
          val back = Timer(rnd.nextInt(1000).toLong, 0L, TimeWindow(0, 10))
          assertEquals(q.add(back), model.add(back))
        }
      }
      assertEquals(q.nextTime, if (model.isEmpty) Long.MaxValue else model.first.timestamp)
      var t = q.pollDue(Long.MaxValue)
      while (t != null) { assertEquals(t, model.pollFirst()); t = q.pollDue(Long.MaxValue) }
      assert(model.isEmpty && q.isEmpty)
    }
  }

  private def agreesWithModel(seed: Long, instants: Int, keys: Int, ops: Int): Unit = {
    {
      val rnd = new scala.util.Random(seed)
      val q = new TimerQueue
      val model = new java.util.TreeSet[Timer](Timer.ordering)
      def timer(): Timer = {
        val start = rnd.nextInt(4).toLong * 10
        Timer(rnd.nextInt(instants).toLong, rnd.nextInt(keys).toLong, TimeWindow(start, start + 10))
      }
      var clock = -1L
      for (_ <- 0 until ops) rnd.nextInt(10) match {
        case 0 | 1 | 2 | 3 =>
          val t = timer(); assertEquals(q.add(t), model.add(t))
        case 4 | 5 =>
          val t = timer(); assertEquals(q.remove(t), model.remove(t))
        case 6 =>
          val t = timer(); assertEquals(q.contains(t), model.contains(t))
        case 7 =>
          clock = math.min(clock + rnd.nextInt(3), instants.toLong)
          var polled = q.pollDue(clock)
          val expected =
            if (!model.isEmpty && model.first.timestamp <= clock) model.pollFirst() else null
          assertEquals(polled, expected)
          // Polls interleave with adds at the instant being polled.
          if (polled != null && rnd.nextBoolean()) {
            val t = Timer(polled.timestamp, rnd.nextInt(keys).toLong, polled.window)
            assertEquals(q.add(t), model.add(t))
          }
          polled = null
        case 8 =>
          assertEquals(q.nextTime, if (model.isEmpty) Long.MaxValue else model.first.timestamp)
          assertEquals(q.peek, if (model.isEmpty) None else Some(model.first))
        case _ =>
          import scala.jdk.CollectionConverters._
          assertEquals(q.iterator.toList, model.iterator.asScala.toList)
      }
      assertEquals(q.size, model.size)
      assertEquals(q.isEmpty, model.isEmpty)
    }
  }
}
