package sparkwin.runtime.spark.task

import sparkwin.plan._

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.CalendarInterval

import sparkwin.core.{ArrayRecord, Record, UnheldValue, Values}

/** A Spark Row seen as an engine record, without copying: its first `length` fields (a
  * runtime's rows may carry columns of their own after the input's).
  */
final class RowRecord(val row: Row, val length: Int) extends Record {
  def this(row: Row) = this(row, row.length)
  def get(i: Int): AnyRef = row.get(i).asInstanceOf[AnyRef]
  override def isNullAt(i: Int): Boolean = row.isNullAt(i)
  override def stored(i: Int): Any = Rows.engineValue(row.get(i))
  override def unheld: UnheldValue = Rows.unheld(row)

  /** The input row itself: the row, or its first `length` fields. */
  def inputRow: Row =
    if (length == row.length) row
    else new org.apache.spark.sql.catalyst.expressions.GenericRow(Array.tabulate[Any](length)(row.get))
}

/** Conversions between Spark rows and the engine's storable values. */
object Rows {

  /** A row's fields as engine values; nested rows become records, so state never holds Spark
    * types.
    */
  def toEngine(row: Row): Array[Any] = toEngine(row, row.length)

  /** The first `length` fields of a row as engine values. */
  def toEngine(row: Row, length: Int): Array[Any] = Array.tabulate(length)(i => engineValue(row.get(i)))

  /** A field's value as the engine keeps it: nested rows become records, and so does Spark's
    * `CalendarInterval` (months, days, microseconds), which state cannot name; a value without any
    * (an array of numbers, a string) is itself, uncopied. An array's elements share one type,
    * so its first non-null one says whether it holds rows.
    */
  def engineValue(v: Any): Any = v match {
    case r: Row => new ArrayRecord(toEngine(r))
    case c: CalendarInterval => new ArrayRecord(Array[Any](c.months, c.days, c.microseconds))
    case s: scala.collection.Seq[_] => if (holdsNested(s)) s.map(engineValue).toSeq else s
    case m: scala.collection.Map[_, _] => m.map { case (k, x) => engineValue(k) -> engineValue(x) }.toMap
    case other => other
  }

  private def holdsNested(s: scala.collection.Seq[_]): Boolean =
    s.find(_ != null) match {
      case Some(_: Row) | Some(_: scala.collection.Seq[_]) | Some(_: scala.collection.Map[_, _]) |
          Some(_: CalendarInterval) =>
        true
      case _ => false
    }

  /** An engine record back to a Row of `schema` (nested records to nested rows). */
  def toRow(record: Record, schema: StructType): Row = record match {
    case r: RowRecord => r.inputRow
    case _ =>
      Row.fromSeq(schema.fields.indices.map(i => valueToSpark(record.get(i), schema.fields(i).dataType)))
  }

  /** Whether values of `t` hold rows, which the engine keeps as records ([[engineValue]]). */
  def holdsRows(t: DataType): Boolean = t match {
    case _: StructType | CalendarIntervalType => true
    case a: ArrayType => holdsRows(a.elementType)
    case m: MapType => holdsRows(m.keyType) || holdsRows(m.valueType)
    case _ => false
  }

  /** An engine value back to Spark's form for `t`: its records to rows. */
  def valueToSpark(v: Any, t: DataType): Any = (v, t) match {
    case (null, _) => null
    case (r: Record, s: StructType) => toRow(r, s)
    case (r: Record, CalendarIntervalType) =>
      new CalendarInterval(r.getLong(0).toInt, r.getLong(1).toInt, r.getLong(2))
    case (s: scala.collection.Seq[_], a: ArrayType) => s.map(valueToSpark(_, a.elementType))
    case (m: scala.collection.Map[_, _], mt: MapType) =>
      m.map { case (k, x) => valueToSpark(k, mt.keyType) -> valueToSpark(x, mt.valueType) }
    case (other, _) => other
  }

  /** The value of `row` that has no session form ([[SessionForms]]), or null. */
  def unheld(row: Row): UnheldValue = row match {
    case u: UnheldRow => u.unheld
    case _ => null
  }

  /** Epoch milliseconds of a timestamp field (Timestamp, Instant or a long of milliseconds). */
  def millis(v: Any): Long = Values.toMillis(v)

  /** A timestamp value in the form the session's encoders expect. */
  def timestamp(ms: Long, java8: Boolean): Any =
    if (java8) java.time.Instant.ofEpochMilli(ms) else new java.sql.Timestamp(ms)
}
