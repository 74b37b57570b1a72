package sparkwin.runtime.spark.task

import java.io.{ByteArrayOutputStream, DataInputStream, DataOutputStream}
import java.time.{Duration, Instant, LocalDate, Period}

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._
import org.scalacheck.Gen

import sparkwin.Fuzz
import sparkwin.core.ArrayRecord
import sparkwin.operator.store.{ByteSource, ValueCodec}
import sparkwin.runtime.BadRecords

/** Rows from users sparkwin does not trust to stay inside the usual ranges: every value Spark can
  * hold, at the edges of each type (timestamps and dates at both ends of Spark's range, decimals
  * of 38 digits, intervals at their ends, NaN, infinite and negative zero doubles and floats,
  * arrays, structs and maps of them, Spark's calendar intervals, nulls), as Spark hands them over, are read the way the runtimes read them
  * ([[SessionForms]]), then either taken (kept in state by the codec, given back unchanged) or
  * sent to errors as they came with the bad-record rules' reason: never an exception, in a
  * session reading `java.sql` times and in one reading `java.time`.
  */
class TypedValueFuzzSuite extends munit.FunSuite {
  // Each input has the runner's own time limit; the run's first rows wait for Spark's code
  // generation, which a loaded machine can stretch past munit's 30 s.
  override val munitTimeout: scala.concurrent.duration.Duration = scala.concurrent.duration.Duration(3, "min")

  private val tsAt = 1

  private val schema = StructType(
    Seq(
      StructField("user", StringType),
      StructField("ts", TimestampType),
      StructField("day", DateType),
      StructField("dec", DecimalType(38, 9)),
      StructField("dti", DayTimeIntervalType()),
      StructField("ymi", YearMonthIntervalType()),
      StructField("ntz", TimestampNTZType),
      StructField("times", ArrayType(TimestampType)),
      StructField("nested", StructType(Seq(StructField("at", TimestampType), StructField("on", DateType)))),
      StructField("byDay", MapType(DateType, TimestampType)),
      StructField("ci", CalendarIntervalType),
      StructField("x", DoubleType),
      StructField("f", FloatType),
      StructField("xs", ArrayType(DoubleType))
    )
  )

  private def instant(micros: Long): Instant =
    Instant.ofEpochSecond(Math.floorDiv(micros, 1000000L), Math.floorMod(micros, 1000000L) * 1000L)

  private val Day = 86400000000L
  private val micros: Gen[Long] = Gen.frequency(
    2 -> Gen.oneOf(
      Seq(Long.MinValue, Long.MinValue + 1, Long.MinValue + 2300 * Day, Long.MinValue + 2400 * Day) ++
        Seq(-62135596800000001L, -62135596800000000L, -1L, 0L, 253402300799999999L, 253402300800000000L) ++
        Seq(Long.MaxValue - 2400 * Day, Long.MaxValue - 1, Long.MaxValue)
    ),
    4 -> Gen.choose(-62135596800000000L, 253402300799999999L), // 0001..9999
    2 -> Gen.choose(Long.MinValue, Long.MaxValue),
    1 -> Gen.choose(Long.MinValue, Long.MinValue + 4000 * Day)
  )
  private val days: Gen[Int] = Gen.frequency(
    2 -> Gen.oneOf(
      Int.MinValue,
      Int.MinValue + 1,
      Int.MinValue + 3000,
      -719163,
      -719162,
      0,
      2932896,
      2932897,
      Int.MaxValue
    ),
    4 -> Gen.choose(-719162, 2932896), // 0001..9999
    2 -> Gen.choose(Int.MinValue, Int.MaxValue),
    1 -> Gen.choose(Int.MinValue, Int.MinValue + 5000)
  )
  private val decimals: Gen[java.math.BigDecimal] = Gen.oneOf(
    Gen.const(new java.math.BigDecimal("99999999999999999999999999999.999999999")),
    Gen.const(new java.math.BigDecimal("-99999999999999999999999999999.999999999")),
    Gen.const(new java.math.BigDecimal("0.000000001")),
    Gen.choose(Long.MinValue, Long.MaxValue).map(l => java.math.BigDecimal.valueOf(l, 9))
  )
  private val doubles: Gen[Double] = Gen.frequency(
    2 -> Gen.oneOf(
      Double.NaN,
      Double.PositiveInfinity,
      Double.NegativeInfinity,
      -0.0,
      Double.MinPositiveValue,
      Double.MaxValue,
      -Double.MaxValue
    ),
    1 -> Gen.choose(Long.MinValue, Long.MaxValue).map(java.lang.Double.longBitsToDouble)
  )
  private val floats: Gen[Float] = Gen.frequency(
    2 -> Gen.oneOf(Float.NaN, Float.PositiveInfinity, Float.NegativeInfinity, -0.0f, Float.MinPositiveValue),
    1 -> Gen.choose(Int.MinValue, Int.MaxValue).map(java.lang.Float.intBitsToFloat)
  )
  private def orNull[T](g: Gen[T]): Gen[Any] = Gen.frequency(9 -> g, 1 -> Gen.const(null))

  /** A row as Spark holds it, its values in java.time forms (which hold every one). */
  private val rows: Gen[Row] = for {
    ts <- orNull(micros.map(instant))
    day <- orNull(days.map(d => LocalDate.ofEpochDay(d.toLong)))
    dec <- orNull(decimals)
    dti <- orNull(
      micros.map(m => Duration.ofSeconds(Math.floorDiv(m, 1000000L), Math.floorMod(m, 1000000L) * 1000L))
    )
    ymi <- orNull(Gen.choose(Int.MinValue, Int.MaxValue).map(m => Period.ofMonths(m).normalized()))
    ntz <- orNull(
      micros.map(m =>
        java.time.LocalDateTime.ofEpochSecond(
          Math.floorDiv(m, 1000000L),
          (Math.floorMod(m, 1000000L) * 1000L).toInt,
          java.time.ZoneOffset.UTC
        )
      )
    )
    times <- orNull(Gen.listOfN(3, orNull(micros.map(instant))))
    at <- orNull(micros.map(instant))
    on <- orNull(days.map(d => LocalDate.ofEpochDay(d.toLong)))
    byDay <- orNull(
      Gen.mapOfN(2, for (d <- days; m <- micros) yield LocalDate.ofEpochDay(d.toLong) -> instant(m))
    )
    ci <- orNull(
      for (
        m <- Gen.choose(Int.MinValue, Int.MaxValue); d <- Gen.choose(Int.MinValue, Int.MaxValue); u <- micros
      ) yield new org.apache.spark.unsafe.types.CalendarInterval(m, d, u)
    )
    x <- orNull(doubles)
    f <- orNull(floats)
    xs <- orNull(Gen.listOfN(3, orNull(doubles)))
  } yield Row("u", ts, day, dec, dti, ymi, ntz, times, Row(at, on), byDay, ci, x, f, xs)

  private def conf(java8: Boolean): SQLConf = {
    val c = new SQLConf
    c.setConfString(SQLConf.DATETIME_JAVA8API_ENABLED.key, java8.toString)
    c
  }

  // As Spark holds them (InternalRow), and as a runtime reads and writes them.
  private val toInternal = SQLConf.withExistingConf(conf(true)) {
    ExpressionEncoder(RowEncoder.encoderFor(schema, true)).resolveAndBind().createSerializer()
  }
  private val read = SQLConf.withExistingConf(conf(false)) {
    SessionForms.reader(schema).asInstanceOf[ExpressionEncoder[Row]].resolveAndBind().createDeserializer()
  }
  private val written = SQLConf.withExistingConf(conf(false)) {
    SessionForms.writer(schema).asInstanceOf[ExpressionEncoder[Row]].resolveAndBind().createSerializer()
  }

  /** One row through a runtime, with the session reading `java8` times: the fate it gets. */
  private def through(java8: Boolean)(row: Row): String = {
    val held: InternalRow = toInternal(row).copy()
    val forms = SQLConf.withExistingConf(conf(java8))(new SessionForms(schema))
    val record = new RowRecord(forms(read(held)))
    val why = BadRecords.reason(record, tsAt, arrivalMissing = false, channelMissing = false)
    if (why == null) {
      // Taken: what state keeps of it reads back, and what leaves is what came.
      val kept = new ArrayRecord(Rows.toEngine(record.row))
      val out = new ByteArrayOutputStream()
      ValueCodec.write(new DataOutputStream(out), kept)
      val source = new ByteSource
      source.point(out.toByteArray)
      val back = ValueCodec.read(new DataInputStream(source)).asInstanceOf[ArrayRecord]
      val again = Rows.toRow(back, schema)
      assertEquals(written(again).copy(), held, s"kept and given back: $row")
      "taken"
    } else {
      // An error row: the row as it came, whatever the reason.
      assertEquals(written(Rows.toRow(record, schema)).copy(), held, s"as it came: $row ($why)")
      if (record.unheld != null) "unheld" else "errors"
    }
  }

  for (java8 <- Seq(false, true))
    test(
      s"fuzz typed values at the edges of Spark's ranges (java8API $java8): taken, or errors as they came"
    ) {
      val fates = scala.collection.mutable.Map.empty[String, Int].withDefaultValue(0)
      // Spark generates the encoders' code at their first row, and reads its calendar rebase
      // tables at its first old time: not a row's time to answer.
      val old = instant(-15000000000000000L)
      through(java8)(
        Row(
          "u",
          old,
          LocalDate.of(1500, 1, 1),
          null,
          null,
          null,
          null,
          Seq(old),
          Row(old, null),
          null,
          null,
          null,
          null,
          null
        )
      )
      val outcome = Fuzz.run(
        s"typed values, java8API $java8",
        Fuzz.cases(500),
        rows,
        (_: Row) => 1,
        (r: Row) => r.toString,
        _ => 256L << 20
      )(_ => false) { r => fates(through(java8)(r)) += 1 }
      println(s"  fates: ${fates.toSeq.sorted.map { case (k, n) => s"$k $n" }.mkString(", ")}")
      Fuzz.passed(outcome)
      assert(fates("taken") > 0 && fates("errors") > 0, fates)
      if (!java8) assert(fates("unheld") > 0, fates)
    }
}
