package sparkwin.spark

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import scala.collection.mutable

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

import sparkwin.agg.{Accumulator, Aggregate}
import sparkwin.engine.{OperatorSpec, WindowFunction}
import sparkwin.state.ValueCodec
import sparkwin.window.{Window, WindowAssignerContext}

/** Map-side pre-aggregation, the counterpart of Spark's partial aggregation, for pipelines
  * where single elements are never seen ([[OperatorSpec.combinable]]).
  *
  * Within a partition, rows fold into one partial per (key, set of windows): every element of
  * a group has the same windows, so the operator treats the group as one. Rows without a
  * timestamp pass through unchanged, to reach the error output.
  */
object Combiner {
  val Ts = "__sw_ts"
  val Count = "__sw_count"
  val Accumulators = "__sw_accumulators"
  val Raw = "__sw_raw"

  def partialSchema(plan: Plan, keyFields: Seq[StructField]): StructType =
    StructType(
      keyFields ++ Seq(
        StructField(Ts, LongType),
        StructField(Count, LongType, nullable = false),
        StructField(Accumulators, BinaryType),
        StructField(Raw, plan.inputSchema)
      )
    )

  private def aggregates(spec: OperatorSpec): IndexedSeq[Aggregate] = spec.function match {
    case WindowFunction.Aggregates(a) => a
    case _ => IndexedSeq.empty
  }

  private val noClock = new WindowAssignerContext { def currentProcessingTime: Long = 0L }

  private final class Group(val ts: Long, val accumulators: Array[Accumulator]) {
    var count = 0L
  }

  /** One partition's rows as partial rows; `keyOf` gives the grouping key's values. */
  def combine(plan: Plan, keyOf: Row => Seq[Any], rows: Iterator[Row]): Iterator[Row] = {
    val aggs = aggregates(plan.spec)
    val assigner = plan.spec.assigner
    val ts = plan.timestampColumn
    val groups = mutable.LinkedHashMap.empty[(Seq[Any], Window, Int), Group]
    val passThrough = mutable.ArrayBuffer.empty[Row]
    rows.foreach { row =>
      if (row.isNullAt(ts)) passThrough += Row.fromSeq(keyOf(row) ++ Seq(null, 0L, null, row))
      else {
        val t = Rows.millis(row.get(ts))
        val windows = assigner.assignWindows(null, t, noClock)
        val id = (keyOf(row), windows.headOption.orNull, windows.size)
        val g = groups.getOrElseUpdate(id, new Group(t, aggs.map(_.newAccumulator()).toArray))
        val record = new RowRecord(row)
        var i = 0
        while (i < g.accumulators.length) { g.accumulators(i).add(record, t); i += 1 }
        g.count += 1
      }
    }
    passThrough.iterator ++ groups.iterator.map { case ((key, _, _), g) =>
      Row.fromSeq(key ++ Seq(g.ts, g.count, encode(g.accumulators), null))
    }
  }

  def encode(accumulators: Array[Accumulator]): Array[Byte] = {
    val bytes = new ByteArrayOutputStream(64)
    val out = new DataOutputStream(bytes)
    accumulators.foreach(a => ValueCodec.writeSeq(out, a.save))
    out.flush()
    bytes.toByteArray
  }

  def decode(spec: OperatorSpec, bytes: Array[Byte]): Array[Accumulator] = {
    val in = new DataInputStream(new ByteArrayInputStream(bytes))
    aggregates(spec).map { a =>
      val acc = a.newAccumulator(); acc.restore(ValueCodec.readSeq(in)); acc
    }.toArray
  }
}
