package sparkwin.runtime.spark

import sparkwin.plan._
import sparkwin.runtime.spark._

/** A key group's record reads back as written, and anything else is refused, never misread. */
class GroupRecordSuite extends munit.FunSuite {
  private def same(a: GroupRecord, b: GroupRecord): Unit = {
    assertEquals((a.keyGroups, a.timer, a.liveKeys), (b.keyGroups, b.timer, b.liveKeys))
    assertEquals(
      a.wakeups.map { case (k, at) => (k.toSeq, at) },
      b.wakeups.map { case (k, at) => (k.toSeq, at) }
    )
  }

  private val record = GroupRecord(
    128,
    109999L,
    3L,
    Seq(Array[Byte](1, 2, 3) -> 5L, Array.fill[Byte](40)(7) -> Long.MaxValue, Array[Byte](9) -> -4L)
  )

  test("records read back as written, wake-ups in order") {
    same(GroupRecord.decode(GroupRecord.encode(record)), record)
    val bare = GroupRecord(1, Long.MinValue, 0L, Nil)
    same(GroupRecord.decode(GroupRecord.encode(bare)), bare)
  }

  test("the layout is version 1: 25 bytes of header, then each wake-up's length, key and time") {
    val bytes = GroupRecord.encode(record)
    assertEquals(bytes(0), 1.toByte)
    assertEquals(bytes.length, 25 + (4 + 3 + 8) + (4 + 40 + 8) + (4 + 1 + 8))
  }

  test("another version, a cut, trailing bytes or bad counts are refused with what is wrong") {
    val bytes = GroupRecord.encode(record)
    def refused(b: Array[Byte], why: String): Unit = {
      val e = intercept[IllegalStateException](GroupRecord.decode(b))
      assert(e.getMessage.contains(why), e.getMessage)
      assert(e.getMessage.contains(s"of ${b.length} bytes"), e.getMessage)
    }
    refused(bytes.updated(0, 2.toByte), "layout 2, this sparkwin reads layout 1")
    (0 until bytes.length).foreach(n => intercept[IllegalStateException](GroupRecord.decode(bytes.take(n))))
    refused(bytes.take(10), "it ends early")
    refused(bytes :+ 0.toByte, "1 bytes after the wake-ups")
    refused(bytes.patch(21, Array[Byte](-1, -1, -1, -1), 4), "-1 wake-ups")
    refused(bytes.patch(25, Array[Byte](0, 0, 1, 0), 4), "a key of 256 bytes")
  }
}
