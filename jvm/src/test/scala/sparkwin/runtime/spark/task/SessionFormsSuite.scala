package sparkwin.runtime.spark.task

import java.time.{Instant, LocalDate}

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

import sparkwin.core.{ArrayRecord, UnheldValue}
import sparkwin.runtime.BadRecords

/** Rows are read in `java.time` forms, which hold every value Spark can, and reach the engine in
  * the session's forms, converted as Spark's own reader converts them; a value with no session
  * form marks its row (and each struct around it), and the bad-record rules say which and why.
  */
class SessionFormsSuite extends munit.FunSuite {
  private val schema = StructType(
    Seq(
      StructField("user", StringType),
      StructField("ts", TimestampType),
      StructField("day", DateType),
      StructField("times", ArrayType(TimestampType)),
      StructField("inner", StructType(Seq(StructField("at", TimestampType), StructField("n", LongType)))),
      StructField("byDay", MapType(DateType, LongType))
    )
  )

  private val MinMicros = Instant.ofEpochSecond(
    Math.floorDiv(Long.MinValue, 1000000L),
    Math.floorMod(Long.MinValue, 1000000L) * 1000L
  )
  private val MaxMicros = Instant.ofEpochSecond(
    Math.floorDiv(Long.MaxValue, 1000000L),
    Math.floorMod(Long.MaxValue, 1000000L) * 1000L
  )
  private val MinDay = LocalDate.ofEpochDay(Int.MinValue.toLong)
  private val MaxDay = LocalDate.ofEpochDay(Int.MaxValue.toLong)
  private val now = Instant.parse("2026-12-01T10:00:00.123456Z")
  private val old = Instant.parse("1500-03-01T00:00:00Z") // before the Gregorian switch: rebased
  private val today = LocalDate.of(2026, 12, 1)

  private def withJava8Time[T](on: Boolean)(body: => T): T = {
    val conf = new SQLConf
    conf.setConfString(SQLConf.DATETIME_JAVA8API_ENABLED.key, on.toString)
    SQLConf.withExistingConf(conf)(body)
  }

  private def row(ts: Instant, day: LocalDate, times: Seq[Instant], at: Instant, byDay: LocalDate): Row =
    Row("u", ts, day, times, Row(at, 1L), Map(byDay -> 2L))

  private def sql(i: Instant) = DateTimeUtils.toJavaTimestamp(DateTimeUtils.instantToMicros(i))
  private def sql(d: LocalDate) = DateTimeUtils.toJavaDate(DateTimeUtils.localDateToDays(d))

  test("values with a session form reach the engine in it, as Spark's own reader would give them") {
    val forms = withJava8Time(on = false)(new SessionForms(schema))
    val read = forms(row(old, MaxDay, Seq(now, MaxMicros), now, today))
    assertEquals(Rows.unheld(read), null)
    assertEquals(read.get(1), sql(old))
    assert(read.get(1).isInstanceOf[java.sql.Timestamp])
    assertEquals(read.get(2), sql(MaxDay))
    assertEquals(read.getSeq[Any](3), Seq(sql(now), sql(MaxMicros)))
    assertEquals(read.getStruct(4).get(0), sql(now))
    assertEquals(read.getMap[Any, Any](5).keySet, Set[Any](sql(today)))
    // The engine's event time is what it was before sparkwin read java.time: the rebased millis.
    assertEquals(Rows.millis(read.get(1)), sql(old).getTime)
  }

  test("a value with no session form marks its row, and the struct that holds it") {
    val forms = withJava8Time(on = false)(new SessionForms(schema))
    val cases = Seq(
      row(MinMicros, today, Nil, now, today) -> UnheldValue(
        "ts",
        s"the timestamp $MinMicros",
        "java.sql.Timestamp"
      ),
      row(now, MinDay, Nil, now, today) -> UnheldValue("day", s"the date $MinDay", "java.sql.Date"),
      row(now, today, Seq(now, MinMicros), now, today) ->
        UnheldValue("times", s"the timestamp $MinMicros", "java.sql.Timestamp"),
      row(now, today, Nil, MinMicros.plusSeconds(86400L * 100), today) ->
        UnheldValue("inner", s"the timestamp ${MinMicros.plusSeconds(86400L * 100)}", "java.sql.Timestamp"),
      row(now, today, Nil, now, MinDay.plusDays(10)) ->
        UnheldValue("byDay", s"the date ${MinDay.plusDays(10)}", "java.sql.Date")
    )
    for ((input, unheld) <- cases) {
      val read = forms(input)
      assertEquals(Rows.unheld(read), unheld)
      val record = new RowRecord(read)
      val why = BadRecords.reason(record, 1, arrivalMissing = false, channelMissing = false)
      assertEquals(
        why,
        s"column '${unheld.column}' holds ${unheld.value}, which Spark holds but a ${unheld.form} cannot " +
          "(the rebase to its calendar overflows); set spark.sql.datetime.java8API.enabled=true to read " +
          "times as java.time, which holds every value Spark can"
      )
      // The error row is the row as read, the unheld value in its java.time form.
      assert(Rows.toRow(record, schema) eq read)
    }
    assertEquals(forms(cases(0)._1).get(1), MinMicros)
    assertEquals(forms(cases(1)._1).get(2), MinDay)
    assertEquals(forms(cases(2)._1).getSeq[Any](3), Seq(sql(now), MinMicros))
    assertEquals(
      Rows.unheld(forms(cases(3)._1).getStruct(4)),
      cases(3)._2.copy(column = "at"),
      "the struct itself"
    )
  }

  test("a session that reads java.time takes every row as it is") {
    val forms = withJava8Time(on = true)(new SessionForms(schema))
    assert(forms.identity)
    val input = row(MinMicros, MinDay, Seq(MinMicros), MinMicros, MinDay)
    assert(forms(input) eq input)
    assertEquals(
      BadRecords.reason(new RowRecord(input), 1, false, false),
      sparkwin.core.EventTime.outOfRange(input.getAs[Instant](1).toEpochMilli)
    )
  }

  test("what sparkwin writes takes either form, and an unheld value leaves exactly as it came") {
    val writer = SessionForms.writer(schema).asInstanceOf[ExpressionEncoder[Row]].resolveAndBind()
    val reader = withJava8Time(on = true)(SessionForms.reader(schema))
      .asInstanceOf[ExpressionEncoder[Row]]
      .resolveAndBind()
    val toBytes = writer.createSerializer()
    val fromBytes = reader.createDeserializer()
    val forms = withJava8Time(on = false)(new SessionForms(schema))
    val input = row(MinMicros, MinDay, Seq(MaxMicros, MinMicros), now, MinDay)
    val read = forms(input)
    assert(Rows.unheld(read) != null)
    val back = fromBytes(toBytes(read).copy())
    assertEquals(back.get(1), MinMicros)
    assertEquals(back.get(2), MinDay)
    assertEquals(back.getSeq[Any](3), Seq(MaxMicros, MinMicros))
    assertEquals(back.getStruct(4).get(0), now)
    assertEquals(back.getMap[Any, Any](5).keySet, Set[Any](MinDay))
  }

  test("Spark's calendar intervals are kept as records and given back as they were") {
    val ci = new org.apache.spark.unsafe.types.CalendarInterval(Int.MaxValue, Int.MinValue, Long.MinValue)
    val kept = Rows.engineValue(ci)
    assert(kept.isInstanceOf[ArrayRecord], kept)
    assertEquals(Rows.valueToSpark(kept, CalendarIntervalType), ci)
    assert(Rows.holdsRows(ArrayType(CalendarIntervalType)))
  }
}
