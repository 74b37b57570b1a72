package sparkwin.runtime.spark.task

import scala.util.Random

/** Real-time mode's buckets kept decoded from call to call ([[KeptBuckets]]): whatever order
  * the groups' calls, the held writes' flushes and the budget's drops come in, every read is what
  * the calls before wrote, and the store ends as if nothing had been kept.
  */
class KeptBucketsSuite extends munit.FunSuite {

  /** A key's state as the engine leaves it: an object, encoded when its bucket is written. */
  private final class State(val text: String) extends Encodable {
    def encode(): Array[Byte] = text.getBytes("UTF-8")
  }

  private def key(i: Int): Array[Byte] =
    java.nio.ByteBuffer.allocate(16).putLong(0L).putLong(i.toLong).array()
  private def text(state: AnyRef): String = state match {
    case null => null
    case s: State => s.text
    case b: Array[Byte] @unchecked => new String(b, "UTF-8")
  }

  /** `calls` calls over `groups` groups, each a few random puts and removes of keys 0 until
    * `keySpace` through the task's kept buckets over held writes, as real-time mode's loop
    * makes them; held writes flushed at random (a summary, a timer). Checks each read against a
    * map, then the store against it once everything is written. Returns how often a call went
    * on with the buckets the group's last call left.
    */
  private def churn(seed: Long, maxBuckets: Int, groups: Int = 4, keySpace: Int = 1500): Int = {
    val random = new Random(seed)
    val store = new LoopFixtures.TaskStore()
    val behind = new WriteBehind
    val kept = new KeptBuckets(maxBuckets)
    val model = Array.fill(groups)(scala.collection.mutable.HashMap.empty[Int, String])
    val count = Array.fill(groups)(1)
    val last = new Array[KeyBuckets](groups)
    var reused = 0
    (1 to 600).foreach { call =>
      val g = random.nextInt(groups)
      val b = kept.open(behind.over(store.host(g)), count(g), model(g).size.toLong)
      if (b eq last(g)) reused += 1
      last(g) = b
      // Most calls a row; some bring many keys, or take most away (a window's close).
      val ops = if (random.nextInt(10) == 0) 300 else 1 + random.nextInt(3)
      val removing = if (random.nextInt(8) == 0) 0.9 else 0.3
      (1 to ops).foreach { op =>
        val k = random.nextInt(keySpace)
        val id = key(k)
        assertEquals(
          text(b.getState(id)),
          model(g).get(k).orNull,
          s"seed $seed, call $call, group $g, key $k"
        )
        if (random.nextDouble() < removing) { b.remove(id); model(g).remove(k) }
        else { b.putState(id, new State(s"$k@$call.$op")); model(g)(k) = s"$k@$call.$op" }
      }
      b.flush()
      kept.closed(b)
      count(g) = b.count
      assert(kept.size <= maxBuckets, s"${kept.size} buckets kept, at most $maxBuckets")
      if (random.nextInt(5) == 0) behind.flush(store.host(random.nextInt(groups)))
    }
    (0 until groups).foreach(g => behind.flush(store.host(g)))
    (0 until groups).foreach { g =>
      val read = new KeyBuckets(store.host(g), count(g), model(g).size.toLong)
      (0 until keySpace).foreach(k =>
        assertEquals(text(read.get(key(k))), model(g).get(k).orNull, s"seed $seed, stored, group $g, key $k")
      )
    }
    reused
  }

  test("kept buckets read what the calls before wrote, through held writes' flushes, as a map") {
    (1L to 4L).foreach { seed =>
      val reused = churn(seed, maxBuckets = KeptBuckets.MaxBuckets)
      assert(reused > 500, s"seed $seed: a group's next call went on with its buckets $reused times of 600")
    }
  }

  test("past the budget every group's buckets are dropped, and calls read them again, the same") {
    (5L to 8L).foreach { seed =>
      val reused = churn(seed, maxBuckets = 40)
      assert(reused < 500, s"seed $seed: the small budget dropped nothing ($reused reuses)")
    }
  }

  test("a record that says other counts than the kept buckets hold gets buckets read afresh") {
    val store = new LoopFixtures.TaskStore()
    val behind = new WriteBehind
    val kept = new KeptBuckets()
    val first = kept.open(behind.over(store.host(3)), 1, 0L)
    first.putState(key(1), new State("one"))
    first.flush()
    kept.closed(first)
    assertEquals(kept.size, 1)
    assert(kept.open(behind.over(store.host(3)), 1, 1L) eq first, "the same counts: the same buckets")
    kept.closed(first)
    val other = kept.open(behind.over(store.host(3)), 1, 2L)
    assert(!(other eq first), "other counts: not the kept buckets")
    assertEquals(text(other.getState(key(1))), "one", "read again, from the held writes")
    other.flush()
    kept.closed(other)
    assertEquals(kept.size, 1)
  }
}
