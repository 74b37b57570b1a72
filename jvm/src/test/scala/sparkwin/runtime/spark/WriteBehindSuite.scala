package sparkwin.runtime.spark

import org.apache.spark.sql.Row

/** Real-time mode's write-behind ([[WriteBehind]]): a data row's call writes nothing to the
  * store, the group's next summary or timer call writes it all, and the store ends as a
  * write-through run leaves it. A lost flush would leave the store short here.
  */
class WriteBehindSuite extends munit.FunSuite {

  private val planJson: String = LoopFixtures.tumblingPlanJson

  /** A task's state store, every group's entries under (label, key), counting what reaches it. */
  private final class Store {
    val entries = new java.util.TreeMap[String, String]()
    var puts = 0
    var removes = 0
    private def at(group: Int, key: Array[Byte]) = s"$group/${hex(key)}"
    def get(group: Int, key: Array[Byte]): Array[Byte] = Option(entries.get(at(group, key))).map(unhex).orNull
    def put(group: Int, key: Array[Byte], value: Array[Byte]): Unit = {
      puts += 1
      entries.put(at(group, key), hex(value))
    }
    def remove(group: Int, key: Array[Byte]): Unit = { removes += 1; entries.remove(at(group, key)) }
    def writes: Int = puts + removes
  }

  private def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString
  private def unhex(s: String): Array[Byte] = s.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray

  /** One call's host, as Spark 4's processor offers it: the map state packs keys in buckets. */
  private final class Host(store: Store, override val keyGroup: Int, val batchTime: Long) extends GroupHost {
    def get(key: Array[Byte]): Array[Byte] = store.get(keyGroup, key)
    def put(key: Array[Byte], value: Array[Byte]): Unit = store.put(keyGroup, key, value)
    def remove(key: Array[Byte]): Unit = store.remove(keyGroup, key)
    def packsKeys: Boolean = true
    def watermark: Long = 0L // fixed for a real-time batch
    def timer(current: Long, wanted: Long, firing: Boolean): Unit = ()
  }

  /** A real-time task: one loop, called a row at a time on `store`. */
  private final class Task(val store: Store = new Store, realTime: Boolean = true) {
    val loop = new KeyGroupLoop(
      LoopSpec(planJson, java8Time = false, combined = false, 3, None, tickColumn = -1, realTime = realTime)
    )
    private var clock = 1000L
    def call(group: Int, row: Row, firing: Boolean = false): List[Row] = {
      clock += 1
      loop
        .call(new Host(store, group, clock), if (row == null) Iterator.empty else Iterator(row), firing)
        .toList
    }
  }

  private def data(user: String, amount: Long, ts: Long) = Row(user, amount, ts, "0", null)
  private def summary(group: Int, max: Long) = Row(null, null, null, null, Row(group, Seq("0"), Seq(max)))
  private def marker(group: Int) = Row(null, null, null, null, Row(group, Seq.empty[String], Seq.empty[Long]))

  private def results(out: List[Row]): List[(String, Long, Long)] =
    LoopFixtures.windowResults(out.iterator).sorted

  test("a data row's call writes nothing; the group's next summary writes what it changed") {
    val task = new Task
    task.call(1, data("a", 1L, 1L))
    task.call(1, data("b", 2L, 3L))
    task.call(1, data("a", 4L, 5L))
    assertEquals(task.store.writes, 0)
    assert(task.loop.deferred.pending(1) >= 2, "the group's record and its bucket wait")
    task.call(1, summary(1, 5L)) // watermark 4: nothing fires, but the rows' state is written
    assertEquals(task.loop.deferred.pending(1), 0)
    assert(task.store.puts >= 2, s"${task.store.puts} puts")
    // Written once per summary, not per row: the record and one bucket.
    assertEquals(task.store.puts, 2)
  }

  test("a bucket waits as the object a call left, is taken back by the next, and is written as one") {
    val behind = new WriteBehind
    val store = new Store
    def key(i: Int) = Array[Byte](1, 2, 3, 4, 5, 6, 7, i.toByte)
    val first = new KeyBuckets(behind.over(new Host(store, 1, 0L)), 1, 0L)
    first.put(key(1), Array[Byte](10))
    first.flush()
    val next = behind.over(new Host(store, 1, 0L))
    val held = next.kept(KeyBuckets.entryKey(0))
    assert(held != null, "the bucket is held unencoded")
    val second = new KeyBuckets(next, 1, 1L)
    assertEquals(second.get(key(1)).toList, List[Byte](10))
    second.put(key(2), Array[Byte](20))
    second.flush()
    assert(next.kept(KeyBuckets.entryKey(0)) eq held, "the same object goes on, not a decoded copy")
    assertEquals(store.writes, 0)
    behind.flush(new Host(store, 1, 0L))
    // What reaches the store is what a write-through bucket of the same keys writes.
    val through = new Store
    val direct = new KeyBuckets(new Host(through, 1, 0L), 1, 0L)
    direct.put(key(1), Array[Byte](10))
    direct.put(key(2), Array[Byte](20))
    direct.flush()
    assertEquals(store.entries, through.entries)
  }

  test("a data row's call reads its group's own unwritten changes, and its pane counts them all") {
    val task = new Task
    task.call(1, data("a", 1L, 1L))
    task.call(1, data("a", 5L, 5L))
    assertEquals(task.store.writes, 0)
    assertEquals(results(task.call(1, summary(1, 12L))), List(("a", 0L, 6L)))
  }

  test("the store ends as a write-through run leaves it, byte for byte") {
    val rows = List(
      data("a", 1L, 1L),
      data("b", 2L, 3L),
      summary(1, 3L),
      data("a", 4L, 5L),
      data("c", 8L, 14L),
      summary(1, 14L), // [0, 10) fires: a and b leave the store
      data("c", 1L, 15L),
      data("d", 3L, 16L),
      marker(1)
    )
    val behind = new Task
    rows.foreach(behind.call(1, _))
    val through = new Task
    rows.foreach { row =>
      through.call(1, row)
      through.loop.deferred.flush(new Host(through.store, 1, 0L)) // every call's writes, at once
    }
    assertEquals(behind.loop.deferred.pending(1), 0)
    assertEquals(behind.store.entries, through.store.entries)
    assert(!behind.store.entries.isEmpty)
    assert(
      behind.store.writes < through.store.writes,
      s"${behind.store.writes} against ${through.store.writes}"
    )
  }

  test("a marker naming no channel flushes and moves no watermark") {
    val task = new Task
    task.call(1, data("a", 1L, 1L))
    task.call(1, summary(1, 5L))
    task.call(1, data("a", 2L, 7L))
    assertEquals(results(task.call(1, marker(1))), Nil)
    assertEquals(task.loop.deferred.pending(1), 0)
    assertEquals(results(task.call(1, summary(1, 12L))), List(("a", 0L, 3L)))
  }

  test("a timer's call writes what the group's data calls left") {
    val task = new Task
    task.call(1, data("a", 1L, 1L))
    assertEquals(task.store.writes, 0)
    task.call(1, null, firing = true)
    assertEquals(task.loop.deferred.pending(1), 0)
    assert(task.store.puts >= 2, s"${task.store.puts} puts")
  }

  test("groups are apart: one's summary writes its changes only") {
    val task = new Task
    task.call(1, data("a", 1L, 1L))
    task.call(2, data("b", 2L, 3L))
    task.call(1, summary(1, 2L))
    assertEquals(task.loop.deferred.pending(1), 0)
    assert(task.loop.deferred.pending(2) > 0, "group 2 still waits for its own summary")
    assert(task.store.entries.keySet.stream.allMatch(_.startsWith("1/")))
    task.call(2, marker(2))
    assertEquals(task.loop.deferred.pending(2), 0)
    assert(task.store.entries.keySet.stream.anyMatch(_.startsWith("2/")))
  }

  test("micro-batch mode writes in every call") {
    val task = new Task(realTime = false)
    assertEquals(task.loop.deferred, null)
    task.loop.call(new Host(task.store, 1, 1000L), Iterator(Row("a", 1L, 1L)), firing = false).toList
    assert(task.store.puts >= 2, s"${task.store.puts} puts")
  }
}
