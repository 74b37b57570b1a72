package sparkwin.runtime.spark.task

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.spark.sql.Row

/** A big key group's wake-ups indexed by time ([[WakeupIndex]]), through the loop over a host
  * that keeps each entry on its own as Spark 4's map state does: what a call costs does not grow
  * with the group's keys, windows fire once and in time order across buckets, on both clocks, a
  * key whose wake-up moved fires once, and a group written with the table moves to the index.
  */
class WakeupIndexSuite extends munit.FunSuite {

  private val planJson: String = LoopFixtures.tumblingPlanJson

  private def withPlan(change: (ObjectMapper, ObjectNode) => Unit): String = {
    val mapper = new ObjectMapper()
    val plan = mapper.readTree(planJson).asInstanceOf[ObjectNode]
    change(mapper, plan)
    mapper.writeValueAsString(plan)
  }

  /** A group's entries, each its own, kept between calls. */
  private final class Store {
    val entries = new java.util.HashMap[KeyId, Array[Byte]]()
    def record: Array[Byte] = entries.get(new KeyId(Array.emptyByteArray))
    def pages: Int = entries.keySet.toArray.count(_.asInstanceOf[KeyId].bytes.length == 14)
  }

  /** One call's host over a store: counts the entries it touches and the bytes it writes. */
  private final class Host(
      store: Store,
      val watermark: Long,
      val batchTime: Long,
      val packsKeys: Boolean = true
  ) extends GroupHost {
    var touched = 0
    var written = 0L
    def get(key: Array[Byte]): Array[Byte] = { touched += 1; store.entries.get(new KeyId(key)) }
    def put(key: Array[Byte], value: Array[Byte]): Unit = {
      touched += 1
      written += value.length
      store.entries.put(new KeyId(key), value)
    }
    def remove(key: Array[Byte]): Unit = { touched += 1; store.entries.remove(new KeyId(key)) }
    def timer(current: Long, wanted: Long, firing: Boolean): Unit = ()
  }

  private def loop(plan: String = planJson) =
    new KeyGroupLoop(LoopSpec(plan, java8Time = false, combined = false, 1, None, tickColumn = -1))

  /** (user, window start, sum) of the call's window results, in the order they came. */
  private def results(out: Iterator[Row]): List[(String, Long, Long)] = LoopFixtures.windowResults(out)

  private def indexed(store: Store): Boolean = (store.record(0) & GroupRecord.IndexedFlag) != 0

  test("a row's call costs as much in a group of 100k keys as in one of 10") {
    def costOfOneRow(keys: Int): (Int, Long) = {
      val store = new Store
      val l = loop()
      val rows = (0 until keys).iterator.map(i => Row(s"u$i", 1L, (i % 10).toLong))
      l.call(new Host(store, 0L, 1000L), rows, firing = false).foreach(_ => ())
      // A key already waiting gets a row of a later window (its wake-up stays), then a new key
      // comes (a new wake-up): as real-time mode calls the loop, one row a call.
      val costs = Seq(Row("u1", 2L, 25L), Row("new", 3L, 35L)).map { row =>
        val host = new Host(store, 0L, 1001L)
        l.call(host, Iterator(row), firing = false).foreach(_ => ())
        (host.touched, host.written)
      }
      (costs.map(_._1).max, costs.map(_._2).max)
    }
    val (fewTouched, fewWritten) = costOfOneRow(10)
    val (manyTouched, manyWritten) = costOfOneRow(100000)
    // With the table in the record, the big group's call wrote 100k wake-ups (2.8 MB).
    assert(manyWritten <= 4 * fewWritten + 4096, s"$manyWritten bytes against $fewWritten")
    // The big group's row also reads and writes a page of the index, and its key may split a
    // bucket of keys (three entries): a constant, whatever the keys.
    assert(manyTouched <= fewTouched + 6, s"$manyTouched entries against $fewTouched")
  }

  test("windows spread over many buckets fire once each, in time order, as the watermark passes") {
    val store = new Store
    val l = loop()
    val keys = 600
    // Key i's window is [10 i, 10 i + 10): wake-ups over 6 s, six buckets.
    val rows = (0 until keys).iterator.map(i => Row(s"u$i", i.toLong + 1, 10L * i + 3))
    l.call(new Host(store, 0L, 1000L), rows, firing = false).foreach(_ => ())
    assert(indexed(store))
    val fired = Seq(0L, 1500L, 2999L, 3000L, 5995L, 6000L).map { wm =>
      val out = results(l.call(new Host(store, wm, 2000L), Iterator.empty, firing = true))
      assert(out.forall(_._2 + 9 <= wm), s"a window fired before the watermark $wm passed it")
      val starts = out.map(_._2)
      assertEquals(starts.map(WakeupIndex.slotOf), starts.map(WakeupIndex.slotOf).sorted)
      out
    }
    assertEquals(fired.map(_.size), Seq(0, 150, 150, 0, 299, 1))
    assertEquals(fired.flatten.sortBy(_._2), (0 until keys).map(i => (s"u$i", 10L * i, i.toLong + 1)).toList)
    assertEquals(store.entries.size, 0) // every key, page and the record are gone
  }

  test("a key whose wake-up moved fires once, when its true wake-up comes") {
    // Sessions of 100 ms: a second row 50 ms later moves a key's wake-up from 99 to 149.
    val sessions = withPlan { (m, p) =>
      p.set[ObjectNode](
        "assigner",
        m.readTree("{\"kind\": \"session\", \"gapMs\": 100, \"eventTime\": true}")
      );
      ()
    }
    val store = new Store
    val l = loop(sessions)
    val keys = 300
    l.call(new Host(store, 0L, 1000L), (0 until keys).iterator.map(i => Row(s"u$i", 1L, 0L)), false)
      .foreach(_ => ())
    l.call(new Host(store, 0L, 1001L), (0 until keys).iterator.map(i => Row(s"u$i", 2L, 50L)), false)
      .foreach(_ => ())
    assert(indexed(store))
    // At 120 the stale wake-ups at 99 are due: each key is read, and nothing fires.
    assertEquals(results(l.call(new Host(store, 120L, 2000L), Iterator.empty, true)), Nil)
    val out = results(l.call(new Host(store, 200L, 3000L), Iterator.empty, true))
    assertEquals(out.sorted, (0 until keys).map(i => (s"u$i", 0L, 3L)).toList.sorted)
    assertEquals(results(l.call(new Host(store, 300L, 4000L), Iterator.empty, true)), Nil)
    assertEquals(store.entries.size, 0)
  }

  test("processing-time and event-time wake-ups of one key both fire from the index") {
    // Event-time windows whose trigger fires every 500 ms of processing time; the window's
    // cleanup waits on event time.
    val plan = withPlan { (m, p) =>
      p.set[ObjectNode](
        "trigger",
        m.readTree("{\"kind\": \"continuousProcessingTime\", \"intervalMs\": 500}")
      );
      ()
    }
    val store = new Store
    val l = loop(plan)
    val keys = 300
    val rows = (0 until keys).iterator.map(i => Row(s"u$i", i.toLong, 5L))
    assertEquals(results(l.call(new Host(store, 0L, 1000L), rows, false)), Nil)
    assert(indexed(store))
    val early = results(l.call(new Host(store, 0L, 1600L), Iterator.empty, true))
    assertEquals(early.sorted, (0 until keys).map(i => (s"u$i", 0L, i.toLong)).toList.sorted)
    // The cleanup, on event time; a processing-time entry left behind wakes a key without state
    // once, for nothing.
    assertEquals(results(l.call(new Host(store, 20L, 1700L), Iterator.empty, true)), Nil)
    assertEquals(results(l.call(new Host(store, 20L, 2100L), Iterator.empty, true)), Nil)
    assertEquals(store.entries.size, 0)
  }

  test("a group whose record holds the table (an older sparkwin's) moves to the index, then fires") {
    val store = new Store
    val l = loop()
    val keys = 1000
    // Written as a 0.5 group on Spark 3.5's host would be: a key an entry, the table in the record.
    l.call(
      new Host(store, 0L, 1000L, packsKeys = false),
      (0 until keys).iterator.map(i => Row(s"u$i", 1L, 3L)),
      false
    ).foreach(_ => ())
    assert(!indexed(store) && GroupRecord.decode(store.record).wakeups.size == keys)
    l.call(new Host(store, 0L, 1001L), Iterator(Row("u1", 1L, 4L)), false).foreach(_ => ())
    assert(indexed(store) && store.pages > 0)
    val out = results(l.call(new Host(store, 10L, 2000L), Iterator.empty, true))
    assertEquals(out.sorted, (0 until keys).map(i => (s"u$i", 0L, if (i == 1) 2L else 1L)).toList.sorted)
    assertEquals(store.entries.size, 0)
  }

  test("real-time mode: a row a call into a big group, a batch retried, each window once") {
    val l = new KeyGroupLoop(
      LoopFixtures.realTimeSpec(planJson, 1)
    )
    val store = new Store
    var clock = 1000L
    def call(row: Row): List[(String, Long, Long)] = {
      clock += 1
      results(l.call(new Host(store, 0L, clock), Iterator(row), firing = false))
    }
    def summary(max: Long) = Row(null, null, null, null, Row(0, Seq("0"), Seq(max), false, 1))
    (0 until 400).foreach(i => assertEquals(call(Row(s"u$i", 1L, (i % 20).toLong, "0", null)), Nil))
    // Real-time data calls hold their writes until a summary ([[WriteBehind]]): one that closes
    // nothing writes them out.
    assertEquals(call(summary(0L)), Nil)
    assert(indexed(store))
    val before = new java.util.HashMap[KeyId, Array[Byte]](store.entries)
    val firstWindow = (0 until 400).filter(_ % 20 < 10).map(i => (s"u$i", 0L, 1L)).toList.sorted
    assertEquals(call(summary(12L)).sorted, firstWindow)
    assertEquals(call(summary(12L)), Nil) // writes what the firing call left held
    // The batch runs again from the state before the summary: the loop kept what it wrote.
    store.entries.clear()
    store.entries.putAll(before)
    assertEquals(call(summary(12L)).sorted, firstWindow)
    assertEquals(call(summary(12L)), Nil)
    assertEquals(call(summary(25L)).size, 200)
    assertEquals(call(summary(25L)), Nil)
    assertEquals(store.pages, 0) // the record stays: it holds the channel watermarks
  }

  test("a small group keeps its table in the record") {
    val store = new Store
    loop()
      .call(new Host(store, 0L, 1000L), (0 until 200).iterator.map(i => Row(s"u$i", 1L, 3L)), false)
      .foreach(_ => ())
    assert(!indexed(store) && store.pages == 0)
  }
}
