package sparkwin.runtime.spark.task

import org.apache.spark.sql.Row

/** Real-time mode's write-behind ([[WriteBehind]]): a data row's call writes nothing to the
  * store; a map partition's last summary, a timer's call, or a summary once the held changes are
  * `holdMs` old writes it all; and the store ends as a write-through run leaves it. A lost flush
  * would leave the store short here.
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

  /** A real-time task: one loop, called a row at a time on `store`; `holdMs` 0: every summary
    * writes what its group holds, an hour: only a partition's last summary does.
    */
  private final class Task(val store: Store = new Store, realTime: Boolean = true, holdMs: Long = 0L) {
    val loop = new KeyGroupLoop(
      LoopSpec(
        planJson,
        java8Time = false,
        combined = false,
        3,
        None,
        -1,
        mode = sparkwin.plan.RunMode.of(realTime),
        holdMs = holdMs
      )
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
  private val Hour = 3600000L
  private def summary(group: Int, max: Long, last: Boolean = false) =
    Row(null, null, null, null, Row(group, Seq("0"), Seq(max), last, 1))
  private def marker(group: Int) =
    Row(null, null, null, null, Row(group, Seq.empty[String], Seq.empty[Long], true, 1))

  /** The store of group 1 after `rows`, each call's writes put at once (write-through). */
  private def writtenThrough(rows: List[Row]): Store = {
    val through = new Task
    rows.foreach { row =>
      through.call(1, row)
      through.loop.deferred.flush(new Host(through.store, 1, 0L))
    }
    through.store
  }

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

  test("a summary inside the partition leaves young changes held; the partition's last writes them") {
    val rows = List(
      data("a", 1L, 1L),
      data("b", 2L, 3L),
      summary(1, 5L),
      data("a", 4L, 8L),
      summary(1, 12L), // [0, 10) fires from what is held, and its keys' removal is held too
      data("c", 3L, 13L),
      summary(1, 13L, last = true)
    )
    val task = new Task(holdMs = Hour)
    val out = rows.init.map(task.call(1, _))
    assertEquals(results(out(4)), List(("a", 0L, 5L), ("b", 0L, 2L)))
    assertEquals(task.store.writes, 0, "nothing is written before the partition's last summary")
    task.call(1, rows.last)
    assertEquals(task.loop.deferred.pending(1), 0)
    assertEquals(task.store.entries, writtenThrough(rows).entries)
  }

  test("a summary that fires panes leaves due writes to the group's next summary") {
    val task = new Task(holdMs = 0L) // every summary finds its group's changes due
    task.call(1, data("a", 1L, 1L))
    task.call(1, data("b", 2L, 3L))
    assertEquals(results(task.call(1, summary(1, 12L))), List(("a", 0L, 1L), ("b", 0L, 2L)))
    assertEquals(task.store.writes, 0, "the panes' call wrote nothing")
    assertEquals(results(task.call(1, summary(1, 13L))), Nil)
    assertEquals(task.loop.deferred.pending(1), 0)
    assert(task.store.writes > 0)
  }

  test("held changes are due once the oldest of them is holdMs old, and not after they are written") {
    var now = 0L
    val behind = new WriteBehind(holdMs = 1000L, nanoTime = () => now)
    val store = new Store
    assert(!behind.due(1), "a group holding nothing is never due")
    behind.over(new Host(store, 1, 0L)).put(Array[Byte](1), Array[Byte](10))
    now = 600L * 1000000L
    behind.over(new Host(store, 1, 0L)).put(Array[Byte](2), Array[Byte](20)) // the oldest counts
    now = 999L * 1000000L
    assert(!behind.due(1))
    now = 1000L * 1000000L
    assert(behind.due(1))
    assert(!behind.due(2), "groups are apart")
    behind.flush(new Host(store, 1, 0L))
    assert(!behind.due(1))
    assertEquals(store.puts, 2)
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
    val behind = new Task(holdMs = Hour) // only the marker writes
    rows.foreach(behind.call(1, _))
    val through = writtenThrough(rows)
    assertEquals(behind.loop.deferred.pending(1), 0)
    assertEquals(behind.store.entries, through.entries)
    assert(!behind.store.entries.isEmpty)
    assert(
      behind.store.writes < through.writes,
      s"${behind.store.writes} against ${through.writes}"
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
