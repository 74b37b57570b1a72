package sparkwin.runtime.spark.task

import java.io.{ByteArrayOutputStream, DataInputStream, DataOutputStream}

import sparkwin.Fuzz
import sparkwin.core.{CorruptStateException, IncompatibleStateException}
import sparkwin.core.time.{ChannelWatermarks, WatermarkStrategy}
import sparkwin.operator.store.ByteSource
import sparkwin.runtime.spark.query.KeyGroupCount

/** The Spark runtime's own layouts from bytes sparkwin does not trust: a key group's record,
  * a key bucket, Spark 3.5's group value and the channel watermarks, each mutated from valid
  * values, are read or refused with a [[CorruptStateException]] naming the layout and the
  * offset, never another exception, a hang, or an allocation the bytes cannot back.
  */
class LayoutFuzzSuite extends munit.FunSuite {
  private def bound(length: Int): Long = (1L << 20) + 256L * length
  private def typed(e: Throwable): Boolean =
    e.isInstanceOf[CorruptStateException] || e.isInstanceOf[IncompatibleStateException]

  private def key(i: Int): Array[Byte] =
    java.nio.ByteBuffer.allocate(16).putLong(0L).putLong(i.toLong).array()

  private def channelBytes(c: ChannelWatermarks): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    c.write(new DataOutputStream(out))
    out.toByteArray
  }

  private val strategy = WatermarkStrategy.forBoundedOutOfOrderness(4).copy(idleTimeout = Some(1000))

  private val channels: Seq[Array[Byte]] = {
    val c = ChannelWatermarks(strategy, Seq("p0", "p1"))
    val first = channelBytes(c)
    c.boundary(100, Seq("p0" -> 50L, "p1" -> 30L, "ü" -> 7L))
    val second = channelBytes(c)
    c.boundary(5000, Nil)
    Seq(first, second, channelBytes(c))
  }

  private val records: Seq[Array[Byte]] = {
    val wakeups = (1 to 5).map(i => Wakeup(key(i), i * 10L, if (i % 2 == 0) i * 100L else Long.MaxValue))
    Seq(
      GroupRecord(128, 109999L, 3L, wakeups.take(3).map(_.copy(processingAt = Long.MaxValue))),
      GroupRecord(1, Long.MinValue, 0L, Nil),
      GroupRecord(64, 5L, 5L, wakeups, channels = Some(channels(1))),
      GroupRecord(64, 5L, 5L, wakeups, processing = true, buckets = 3),
      GroupRecord(64, 5L, 5L, Nil, processing = true, buckets = 3, index = Some(indexOf(wakeups)._1)),
      GroupRecord(8, 5L, 5L, Nil, channels = Some(channels(0)), index = Some(indexOf(wakeups)._1))
    ).map(GroupRecord.encode)
  }

  /** An index of these wake-ups (over 2 s: two buckets a clock) and the store with its pages. */
  private def indexOf(wakeups: Seq[Wakeup], spread: Long = 100): (WakeupIndex, Store) = {
    val store = new Store
    val index = WakeupIndex.of(store, wakeups.map(w => w.copy(at = w.at * spread)))
    index.flush(store)
    (index, store)
  }

  test("fuzz GroupRecord: a mutated record reads, or is refused as corrupt") {
    records.foreach(GroupRecord.decode)
    Fuzz.bytes("GroupRecord", Fuzz.cases(3000), Fuzz.mutatedBytes(records), bound)(typed)(b =>
      GroupRecord.decode(b)
    )
  }

  /** A key group's store with the entries of one call of [[KeyBuckets]]. */
  private final class Store extends GroupHost {
    val entries = new java.util.HashMap[KeyId, Array[Byte]]()
    def get(key: Array[Byte]): Array[Byte] = entries.get(new KeyId(key))
    def put(key: Array[Byte], value: Array[Byte]): Unit = entries.put(new KeyId(key), value)
    def remove(key: Array[Byte]): Unit = entries.remove(new KeyId(key))
    def packsKeys: Boolean = true
    def watermark: Long = 0L
    def batchTime: Long = 0L
    def timer(current: Long, wanted: Long, firing: Boolean): Unit = ()
  }

  test("fuzz KeyBuckets: a mutated bucket reads, or is refused as corrupt") {
    val store = new Store
    val buckets = new KeyBuckets(store, 1, 0L)
    (0 until 40).foreach(i => buckets.put(key(i), Array.fill(i % 7)(i.toByte)))
    buckets.flush()
    val count = buckets.count
    val valid = (0 until count).map(i => store.get(KeyBuckets.entryKey(i))).filter(_ != null)
    assert(valid.nonEmpty)
    Fuzz.bytes("KeyBuckets", Fuzz.cases(3000), Fuzz.mutatedBytes(valid), bound)(typed) { b =>
      val one = new Store
      one.put(KeyBuckets.entryKey(0), b)
      val read = new KeyBuckets(one, 1, 40L)
      (0 until 40).foreach(i => read.get(key(i)))
    }
  }

  test("fuzz WakeupIndex pages: a mutated page reads, or is refused as corrupt") {
    val wakeups = (1 to 40).map(i => Wakeup(key(i), 500L + i, Long.MaxValue))
    val (index, store) = indexOf(wakeups, spread = 1)
    val record = GroupRecord.write(1, 0L, 0L, WakeupTable.empty(false), None, false, 0, index)
    val pageKeys = store.entries.keySet.toArray.map(_.asInstanceOf[KeyId].bytes).filter(_.length == 14)
    assertEquals(pageKeys.length, 2) // 40 wake-ups in one bucket: two pages
    val valid = pageKeys.toSeq.map(store.get)
    Fuzz.bytes("WakeupIndex page", Fuzz.cases(3000), Fuzz.mutatedBytes(valid), bound)(typed) { b =>
      val one = new Store
      pageKeys.foreach(k => one.put(k, b))
      val read = GroupRecord.read(record).index
      read.takeDue(one, (_, _) => true)
      read.add(one, WakeupIndex.Event, key(3), 1200L)
      read.flush(one)
    }
  }

  test("fuzz GroupTable (Spark 3.5's group value): a mutated value reads, or is refused as corrupt") {
    val t = GroupTable.empty()
    t.put(Array.emptyByteArray, records.head)
    (0 until 20).foreach(i => t.put(key(i), Array.fill(i)(i.toByte)))
    val valid =
      Seq(t.encode(), { val one = GroupTable.empty(); one.put(key(1), Array[Byte](1)); one.encode() })
    Fuzz.bytes("GroupTable", Fuzz.cases(3000), Fuzz.mutatedBytes(valid), bound)(typed) { b =>
      val read = GroupTable.read(b)
      (0 until 20).foreach(i => read.get(key(i)))
      read.put(key(3), Array[Byte](3))
      read.encode()
    }
  }

  test("fuzz key bytes: a mutated key of values at the edges of Spark's types reads, or is refused") {
    // Spark reads an UnsafeRow through raw memory: before its layout was checked, a mutated
    // offset read outside the array and crashed the JVM (SIGSEGV) within the first inputs.
    import org.apache.spark.sql.Row
    import org.apache.spark.sql.types._
    val schema = StructType(
      Seq(
        StructField("user", StringType),
        StructField("at", TimestampType),
        StructField("day", DateType),
        StructField("big", DecimalType(38, 9)),
        StructField("small", DecimalType(10, 2)),
        StructField("span", DayTimeIntervalType()),
        StructField("tags", ArrayType(StringType)),
        StructField("inner", StructType(Seq(StructField("name", StringType), StructField("n", LongType)))),
        StructField("byName", MapType(StringType, ArrayType(LongType))),
        StructField("ci", CalendarIntervalType)
      )
    )
    val codec = new KeyBytes(schema)
    val far = new java.sql.Timestamp(Long.MaxValue / 1000); far.setNanos(775807000)
    val keys = Seq(
      Row(
        "u-1",
        far,
        new java.sql.Date(Int.MaxValue.toLong * 86400000L),
        new java.math.BigDecimal("-99999999999999999999999999999.999999999"),
        new java.math.BigDecimal("12345678.91"),
        java.time.Duration.ofSeconds(Long.MaxValue / 1000000L),
        Seq("a", null, "ü⏱𝄞"),
        Row("x" * 40, Long.MinValue),
        Map("k" -> Seq(1L, Long.MaxValue), "" -> Seq()),
        new org.apache.spark.unsafe.types.CalendarInterval(Int.MinValue, Int.MaxValue, Long.MinValue)
      ),
      Row(null, null, null, null, null, null, null, null, null, null),
      Row(
        "",
        new java.sql.Timestamp(0L),
        null,
        java.math.BigDecimal.ZERO,
        null,
        null,
        Seq(),
        Row(null, 0L),
        Map(),
        null
      )
    )
    val valid = keys.map(codec.encode)
    assertEquals(valid.map(b => codec.encode(codec.decode(b)).toSeq), valid.map(_.toSeq)) // each reads back
    // Spark loads its error messages (8 MB) at its first error (here a date no java.sql.Date
    // holds, which mutated bytes make): once per JVM, not an input's allocation.
    val unheld = codec.encode(
      Row(
        null,
        null,
        java.time.LocalDate.ofEpochDay(Int.MinValue.toLong),
        null,
        null,
        null,
        null,
        null,
        null,
        null
      )
    )
    intercept[CorruptStateException](codec.decode(unheld))
    Fuzz.bytes("KeyBytes", Fuzz.cases(3000), Fuzz.mutatedBytes(valid), bound)(typed)(codec.decode)
  }

  test("fuzz channel watermarks: mutated saved watermarks read, or are refused as corrupt") {
    Fuzz.bytes("ChannelWatermarks", Fuzz.cases(3000), Fuzz.mutatedBytes(channels), bound)(typed) { b =>
      val source = new ByteSource
      source.point(b)
      CorruptStateException.reading("a key group's channel watermarks", b.length, () => source.position) {
        ChannelWatermarks.read(strategy, new DataInputStream(source), Seq("p0"))
      }
    }
  }

  test("fuzz the checkpoint's key-group count file: mutated text is a count, or a PlanException") {
    val valid =
      Seq(KeyGroupCount.text(128), "# sparkwin\n" + KeyGroupCount.text(32768)).map(_.getBytes("UTF-8"))
    Fuzz.bytes("Checkpoints key-group count", Fuzz.cases(3000), Fuzz.mutatedBytes(valid), bound)(
      _.isInstanceOf[sparkwin.plan.PlanException]
    ) { b =>
      val n = KeyGroupCount.parse(new String(b, "UTF-8"), "the kept file")
      assert(n >= 1 && n <= KeyGroupCount.Max, n)
    }
  }
}
