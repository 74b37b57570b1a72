package sparkwin.runtime.spark.task

/** A key group's record reads back as written, and anything else is refused, never misread. */
class GroupRecordSuite extends munit.FunSuite {
  private def same(a: GroupRecord, b: GroupRecord): Unit = {
    assertEquals((a.keyGroups, a.timer, a.liveKeys), (b.keyGroups, b.timer, b.liveKeys))
    assertEquals(
      a.wakeups.map(w => (w.key.toSeq, w.at, w.processingAt)),
      b.wakeups.map(w => (w.key.toSeq, w.at, w.processingAt))
    )
    assertEquals(a.channels.map(_.toSeq), b.channels.map(_.toSeq))
    assertEquals((a.processing, a.buckets), (b.processing, b.buckets))
  }

  private val record = GroupRecord(
    128,
    109999L,
    3L,
    Seq(
      Wakeup(Array[Byte](1, 2, 3), 5L),
      Wakeup(Array.fill[Byte](40)(7), Long.MaxValue),
      Wakeup(Array[Byte](9), -4L)
    )
  )

  test(
    "a key's hash is Murmur3 over its bytes as little-endian words, at any offset (buckets are addressed by it)"
  ) {
    // Scala's own Murmur3 over the range's bytes, with the seed the hash has always had: the
    // layout of every bucketed checkpoint.
    def byBytes(b: Array[Byte], from: Int, length: Int): Int =
      scala.util.hashing.MurmurHash3.bytesHash(b.slice(from, from + length), 0x3c074a61)
    val random = new scala.util.Random(63)
    (0 until 5000).foreach { _ =>
      val bytes = Array.fill(random.nextInt(40))(random.nextInt(256).toByte)
      val from = if (bytes.isEmpty) 0 else random.nextInt(bytes.length + 1)
      val length = random.nextInt(bytes.length - from + 1)
      assertEquals(KeyId.hash(bytes, from, length), byBytes(bytes, from, length), bytes.toSeq)
    }
    assertEquals(KeyId.hash(Array.emptyByteArray, 0, 0), byBytes(Array.emptyByteArray, 0, 0))
    val pinned = Array[Byte](0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, -1, 127, -128)
    assertEquals(KeyId.hash(pinned, 0, pinned.length), -1150638288)
    intercept[IndexOutOfBoundsException](KeyId.hash(pinned, 12, 8))
    intercept[IndexOutOfBoundsException](KeyId.hash(pinned, -1, 2))
  }

  test("numeric keys' bytes hash apart (a wake-up table must not pile them into a few bins)") {
    val keys = new KeyBytes(
      org.apache.spark.sql.types.StructType.fromDDL("user BIGINT")
    )
    val hashes =
      (0 until 100000).map(k => new KeyId(keys.encode(org.apache.spark.sql.Row(k.toLong))).hashCode)
    // Arrays.hashCode gave these 100,000 keys 16,226 hashes.
    assert(hashes.distinct.size > 99000, hashes.distinct.size)
  }

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
    refused(bytes.updated(0, 4.toByte), "layout 4, this sparkwin reads layouts 1 to 3")
    (0 until bytes.length).foreach(n => intercept[IllegalStateException](GroupRecord.decode(bytes.take(n))))
    refused(bytes.take(10), "it ends early")
    refused(bytes :+ 0.toByte, "1 bytes after the wake-ups")
    refused(bytes.patch(21, Array[Byte](-1, -1, -1, -1), 4), "-1 wake-ups")
    refused(bytes.patch(25, Array[Byte](0, 0, 1, 0), 4), "a key of 256 bytes")
  }

  test("with channels (layout 2) each wake-up has both times, and the channel watermarks follow") {
    val withChannels = record.copy(
      wakeups = record.wakeups.map(w => w.copy(processingAt = w.at + 7)),
      channels = Some(Array[Byte](4, 5, 6))
    )
    val bytes = GroupRecord.encode(withChannels)
    assertEquals(bytes(0), 2.toByte)
    assertEquals(bytes.length, 25 + (4 + 3 + 16) + (4 + 40 + 16) + (4 + 1 + 16) + 4 + 3)
    same(GroupRecord.decode(bytes), withChannels)
    (0 until bytes.length).foreach(n => intercept[IllegalStateException](GroupRecord.decode(bytes.take(n))))
  }

  test("with processing-time timers and no channels (layout 3) each wake-up has both times") {
    val twoClocks =
      record.copy(wakeups = record.wakeups.map(w => w.copy(processingAt = w.at - 3)), processing = true)
    val bytes = GroupRecord.encode(twoClocks)
    assertEquals(bytes(0), 3.toByte)
    assertEquals(bytes.length, 25 + (4 + 3 + 16) + (4 + 40 + 16) + (4 + 1 + 16))
    val back = GroupRecord.decode(bytes)
    same(back, twoClocks)
    assert(back.processing && back.channels.isEmpty)
    (0 until bytes.length).foreach(n => intercept[IllegalStateException](GroupRecord.decode(bytes.take(n))))
  }

  test("keys in buckets: each layout's version byte has the flag, and the bucket count follows") {
    val layouts = Seq(
      record -> 1,
      record.copy(wakeups = record.wakeups.map(w => w.copy(processingAt = w.at)), processing = true) -> 3,
      record.copy(
        wakeups = record.wakeups.map(w => w.copy(processingAt = w.at)),
        channels = Some(Array[Byte](4))
      ) -> 2
    )
    layouts.foreach { case (plain, layout) =>
      val packed = plain.copy(buckets = 37)
      val bytes = GroupRecord.encode(packed)
      assertEquals(bytes(0), (layout | GroupRecord.BucketsFlag).toByte)
      assertEquals(bytes.length, GroupRecord.encode(plain).length + 4)
      assertEquals(java.nio.ByteBuffer.wrap(bytes, 21, 4).getInt, 37)
      same(GroupRecord.decode(bytes), packed)
      (0 until bytes.length).foreach(n => intercept[IllegalStateException](GroupRecord.decode(bytes.take(n))))
    }
    val none = GroupRecord.encode(record.copy(buckets = 1)).patch(21, Array[Byte](0, 0, 0, 0), 4)
    val e = intercept[IllegalStateException](GroupRecord.decode(none))
    assert(e.getMessage.contains("0 key buckets"), e.getMessage)
  }
}
