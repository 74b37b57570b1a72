package sparkwin.runtime.spark

import sparkwin.plan._
import sparkwin.runtime.spark._

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

import sparkwin.core.{ArrayRecord, Record, Values}

/** A Spark Row seen as an engine record, without copying: its first `length` fields (a
  * runtime's rows may carry columns of their own after the input's).
  */
final class RowRecord(val row: Row, val length: Int) extends Record {
  def this(row: Row) = this(row, row.length)
  def get(i: Int): AnyRef = row.get(i).asInstanceOf[AnyRef]
  override def isNullAt(i: Int): Boolean = row.isNullAt(i)

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
  def toEngine(row: Row, length: Int): Array[Any] = Array.tabulate(length)(i => valueToEngine(row.get(i)))

  private def valueToEngine(v: Any): Any = v match {
    case r: Row => new ArrayRecord(toEngine(r))
    case s: scala.collection.Seq[_] => s.map(valueToEngine).toSeq
    case m: scala.collection.Map[_, _] => m.map { case (k, x) => valueToEngine(k) -> valueToEngine(x) }.toMap
    case other => other
  }

  /** An engine record back to a Row of `schema` (nested records to nested rows). */
  def toRow(record: Record, schema: StructType): Row = record match {
    case r: RowRecord => r.inputRow
    case _ =>
      Row.fromSeq(schema.fields.indices.map(i => valueToSpark(record.get(i), schema.fields(i).dataType)))
  }

  private def valueToSpark(v: Any, t: DataType): Any = (v, t) match {
    case (null, _) => null
    case (r: Record, s: StructType) => toRow(r, s)
    case (s: scala.collection.Seq[_], a: ArrayType) => s.map(valueToSpark(_, a.elementType))
    case (m: scala.collection.Map[_, _], mt: MapType) =>
      m.map { case (k, x) => valueToSpark(k, mt.keyType) -> valueToSpark(x, mt.valueType) }
    case (other, _) => other
  }

  /** Epoch milliseconds of a timestamp field (Timestamp, Instant or a long of milliseconds). */
  def millis(v: Any): Long = Values.toMillis(v)

  /** A timestamp value in the form the session's encoders expect. */
  def timestamp(ms: Long, java8: Boolean): Any =
    if (java8) java.time.Instant.ofEpochMilli(ms) else new java.sql.Timestamp(ms)
}
