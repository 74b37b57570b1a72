package sparkwin.runtime.spark.task

import org.apache.spark.sql.{Column, Encoder, Row}
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

import sparkwin.core.UnheldValue

/** How sparkwin reads a user's rows: every value Spark can hold reaches the engine, or the errors
  * output as it came, never a task's failure.
  *
  * Spark hands a `Row` its timestamps and dates as `java.sql.Timestamp` and `java.sql.Date`
  * unless the session asks for `java.time` (`spark.sql.datetime.java8API.enabled`), rebasing
  * them to the hybrid Julian calendar on the way. Some values Spark holds do not survive that:
  * `timestamp_micros(Long.MinValue)` and the days after it, and the dates near
  * `date_from_unix_date(Int.MinValue)`, overflow the rebase (an `ArithmeticException` in Spark's
  * own reader, before any code of ours runs), and on a stream that record is read again after
  * every restart. So sparkwin reads rows in `java.time` forms, which hold every such value
  * ([[reader]]), and turns each into the session's form itself with Spark's own conversion
  * ([[SessionForms]]): the engine sees exactly what Spark's reader would have given it, and a
  * value that has no session form marks its row (an [[UnheldRow]], naming the row's column that
  * holds it), which the bad-record rules
  * send to the errors output as it came (`runtime.BadRecords`). What sparkwin writes takes either
  * form ([[writer]]).
  */
object SessionForms {

  /** The encoder sparkwin reads rows of `schema` with: `java.time` timestamps and dates at every
    * depth, whatever the session says (made on the driver, under its conf with the java8 API on).
    */
  def reader(schema: StructType): Encoder[Row] = {
    val conf = SQLConf.get.clone()
    conf.setConf(SQLConf.DATETIME_JAVA8API_ENABLED, true)
    SQLConf.withExistingConf(conf)(ExpressionEncoder(RowEncoder.encoderFor(schema, true)))
  }

  /** The encoder for rows sparkwin writes: the session's forms, and `java.time` ones where an
    * error row carries a value as it came.
    */
  def writer(schema: StructType): Encoder[Row] = ExpressionEncoder(RowEncoder.encoderFor(schema, true))

  /** Whether `c` (of type `t`) holds a timestamp or a date outside Spark's documented range,
    * 0001-01-01..9999-12-31, at any depth: where every value without a session form lies far
    * outside. A pre-aggregating map side keeps such a row whole, so the engine reads it as an
    * element would be read (`SparkRuntime.combinerColumns`).
    */
  def farTimes(c: Column, t: DataType): Column = {
    import org.apache.spark.sql.functions.{exists, lit, map_keys, map_values, unix_date, unix_micros}
    val far: Option[Column] = t match {
      case TimestampType => Some(!unix_micros(c).between(MinMicros, MaxMicros))
      case DateType => Some(!unix_date(c).between(MinDay, MaxDay))
      case s: StructType if holdsDateTime(s) =>
        Some(
          s.fields
            .filter(f => holdsDateTime(f.dataType))
            .map(f => farTimes(c.getField(f.name), f.dataType))
            .reduce(_ || _)
        )
      case a: ArrayType if holdsDateTime(a) => Some(exists(c, x => farTimes(x, a.elementType)))
      case m: MapType if holdsDateTime(m) =>
        Some(exists(map_keys(c), farTimes(_, m.keyType)) || exists(map_values(c), farTimes(_, m.valueType)))
      case _ => None
    }
    far.fold(lit(false))(f => org.apache.spark.sql.functions.coalesce(f, lit(false)))
  }

  private val MinMicros = sparkwin.core.EventTime.Min * 1000L
  private val MaxMicros = sparkwin.core.EventTime.Max * 1000L + 999L
  private val MinDay = Math.floorDiv(sparkwin.core.EventTime.Min, 86400000L)
  private val MaxDay = Math.floorDiv(sparkwin.core.EventTime.Max, 86400000L)

  /** Whether values of `t` hold a timestamp or a date (the types read in another form). */
  def holdsDateTime(t: DataType): Boolean = t match {
    case TimestampType | DateType => true
    case s: StructType => s.fields.exists(f => holdsDateTime(f.dataType))
    case a: ArrayType => holdsDateTime(a.elementType)
    case m: MapType => holdsDateTime(m.keyType) || holdsDateTime(m.valueType)
    case _ => false
  }
}

/** A row one of whose values has no session form: its values as read (that one in its
  * `java.time` form), and which value it is.
  */
final class UnheldRow(values: Array[Any], val unheld: UnheldValue) extends GenericRow(values)

/** Rows of `schema` read by [[SessionForms.reader]], in the forms the session's own reader gives
  * (every field, at every depth): `java.sql` timestamps and dates, converted by Spark's own
  * functions, unless the session reads `java.time` (then rows pass as they are). A row with a
  * value that has none is an [[UnheldRow]], and so is each struct inside it that holds one. Made
  * where rows are read (an executor's task); the session's setting comes with the task.
  */
final class SessionForms(schema: StructType) extends (Row => Row) {
  private val java8 = SQLConf.get.datetimeJava8ApiEnabled
  private val fields = schema.fields
  // The fields to convert; none when the session reads java.time or nothing holds a time.
  private val timed: Array[Int] =
    if (java8) Array.empty
    else fields.indices.filter(i => SessionForms.holdsDateTime(fields(i).dataType)).toArray
  private var column: String = _ // the top-level field being converted
  private var found: UnheldValue = _ // the first value of this row without a session form

  /** Whether rows pass unchanged. */
  def identity: Boolean = timed.isEmpty

  def apply(row: Row): Row =
    if (timed.isEmpty || row == null) row
    else {
      found = null
      val values = new Array[Any](row.length)
      var i = 0
      while (i < values.length) { values(i) = row.get(i); i += 1 }
      i = 0
      while (i < timed.length) {
        val at = timed(i)
        column = fields(at).name
        values(at) = form(values(at), fields(at).dataType)
        i += 1
      }
      if (found == null) new GenericRow(values) else new UnheldRow(values, found)
    }

  /** `v` of type `t` in the session's form; as it is (and noted in `found`) where it has none. */
  private def form(v: Any, t: DataType): Any = (v, t) match {
    case (null, _) => null
    case (i: java.time.Instant, TimestampType) =>
      try DateTimeUtils.toJavaTimestamp(DateTimeUtils.instantToMicros(i))
      catch { case _: ArithmeticException => unheld(i, s"the timestamp $i", "java.sql.Timestamp") }
    case (d: java.time.LocalDate, DateType) =>
      try DateTimeUtils.toJavaDate(DateTimeUtils.localDateToDays(d))
      catch { case _: ArithmeticException => unheld(d, s"the date $d", "java.sql.Date") }
    case (r: Row, s: StructType) =>
      // The struct's own value names its own field; the row around it, its column.
      val (outer, outerColumn) = (found, column)
      found = null
      val values = new Array[Any](r.length)
      var i = 0
      while (i < values.length) {
        column = s.fields(i).name
        values(i) = form(r.get(i), s.fields(i).dataType)
        i += 1
      }
      val inner = found
      column = outerColumn
      found = if (outer != null || inner == null) outer else inner.copy(column = outerColumn)
      if (inner == null) new GenericRow(values) else new UnheldRow(values, inner)
    case (seq: scala.collection.Seq[_], a: ArrayType) => seq.map(form(_, a.elementType)).toIndexedSeq
    case (m: scala.collection.Map[_, _], mt: MapType) =>
      m.map { case (k, x) => form(k, mt.keyType) -> form(x, mt.valueType) }.toMap
    case (other, _) => other
  }

  private def unheld(value: Any, what: String, form: String): Any = {
    if (found == null) found = UnheldValue(column, what, form)
    value
  }
}
