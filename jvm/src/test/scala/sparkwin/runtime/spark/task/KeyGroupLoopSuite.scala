package sparkwin.runtime.spark.task

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.Row

import sparkwin.operator.store.Bytes

/** The key-group loop that both Spark lines host, run over Spark 3.5's one value per group
  * ([[GroupTable]]) with a host that plays the operator: the group's entries, its one event-time
  * timer, Spark's clocks.
  */
class KeyGroupLoopSuite extends munit.FunSuite {

  private val planJson: String = LoopFixtures.tumblingPlanJson

  /** One call's host: the group's stored value, Spark's watermark and batch time. */
  private final class Host(
      stored: Array[Byte],
      val watermark: Long,
      val batchTime: Long,
      val packsKeys: Boolean = false
  ) extends GroupHost {
    val table: GroupTable = GroupTable.read(stored)
    var wanted: Long = Long.MinValue
    def get(key: Array[Byte]): Array[Byte] = table.get(key)
    def put(key: Array[Byte], value: Array[Byte]): Unit = table.put(key, value)
    def remove(key: Array[Byte]): Unit = table.remove(key)
    def timer(current: Long, wanted: Long, firing: Boolean): Unit = this.wanted = wanted
    def value: Array[Byte] = if (table.changed) table.encode() else stored
  }

  private def loop(groups: Int = 1, plan: String = planJson) =
    new KeyGroupLoop(LoopSpec(plan, java8Time = false, combined = false, groups, None, tickColumn = -1))

  /** A host that counts the reads of keys' state (not of the group's record). */
  private final class CountingHost(stored: Array[Byte], val watermark: Long) extends GroupHost {
    val inner = new Host(stored, watermark, 1000L)
    var keyReads = 0
    def get(key: Array[Byte]): Array[Byte] = {
      if (key.length > 1) keyReads += 1
      inner.get(key)
    }
    def put(key: Array[Byte], value: Array[Byte]): Unit = inner.put(key, value)
    def remove(key: Array[Byte]): Unit = inner.remove(key)
    def packsKeys: Boolean = inner.packsKeys
    def batchTime: Long = inner.batchTime
    def timer(current: Long, wanted: Long, firing: Boolean): Unit = inner.timer(current, wanted, firing)
  }

  /** (user, window start, sum) of the call's window results. */
  private def results(out: Iterator[Row]): List[(String, Long, Long)] = LoopFixtures.windowResults(out).sorted

  test("rows wait in the group's value; its one timer fires every key's window, then it empties") {
    val l = loop()
    val first = new Host(null, watermark = 0L, batchTime = 1000L)
    val rows = Iterator(Row("a", 1L, 1L), Row("a", 5L, 5L), Row("b", 7L, 3L), Row("b", 2L, 12L))
    assertEquals(results(l.call(first, rows, firing = false)), Nil)
    // The record and both keys, in one value; the timer at the first window's end (9).
    val value = first.value
    assertEquals(value(0), GroupTable.Version)
    val record = GroupRecord.decode(GroupTable.read(value).get(GroupSync.RecordKey))
    assertEquals((record.keyGroups, record.timer, record.liveKeys), (1, 9L, 2L))
    assertEquals(first.wanted, 9L)
    // Spark's watermark passes 9: the timer's call fires a's and b's first windows.
    val fired = new Host(value, watermark = 10L, batchTime = 2000L)
    assertEquals(results(l.call(fired, Iterator.empty, firing = true)), List(("a", 0L, 6L), ("b", 0L, 7L)))
    assertEquals(fired.wanted, 19L) // b's second window
    val last = new Host(fired.value, watermark = 30L, batchTime = 3000L)
    assertEquals(results(l.call(last, Iterator.empty, firing = true)), List(("b", 10L, 2L)))
    assertEquals(last.wanted, Long.MinValue)
    assert(last.value == null, "a group with nothing left has no state")
  }

  private def keyOf(user: String): Array[Byte] =
    new KeyBytes(org.apache.spark.sql.types.StructType.fromDDL("user STRING")).encode(Row(user))

  test("where the host packs keys, a group's keys lie in buckets, and the record counts them") {
    val l = loop()
    val first = new Host(null, watermark = 0L, batchTime = 1000L, packsKeys = true)
    val rows = Iterator(Row("a", 1L, 1L), Row("a", 5L, 5L), Row("b", 7L, 3L), Row("b", 2L, 12L))
    assertEquals(results(l.call(first, rows, firing = false)), Nil)
    val table = GroupTable.read(first.value)
    val record = GroupRecord.decode(table.get(GroupSync.RecordKey))
    assertEquals((record.liveKeys, record.buckets), (2L, 1))
    assert(table.get(KeyBuckets.entryKey(0)) != null, "both keys in bucket 0")
    assert(table.get(keyOf("a")) == null && table.get(keyOf("b")) == null, "no key an entry")
    val fired = new Host(first.value, watermark = 10L, batchTime = 2000L, packsKeys = true)
    assertEquals(results(l.call(fired, Iterator.empty, firing = true)), List(("a", 0L, 6L), ("b", 0L, 7L)))
    val last = new Host(fired.value, watermark = 30L, batchTime = 3000L, packsKeys = true)
    assertEquals(results(l.call(last, Iterator.empty, firing = true)), List(("b", 10L, 2L)))
    assert(last.value == null, "a group with nothing left has no state, and no bucket")
  }

  test("a group stored a key an entry keeps that layout until it empties, then packs its keys") {
    val l = loop()
    // Written before keys went into buckets (as a host that does not pack writes it).
    val old = new Host(null, watermark = 0L, batchTime = 1000L)
    l.call(old, Iterator(Row("a", 1L, 1L), Row("b", 7L, 3L)), firing = false).foreach(_ => ())
    assert(GroupTable.read(old.value).get(keyOf("a")) != null)
    // Resumed where keys are packed: a's and b's entries are read where they are.
    val resumed = new Host(old.value, watermark = 0L, batchTime = 2000L, packsKeys = true)
    l.call(resumed, Iterator(Row("a", 4L, 2L), Row("c", 8L, 5L)), firing = false).foreach(_ => ())
    val table = GroupTable.read(resumed.value)
    assertEquals(GroupRecord.decode(table.get(GroupSync.RecordKey)).buckets, 0)
    assert(table.get(keyOf("c")) != null && table.get(KeyBuckets.entryKey(0)) == null)
    val fired = new Host(resumed.value, watermark = 10L, batchTime = 3000L, packsKeys = true)
    assertEquals(
      results(l.call(fired, Iterator.empty, firing = true)),
      List(("a", 0L, 5L), ("b", 0L, 7L), ("c", 0L, 8L))
    )
    assert(fired.value == null, "the group emptied")
    // Its next keys go into buckets.
    val next = new Host(fired.value, watermark = 10L, batchTime = 4000L, packsKeys = true)
    l.call(next, Iterator(Row("d", 1L, 15L)), firing = false).foreach(_ => ())
    val packed = GroupTable.read(next.value)
    assertEquals(GroupRecord.decode(packed.get(GroupSync.RecordKey)).buckets, 1)
    assert(packed.get(keyOf("d")) == null && packed.get(KeyBuckets.entryKey(0)) != null)
  }

  test("a key's rows meet the watermark after its due windows fire, in one call") {
    val l = loop()
    val first = new Host(null, 0L, 1000L)
    l.call(first, Iterator(Row("a", 1L, 1L)), firing = false).foreach(_ => ())
    // The next batch brings a@25 with a watermark of 20: [0, 10) fires before the row counts.
    val next = new Host(first.value, 20L, 2000L)
    assertEquals(results(l.call(next, Iterator(Row("a", 4L, 25L)), firing = false)), List(("a", 0L, 1L)))
    assertEquals(next.wanted, 29L)
  }

  test(
    "a key's processing-time timers due at a batch's start fire before its watermark, whichever key ran first"
  ) {
    // Early firings 5 ms of processing time after a pane's first element (AfterWatermark).
    val mapper = new ObjectMapper()
    val tree = mapper.readTree(planJson).asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode]
    tree.set[com.fasterxml.jackson.databind.JsonNode](
      "trigger",
      mapper.readTree(
        """{"kind": "afterWatermark", "early": {"kind": "afterProcessingTime", "delayMs": 5}}"""
      )
    )
    val l = loop(plan = mapper.writeValueAsString(tree))
    val first = new Host(null, 0L, 1000L)
    l.call(first, Iterator(Row("a", 1L, 1L), Row("c", 2L, 2L)), firing = false).foreach(_ => ())
    // Both keys' early timers are due at 1005. The next batch moves the watermark past [0, 10) and
    // brings a row of a, which the loop runs before it wakes c: each key fires early, then on time.
    val next = new Host(first.value, 50L, 2000L)
    val out = l.call(next, Iterator(Row("a", 4L, 55L)), firing = false).toList
    val panes = out
      .filter(_.getInt(0) == OutputLayout.ResultKind)
      .map(_.getStruct(1))
      .map(r => (r.getString(0), r.getLong(4), r.getString(5), r.getBoolean(8)))
    // (user, sum, timing, last): without the group's last watermark, c's early timer fired at the
    // watermark a's row had moved the engine to (ON_TIME, not last) and its last pane was lost.
    assertEquals(
      panes,
      List(
        ("a", 1L, "EARLY", false),
        ("a", 1L, "ON_TIME", true),
        ("c", 2L, "EARLY", false),
        ("c", 2L, "ON_TIME", true)
      )
    )
    // The group keeps its last watermark under the key 0 while its keys wait; emptied (a's
    // [50, 60) closed), it keeps nothing.
    assertEquals(Bytes.getLong(GroupTable.read(next.value).get(GroupClocks.PreviousWatermarkKey), 0), 50L)
    val last = new Host(next.value, 100L, 3000L)
    assertEquals(results(l.call(last, Iterator.empty, firing = true)), List(("a", 50L, 4L), ("a", 50L, 4L)))
    assertEquals(GroupTable.read(last.value).entries.size, 0)
  }

  test("a group written with another number of key groups is refused, naming the setting") {
    val written = new Host(null, 0L, 1000L)
    loop(groups = 4).call(written, Iterator(Row("a", 1L, 1L)), firing = false).foreach(_ => ())
    val e = intercept[IllegalStateException](
      loop(groups = 8).call(new Host(written.value, 0L, 2000L), Iterator.empty, true)
    )
    assert(
      e.getMessage.contains(
        "written with 4 key groups, and this query runs 8: set spark.sparkwin.keyGroups to 4"
      ),
      e.getMessage
    )
  }

  test("a corrupt key state or record fails the call naming the key group, its layout and offset") {
    val written = new Host(null, 0L, 1000L)
    loop(groups = 8).call(written, Iterator(Row("a", 1L, 1L)), firing = false).foreach(_ => ())
    val table = GroupTable.read(written.value)
    val record = table.get(Array.emptyByteArray)
    final class Numbered(stored: Array[Byte]) extends GroupHost {
      val inner = new Host(stored, 20L, 2000L)
      def get(key: Array[Byte]): Array[Byte] = inner.get(key)
      def put(key: Array[Byte], value: Array[Byte]): Unit = inner.put(key, value)
      def remove(key: Array[Byte]): Unit = inner.remove(key)
      def packsKeys: Boolean = false
      def watermark: Long = inner.watermark
      def batchTime: Long = inner.batchTime
      def timer(current: Long, wanted: Long, firing: Boolean): Unit = ()
      override def keyGroup: Int = 5
    }
    def refused(change: GroupTable => Unit): String = {
      val t = GroupTable.read(written.value)
      change(t)
      intercept[sparkwin.core.CorruptStateException](
        loop(groups = 8).call(new Numbered(t.encode()), Iterator.empty, firing = true).foreach(_ => ())
      ).getMessage
    }
    val cut = refused(_.put(Array.emptyByteArray, record.take(11)))
    assert(cut.contains("corrupt sparkwin state in the key group labelled 5 (one of 8"), cut)
    assert(
      cut.contains("a key group's record, layout 1 of 11 bytes is unreadable at byte 5: it ends early"),
      cut
    )
    // The key's state: its count of processing-time timers (its last four bytes) made huge.
    val keyA = new KeyBytes(org.apache.spark.sql.types.StructType.fromDDL("user STRING")).encode(Row("a"))
    val bad = table.get(keyA).clone
    java.nio.ByteBuffer.wrap(bad).putInt(bad.length - 4, Int.MaxValue)
    val huge = refused(_.put(keyA, bad))
    assert(huge.contains("corrupt sparkwin state in the key group labelled 5 (one of 8"), huge)
    assert(huge.contains(s"a key's state, layout ${sparkwin.operator.store.KeyStateCodec.Version}"), huge)
    assert(huge.contains("expected a count of timers"), huge)
  }

  test("a key the wake-up table does not list is not read, while every stored key has a wake-up") {
    val l = loop()
    val first = new CountingHost(null, 0L)
    l.call(first, Iterator(Row("a", 1L, 1L), Row("b", 2L, 3L)), firing = false).foreach(_ => ())
    assertEquals(first.keyReads, 0) // a group with no record stores no key
    // a is listed (its window's end), c is new: only a is read, and both windows add up.
    val second = new CountingHost(first.inner.value, 0L)
    l.call(second, Iterator(Row("a", 4L, 2L), Row("c", 8L, 5L)), firing = false).foreach(_ => ())
    assertEquals(second.keyReads, 1)
    val fired = new Host(second.inner.value, watermark = 10L, batchTime = 2000L)
    assertEquals(
      results(l.call(fired, Iterator.empty, firing = true)),
      List(("a", 0L, 5L), ("b", 0L, 2L), ("c", 0L, 8L))
    )
  }

  test("global windows keep state without a wake-up, so every key with rows is read") {
    val mapper = new ObjectMapper()
    val plan = mapper.readTree(planJson).asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode]
    plan.set("assigner", mapper.readTree("{\"kind\": \"global\"}"))
    plan.set("trigger", mapper.readTree("{\"kind\": \"count\", \"count\": 2}"))
    val l = loop(plan = mapper.writeValueAsString(plan))
    def sums(out: Iterator[Row]) =
      out.filter(_.getInt(0) == OutputLayout.ResultKind).map(r => r.getStruct(1).getLong(4)).toList
    val first = new CountingHost(null, 0L)
    assertEquals(sums(l.call(first, Iterator(Row("a", 1L, 1L)), firing = false)), Nil)
    val second = new CountingHost(first.inner.value, 0L)
    assertEquals(sums(l.call(second, Iterator(Row("a", 5L, 2L)), firing = false)), List(6L))
    assertEquals(second.keyReads, 1)
  }

  /** One key group in real-time mode, called with one row at a time as Spark does there: its
    * watermark stays 0 for the whole (long) batch, and processing time moves per call.
    */
  private final class RealTimeGroup {
    private val loop = new KeyGroupLoop(
      LoopFixtures.realTimeSpec(planJson, 1)
    )

    /** The group's stored value (a test sets it back, as a replayed batch does). */
    var value: Array[Byte] = null
    private var clock = 1000L

    def call(row: Row): List[(String, Long, Long)] = results(rows(row).iterator)

    /** Every row the call returns: results, and metrics rows. */
    def rows(row: Row): List[Row] = {
      clock += 1
      val host = new Host(value, watermark = 0L, batchTime = clock)
      val out = loop.call(host, Iterator(row), firing = false).toList
      value = host.value
      out
    }
  }

  /** A data row of source partition `partition` (its channel), and a summary of its largest time
    * from a batch that reads `partitions` source partitions.
    */
  private def partitionRow(user: String, amount: Long, ts: Long, partition: String) =
    Row(user, amount, ts, partition, null)
  private def partitionSummary(partition: String, max: Long, partitions: Int = 1) =
    Row(null, null, null, null, Row(0, Seq(partition), Seq(max), false, partitions))

  test("real-time mode: one row per call, and a window fires as soon as a summary passes its end") {
    val group = new RealTimeGroup
    def call(row: Row) = group.call(row)
    def data(user: String, amount: Long, ts: Long) = partitionRow(user, amount, ts, "0")
    def summary(max: Long) = partitionSummary("0", max)
    assertEquals(call(data("a", 1L, 1L)), Nil)
    assertEquals(call(data("a", 5L, 5L)), Nil)
    assertEquals(call(summary(5L)), Nil) // watermark 4: [0, 10) waits
    assertEquals(call(data("b", 7L, 12L)), Nil) // the row meets watermark 4, and counts
    // The summary of 12 moves the watermark to 11, inside the same batch: [0, 10) fires now.
    assertEquals(call(summary(12L)), List(("a", 0L, 6L)))
    // A later row of a closed window is late, not counted into a new pane.
    assertEquals(call(data("a", 100L, 3L)), Nil)
    assertEquals(call(summary(25L)), List(("b", 10L, 7L)))
  }

  test("real-time mode: every partition the batch reads holds the watermark, before its first row") {
    val group = new RealTimeGroup
    def call(row: Row) = group.call(row)
    def summary(partition: String, max: Long) = partitionSummary(partition, max, partitions = 2)
    assertEquals(call(partitionRow("a", 1L, 1L, "0")), Nil)
    // Partition 0's task is first, and its summary passes [0, 10): partition 1, which the batch
    // reads but whose task has not delivered yet, holds the watermark back.
    assertEquals(call(summary("0", 15L)), Nil)
    // Partition 1's first row reaches the group after partition 0 moved on: on time, it counts.
    assertEquals(call(partitionRow("b", 7L, 8L, "1")), Nil)
    assertEquals(call(summary("1", 12L)), List(("a", 0L, 1L), ("b", 0L, 7L)))
  }

  test("real-time mode: a data row's counters wait for the group's summary; no news, no row") {
    // Without channel= the valve's watermark is not shown, so only counters make a metrics row.
    val group = new RealTimeGroup
    assertEquals(group.rows(partitionRow("a", 1L, 1L, "0")), Nil) // opened a window: held
    assertEquals(group.rows(partitionRow("b", 2L, 3L, "0")), Nil) // and another
    val said = group.rows(partitionSummary("0", 5L)) // watermark 4: nothing fires
    assertEquals(said.map(_.getInt(0)), List(OutputLayout.MetricsKind))
    val opened = OutputLayout.MetricNames.indexOf("windowsOpened")
    assertEquals(said.head.getStruct(5).getLong(opened), 2L) // both rows'
    assertEquals(group.rows(partitionRow("a", 2L, 3L, "0")), Nil) // the same window
    assertEquals(group.rows(partitionSummary("0", 7L)), Nil) // nothing moved
    val fired = group.rows(partitionSummary("0", 12L))
    assertEquals(results(fired.iterator), List(("a", 0L, 3L), ("b", 0L, 2L)))
  }

  test("real-time mode: the group record a loop keeps is used only for the bytes it came from") {
    val group = new RealTimeGroup
    group.call(partitionRow("a", 1L, 1L, "0"))
    group.call(partitionSummary("0", 5L))
    val before = group.value
    assertEquals(group.call(partitionSummary("0", 12L)), List(("a", 0L, 1L)))
    assertEquals(group.call(partitionSummary("0", 12L)), Nil) // writes what the firing call held
    // The batch runs again from the state before the summary (a task retried): the loop has kept
    // the record it wrote after firing, but the group holds the older one, which must fire again.
    group.value = before
    assertEquals(group.call(partitionSummary("0", 12L)), List(("a", 0L, 1L)))
    assertEquals(group.call(partitionSummary("0", 12L)), Nil) // and once only
  }
}
