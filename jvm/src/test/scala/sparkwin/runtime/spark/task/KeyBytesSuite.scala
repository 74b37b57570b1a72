package sparkwin.runtime.spark.task

import sparkwin.plan._
import sparkwin.runtime.spark._

import java.time.{Instant, LocalDate}

import org.apache.spark.sql.Row
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

/** A key's bytes name its state: equal keys must give equal bytes, decode back to the key, and
  * stay intact however many keys are encoded after them.
  */
class KeyBytesSuite extends munit.FunSuite {
  private val schema = StructType(
    Seq(
      StructField("user", StringType),
      StructField("region", IntegerType),
      StructField("score", DoubleType),
      StructField("day", DateType),
      StructField("at", TimestampType),
      StructField("price", DecimalType(10, 2)),
      StructField("flag", BooleanType)
    )
  )

  private def key(i: Int): Row =
    Row(
      if (i % 7 == 0) null else s"user-$i-" + "x" * (i % 13),
      if (i % 5 == 0) null else i,
      i * 0.5,
      java.sql.Date.valueOf(LocalDate.of(2026, 1, 1).plusDays(i.toLong)),
      java.sql.Timestamp.from(Instant.ofEpochMilli(1700000000000L + i * 1000L)),
      new java.math.BigDecimal(s"$i.25"),
      i % 2 == 0
    )

  private def withJava8Time[T](on: Boolean)(body: => T): T = {
    val conf = new SQLConf
    conf.setConfString(SQLConf.DATETIME_JAVA8API_ENABLED.key, on.toString)
    SQLConf.withExistingConf(conf)(body)
  }

  test("keys of every common type decode back to themselves, nulls included") {
    val codec = withJava8Time(on = false)(new KeyBytes(schema))
    val keys = (0 until 200).map(key)
    val encoded = keys.map(codec.encode) // all first: each must survive the ones after it
    assertEquals(encoded.map(codec.decode), keys)
  }

  test("equal keys give equal bytes, different keys different ones, and none is empty") {
    val codec = new KeyBytes(schema)
    val once = (0 until 200).map(i => codec.encode(key(i)).toSeq)
    val again = (0 until 200).map(i => codec.encode(key(i)).toSeq)
    assertEquals(again, once)
    assertEquals(once.distinct.size, once.size)
    assert(once.forall(_.length >= 16), "the empty key is the group record's")
  }

  test("a fixed-width key's bytes are not the serializer's buffer") {
    // A row of fixed-width fields fills its buffer exactly, where handing the buffer out would
    // let the next key overwrite this one.
    val codec = new KeyBytes(StructType(Seq(StructField("id", LongType))))
    val first = codec.encode(Row(1L))
    codec.encode(Row(2L))
    assertEquals(codec.decode(first), Row(1L))
  }

  test("a timestamp key has the same bytes as java.time or java.sql objects") {
    // Switching spark.sql.datetime.java8API.enabled between runs must find the same state.
    val ts = StructType(Seq(StructField("at", TimestampType), StructField("day", DateType)))
    val instant = Instant.parse("2026-11-24T01:02:03.456Z")
    val day = LocalDate.of(2026, 11, 24)
    val modern = withJava8Time(on = true) {
      val codec = new KeyBytes(ts)
      val bytes = codec.encode(Row(instant, day))
      assertEquals(codec.decode(bytes), Row(instant, day))
      bytes.toSeq
    }
    val legacy = withJava8Time(on = false) {
      val codec = new KeyBytes(ts)
      val bytes = codec.encode(Row(java.sql.Timestamp.from(instant), java.sql.Date.valueOf(day)))
      assertEquals(codec.decode(bytes).get(0), java.sql.Timestamp.from(instant))
      bytes.toSeq
    }
    assertEquals(modern, legacy)
  }

  test("threads encoding at once each get their own encoders") {
    // One KeyBytes per task thread, as KeyGroupProcessor makes them; the encoders behind them
    // are cached, and must not be shared across threads.
    val failures = new java.util.concurrent.atomic.AtomicInteger
    val threads = (0 until 4).map { t =>
      new Thread(() => {
        val codec = new KeyBytes(schema)
        (0 until 2000).foreach { i =>
          val k = key(t * 10000 + i)
          if (codec.decode(codec.encode(k)) != k) failures.incrementAndGet()
        }
      })
    }
    threads.foreach(_.start())
    threads.foreach(_.join())
    assertEquals(failures.get, 0)
  }
}
