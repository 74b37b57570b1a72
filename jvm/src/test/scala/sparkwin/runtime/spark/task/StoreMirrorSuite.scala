package sparkwin.runtime.spark.task

import org.apache.spark.sql.Row

/** A task's mirror of its state store: reads it answers are what the task last wrote or read,
  * per key group; and a real-time loop over a host that reads through it gives the same panes
  * while the store is read once per entry, not once per row.
  */
class StoreMirrorSuite extends munit.FunSuite {

  private def bytes(s: String): Array[Byte] = s.getBytes("UTF-8")

  test("a read after a write or a read is answered without the store, per key group") {
    val m = new StoreMirror(1L << 20)
    var reads = 0
    def fromStore(v: Array[Byte]): () => Array[Byte] = () => { reads += 1; v }
    assertEquals(new String(m.get(1, bytes("k"), fromStore(bytes("stored")))), "stored")
    assertEquals(new String(m.get(1, bytes("k"), fromStore(bytes("other")))), "stored")
    assertEquals(reads, 1)
    m.wrote(1, bytes("k"), bytes("new"))
    assertEquals(new String(m.get(1, bytes("k"), fromStore(bytes("other")))), "new")
    // Another group's entry under the same key bytes is its own.
    assertEquals(new String(m.get(2, bytes("k"), fromStore(bytes("two")))), "two")
    assertEquals(reads, 2)
    // A removed entry, and one read as missing, are known to be absent.
    m.wrote(1, bytes("k"), null)
    assertEquals(m.get(1, bytes("k"), fromStore(bytes("stale"))), null)
    assertEquals(m.get(3, bytes("none"), fromStore(null)), null)
    assertEquals(m.get(3, bytes("none"), fromStore(bytes("stale"))), null)
    assertEquals(reads, 3)
    assertEquals((m.hits, m.misses), (4L, 3L))
  }

  test("past its budget the mirror forgets what it held and reads the store again") {
    val m = new StoreMirror(1000L)
    var reads = 0
    val big = new Array[Byte](600)
    m.wrote(0, bytes("a"), big)
    assert(m.get(0, bytes("a"), () => { reads += 1; null }) eq big)
    m.wrote(0, bytes("b"), big) // 1,200 bytes of values: over
    assertEquals(m.get(0, bytes("a"), () => { reads += 1; bytes("store") }).length, 5)
    assertEquals(reads, 1)
  }

  private val planJson: String = LoopFixtures.tumblingPlanJson

  /** Rows of two groups, one a call, as real-time mode makes them: (panes, store reads). */
  private def run(mirror: Option[StoreMirror]): (List[(Int, String, Long, Long)], Int) = {
    val loop = new KeyGroupLoop(
      LoopFixtures.realTimeSpec(planJson, 2)
    )
    val store = new LoopFixtures.TaskStore(mirror)
    def data(user: String, amount: Long, ts: Long) = Row(user, amount, ts, "0", null)
    def summary(group: Int, max: Long) = Row(null, null, null, null, Row(group, Seq("0"), Seq(max), false, 1))
    val calls = Seq(
      0 -> data("a", 1L, 1L),
      1 -> data("b", 2L, 2L),
      0 -> data("a", 3L, 4L),
      0 -> data("c", 4L, 5L),
      1 -> data("b", 5L, 8L),
      0 -> summary(0, 12L),
      1 -> summary(1, 12L),
      0 -> summary(0, 12L), // writes what the firing call left held ([[WriteBehind]])
      1 -> summary(1, 12L),
      0 -> data("a", 7L, 13L),
      0 -> summary(0, 25L),
      1 -> summary(1, 25L)
    )
    val panes = calls.toList.flatMap { case (group, row) =>
      loop
        .call(store.host(group), Iterator(row), firing = false)
        .filter(_.getInt(0) == OutputLayout.ResultKind)
        .map(_.getStruct(1))
        .map(r => (group, r.getString(0), r.getTimestamp(1).getTime, r.getLong(4)))
        .toList
    }
    (panes, store.reads)
  }

  test("a real-time loop reading through the mirror fires the same panes, reading each entry once") {
    val (plain, plainReads) = run(None)
    val (mirrored, mirroredReads) = run(Some(new StoreMirror(1L << 20)))
    assertEquals(
      plain,
      List((0, "a", 0L, 4L), (0, "c", 0L, 4L), (1, "b", 0L, 7L), (0, "a", 10L, 7L))
    )
    assertEquals(mirrored, plain)
    // Without: the record in every call whose group holds it written (a call after a summary's
    // flush: [[WriteBehind]] answers the rest), each group's bucket once (kept decoded after,
    // [[KeptBuckets]]). With: each group's record and bucket once.
    assertEquals(plainReads, 6)
    assertEquals(mirroredReads, 4)
  }
}
