package sparkwin.runtime.spark.task

import scala.util.Random

/** Keys in buckets: what a key group stores is what its keys hold, whatever order they come and
  * go in, in as few entries as the load asks, read and written a bucket at a time.
  */
class KeyBucketsSuite extends munit.FunSuite {

  /** The state store of one group across calls: its entries, and the operations made on it. */
  private final class Store extends GroupHost {
    val entries = new java.util.HashMap[KeyId, Array[Byte]]()
    var reads = 0
    var writes = 0
    def get(key: Array[Byte]): Array[Byte] = { reads += 1; entries.get(new KeyId(key)) }
    def put(key: Array[Byte], value: Array[Byte]): Unit = { writes += 1; entries.put(new KeyId(key), value) }
    def remove(key: Array[Byte]): Unit = { writes += 1; entries.remove(new KeyId(key)) }
    def packsKeys: Boolean = true
    def watermark: Long = 0L
    def batchTime: Long = 0L
    def timer(current: Long, wanted: Long, firing: Boolean): Unit = ()

    def bucketIndices: Set[Int] =
      entries
        .keySet()
        .toArray(Array.empty[KeyId])
        .map(k => java.nio.ByteBuffer.wrap(k.bytes, 1, 4).getInt)
        .toSet
  }

  /** A key's bytes as long as an `UnsafeRow` of one long: 16. */
  private def key(i: Int): Array[Byte] =
    java.nio.ByteBuffer.allocate(16).putLong(0L).putLong(i.toLong).array()
  private def value(i: Int, version: Int): Array[Byte] = s"$i@$version".getBytes("UTF-8")
  private def text(bytes: Array[Byte]): String = if (bytes == null) null else new String(bytes, "UTF-8")

  /** Runs `calls` calls of random puts, overwrites and removes over keys 0 until `keySpace`,
    * each through a new [[KeyBuckets]] over the count the previous call left, as the loop does;
    * checks every read against a plain map, and the entries after every call.
    */
  private def churn(seed: Long, keySpace: Int, calls: Int, opsPerCall: Int): Unit = {
    val random = new Random(seed)
    val store = new Store
    val model = scala.collection.mutable.HashMap.empty[Int, String]
    var count = 1
    (1 to calls).foreach { call =>
      val b = new KeyBuckets(store, count, model.size.toLong)
      // Some calls bring many keys, some take most away (a flush), most do a little of both.
      val removing = if (call % 7 == 0) 0.9 else 0.3
      (1 to opsPerCall).foreach { op =>
        val k = random.nextInt(keySpace)
        assertEquals(text(b.get(key(k))), model.get(k).orNull, s"seed $seed, call $call, key $k")
        if (random.nextDouble() < removing) { b.remove(key(k)); model.remove(k) }
        else { b.put(key(k), value(k, op)); model(k) = text(value(k, op)) }
      }
      b.flush()
      count = b.count
      // Every bucket below the count, none past it; none stored empty; the keys spread.
      assert(store.bucketIndices.forall(_ < count), s"entries ${store.bucketIndices} past $count")
      store.entries.values().forEach(v => assert(v.nonEmpty, "an empty bucket is removed"))
      assert(model.size <= count.toLong * KeyBuckets.Load, s"${model.size} keys in $count buckets")
      if (model.isEmpty) assertEquals((count, store.entries.size), (1, 0))
      else assert(count <= math.max(1L, 4L * ((model.size + KeyBuckets.Load - 1) / KeyBuckets.Load)))
    }
    // A last call reads every key back, and no key the map lacks.
    val b = new KeyBuckets(store, count, model.size.toLong)
    (0 until keySpace).foreach(k => assertEquals(text(b.get(key(k))), model.get(k).orNull))
  }

  test("random puts, overwrites and removes over many calls read back as a plain map") {
    (1L to 6L).foreach(seed => churn(seed, keySpace = 3000, calls = 40, opsPerCall = 400))
  }

  test("a few keys, many calls: buckets split and merge back at the boundaries") {
    (10L to 15L).foreach(seed => churn(seed, keySpace = 60, calls = 200, opsPerCall = 9))
  }

  test("a key read, then written or removed as the same array, as the loop does, reads back as a plain map") {
    // The write after a read reuses the read's place; a read of another key, a write of another
    // (which may split a bucket) or a flush in between must make it look again.
    (20L to 25L).foreach { seed =>
      val random = new Random(seed)
      val store = new Store
      val model = scala.collection.mutable.HashMap.empty[Int, String]
      val arrays = (0 until 2000).map(key) // one array a key, kept across calls, as the loop's ids
      var count = 1
      (1 to 30).foreach { call =>
        val b = new KeyBuckets(store, count, model.size.toLong)
        (1 to 300).foreach { op =>
          val k = random.nextInt(arrays.size)
          assertEquals(text(b.get(arrays(k))), model.get(k).orNull, s"seed $seed, call $call, key $k")
          random.nextInt(4) match {
            case 0 => // another key read in between
              val other = random.nextInt(arrays.size)
              assertEquals(text(b.get(arrays(other))), model.get(other).orNull)
            case 1 => // another key written in between: a new one may split this key's bucket
              val other = random.nextInt(arrays.size)
              b.put(arrays(other), value(other, -op)); model(other) = text(value(other, -op))
            case _ =>
          }
          // Written once, or twice in a row (a write's place must not outlive it).
          (1 to 1 + random.nextInt(2)).foreach { again =>
            if (random.nextInt(3) == 0) { b.remove(arrays(k)); model.remove(k) }
            else { b.put(arrays(k), value(k, op * 3 + again)); model(k) = text(value(k, op * 3 + again)) }
          }
        }
        b.flush()
        count = b.count
      }
      val last = new KeyBuckets(store, count, model.size.toLong)
      arrays.indices.foreach(k =>
        assertEquals(text(last.get(key(k))), model.get(k).orNull, s"seed $seed, key $k")
      )
    }
  }

  test("a call touching every key of a big group reads and writes a bucket once, not each key") {
    val store = new Store
    val first = new KeyBuckets(store, 1, 0L)
    (0 until 2000).foreach(i => first.put(key(i), value(i, 0)))
    first.flush()
    val count = first.count
    assertEquals(count, 2000 / KeyBuckets.Load) // split as the keys came: 16 a bucket
    assertEquals(store.entries.size, count)
    store.reads = 0
    store.writes = 0
    // A flush: every key read and removed; the group ends with nothing stored.
    val flush = new KeyBuckets(store, count, 2000L)
    (0 until 2000).foreach { i =>
      assertEquals(text(flush.get(key(i))), text(value(i, 0)))
      flush.remove(key(i))
    }
    flush.flush()
    assertEquals(store.reads, count)
    assertEquals(store.writes, count) // each bucket's entry removed
    assertEquals((flush.count, store.entries.size), (1, 0))
  }

  test("the address: every key in a bucket below the count; a split moves keys to the new one only") {
    val random = new Random(7)
    val hashes = Array.fill(5000)(random.nextInt())
    (1 until 300).foreach { n =>
      val before = hashes.map(KeyBuckets.address(_, n))
      val after = hashes.map(KeyBuckets.address(_, n + 1))
      assert(before.forall(a => a >= 0 && a < n))
      val from = n - Integer.highestOneBit(n)
      before.indices.foreach { i =>
        if (after(i) != before(i)) assertEquals((before(i), after(i)), (from, n), s"count $n")
      }
    }
  }

  test("a bucket entry that does not read whole is refused with a message") {
    val store = new Store
    val b = new KeyBuckets(store, 1, 0L)
    b.put(key(1), value(1, 0))
    b.flush()
    val entry = KeyBuckets.entryKey(0)
    val bytes = store.entries.get(new KeyId(entry))
    store.entries.put(new KeyId(entry), bytes.take(bytes.length - 1))
    val e = intercept[IllegalStateException](new KeyBuckets(store, 1, 1L).get(key(1)))
    assert(e.getMessage.contains("key bucket 0 of 26 bytes is unreadable"), e.getMessage)
  }

  test("states kept as objects are encoded with their bucket, through splits, as their bytes") {
    final class Counted(bytes: Array[Byte]) extends Encodable {
      var encoded = 0
      def encode(): Array[Byte] = { encoded += 1; bytes }
    }
    val objects = new Store
    val bytes = new Store
    val withObjects = new KeyBuckets(objects, 1, 0L)
    val withBytes = new KeyBuckets(bytes, 1, 0L)
    val states = (0 until 100).map(k => new Counted(value(k, 0)))
    (0 until 100).foreach { k =>
      withObjects.putState(key(k), states(k))
      withBytes.put(key(k), value(k, 0))
    }
    assert(withObjects.count > 1, "the keys split the group's bucket")
    assert(withObjects.getState(key(7)) eq states(7), "a key's state comes back as the object")
    assert(states.forall(_.encoded == 0), "nothing is encoded before the write")
    withObjects.flush()
    withBytes.flush()
    assert(states.forall(_.encoded == 1), "each state is encoded once, with its bucket")
    assertEquals(objects.entries.keySet(), bytes.entries.keySet())
    objects.entries.forEach((k, v) => assertEquals(v.toList, bytes.entries.get(k).toList))
  }

  test("bucket entries name neither the group record, the last watermark nor a key") {
    val entry = KeyBuckets.entryKey(12345)
    assertEquals(entry.length, 5)
    assert(!java.util.Arrays.equals(entry, GroupSync.RecordKey))
    assert(!java.util.Arrays.equals(entry, GroupClocks.PreviousWatermarkKey))
    val k = new KeyBytes(org.apache.spark.sql.types.StructType.fromDDL("id BYTE"))
      .encode(org.apache.spark.sql.Row(1.toByte))
    assert(k.length > entry.length, s"a key of ${k.length} bytes")
  }
}
