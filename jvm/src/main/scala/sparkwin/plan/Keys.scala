package sparkwin.plan

import org.apache.spark.sql.{Column, Row}
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.types.{IntegerType, StructField, StructType}

import sparkwin.core.{ArrayRecord, Record}

/** A pipeline's key, in one place. Keyed pipelines group by their key columns; `windowAll`
  * groups the whole stream under one constant stand-in key, which Spark groups by and the
  * engine keys state by, but which never reaches an output row.
  */
final class Keys(val columns: IndexedSeq[Int], inputSchema: StructType) extends Serializable {

  def isWindowAll: Boolean = columns.isEmpty

  /** The key columns as they appear in output rows (none for windowAll). */
  val outputFields: IndexedSeq[StructField] = columns.map(inputSchema.fields(_))

  /** What the runtimes group by: the key columns, or the stand-in. */
  val fields: IndexedSeq[StructField] = if (isWindowAll) IndexedSeq(Keys.StandIn) else outputFields

  def schema: StructType = StructType(fields)

  /** The grouping expressions over the input's columns. */
  def groupingColumns: Seq[Column] =
    if (isWindowAll) Seq(lit(0).as(Keys.StandIn.name)) else outputFields.map(f => col(s"`${f.name}`"))

  /** The key of an input record, as a row of [[fields]]. */
  def of(record: Record): Row =
    if (isWindowAll) Keys.All
    else {
      val values = new Array[Any](columns.length)
      var i = 0
      while (i < values.length) { values(i) = record.get(columns(i)); i += 1 }
      new org.apache.spark.sql.catalyst.expressions.GenericRow(values)
    }

  /** A record of the input's `width` columns holding only the key's values (an error row about
    * a key's window rather than one of its records).
    */
  def inputRecord(key: Any, width: Int): Record = {
    val values = new Array[Any](width)
    if (!isWindowAll) {
      val r = key.asInstanceOf[Row]
      var i = 0
      while (i < columns.length) { values(columns(i)) = r.get(i); i += 1 }
    }
    new ArrayRecord(values)
  }

  /** The key's values in an output row: `out` from 0 on; returns how many (0 for windowAll). */
  def putOutput(key: Any, out: Array[Any]): Int = {
    if (!isWindowAll) {
      val r = key.asInstanceOf[Row]
      var i = 0
      while (i < columns.length) { out(i) = r.get(i); i += 1 }
    }
    columns.length
  }
}

object Keys {

  /** The stand-in column windowAll groups by. */
  val StandIn: StructField = StructField("__sw_all", IntegerType, nullable = false)

  /** windowAll's one key. */
  val All: Row = Row(0)
}
