package sparkwin.runtime.spark.task

import sparkwin.plan._

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

import sparkwin.core.agg.{Aggregate => A, NumericKind}
import sparkwin.core.ArrayRecord
import sparkwin.operator.{PaneInfo, PaneTiming}
import sparkwin.core.window._

/** Result and pane rows have exactly their schema's fields, in order, for keyed pipelines and
  * for windowAll, whose stand-in key on Spark is no output column.
  */
class OutputLayoutSuite extends munit.FunSuite {
  private val schema = StructType(
    Seq(StructField("user", StringType), StructField("ts", LongType), StructField("amount", LongType))
  )
  private val aggs = IndexedSeq(A.Sum("s", 2, NumericKind.Integral), A.Count("n", -1))

  private def layout(
      keys: IndexedSeq[Int],
      firedAt: Option[DataType] = None,
      combiner: String = "endOfWindow",
      process: Boolean = false
  ): OutputLayout = {
    val spec =
      sparkwin.TestSupport.aggregateSpec(TumblingWindows(10, 0, isEventTime = true), aggs, lateOutput = false)
    val fields = IndexedSeq(StructField("s", LongType), StructField("n", LongType))
    new OutputLayout(
      Plan(
        "{}",
        schema,
        1,
        keys,
        None,
        None,
        None,
        spec,
        None,
        fields,
        Some(schema).filter(_ => process),
        combiner
      ),
      java8Time = true,
      firedAt
    )
  }

  private val pane = PaneInfo(PaneTiming.Late, 2L, isFirst = false, isLast = true)
  private def at(ms: Long) = java.time.Instant.ofEpochMilli(ms)

  test("a keyed result row: key, bounds, event time, aggregates, pane, then when it fired") {
    val l = layout(IndexedSeq(0), firedAt = Some(LongType))
    val row = l.resultRow(Row("u1"), TimeWindow(10, 20), pane, Array[Any](7L, 3L), at = 99L)
    assertEquals(row.getInt(0), OutputLayout.ResultKind)
    val inner = row.getStruct(1)
    assertEquals(inner.length, l.resultSchema.size)
    assertEquals(inner.toSeq, Seq[Any]("u1", at(10), at(20), at(19), 7L, 3L, "LATE", 2L, false, true, 99L))
    // Only the event time is marked: a pipeline on it inherits the upstream watermark.
    val marked = l.resultSchema.fields.filter(_.metadata.contains(Contract.eventTimeMetadata)).map(_.name)
    assertEquals(marked.toSeq, Seq("window_time"))
    assert((2 to 5).forall(row.isNullAt))
  }

  test("windowAll's stand-in key is no column of its results or panes") {
    val l = layout(IndexedSeq.empty, process = true)
    val result = l.resultRow(Row(0), TimeWindow(0, 10), pane, Array[Any](1L, 1L)).getStruct(1)
    assertEquals(result.toSeq, Seq[Any](at(0), at(10), at(9), 1L, 1L, "LATE", 2L, false, true))
    val element = new ArrayRecord(Array[Any]("u", 5L, 1L))
    val paneRow = l.paneRow(Row(0), TimeWindow(0, 10), pane, 42L, element)
    assertEquals(paneRow.getStruct(2).toSeq, Seq[Any](at(0), at(10), at(9), "LATE", 2L, false, true, 42L))
    assertEquals(paneRow.getStruct(3), Row("u", 5L, 1L))
  }

  test("Storm, count and global windows leave the bounds they lack empty") {
    val l = layout(IndexedSeq(0), firedAt = Some(TimestampType))
    val storm = l.resultRow(Row("u"), StormWindow(Long.MinValue, 30), pane, Array[Any](0L, 0L), 5L)
    // A Storm window (start, end] has its end as largest timestamp.
    assertEquals(storm.getStruct(1).toSeq.take(4), Seq[Any]("u", null, at(30), at(30)))
    assertEquals(storm.getStruct(1).get(l.resultSchema.size - 1), at(5))
    val global = layout(IndexedSeq(0), process = true).paneRow(
      Row("u"),
      GlobalWindow,
      pane,
      1L,
      new ArrayRecord(Array[Any]("u", 1L, 1L))
    )
    assertEquals(global.getStruct(2).toSeq, Seq[Any]("u", null, null, null, "LATE", 2L, false, true, 1L))
  }

  test("a replay's pane rows end with pane_seq, not with when the pane fired") {
    // The process function's output has the user's schema: fired_at is for aggregate results.
    val l = layout(IndexedSeq(0), firedAt = Some(LongType), process = true)
    val row = l.paneRow(Row("u"), TimeWindow(0, 10), pane, 7L, new ArrayRecord(Array[Any]("u", 1L, 1L)))
    assertEquals(row.getStruct(2).length, l.paneSchema.size)
    assertEquals(row.getStruct(2).getLong(l.paneSchema.fieldIndex("pane_seq")), 7L)
  }

  test("an EARLIEST or LATEST combiner's hidden aggregate is window_time, unmarked, no column") {
    val l = layout(IndexedSeq(0), combiner = "earliest")
    val row = l.resultRow(Row("u1"), TimeWindow(10, 20), pane, Array[Any](7L, 3L, 12L)).getStruct(1)
    assertEquals(row.toSeq, Seq[Any]("u1", at(10), at(20), at(12), 7L, 3L, "LATE", 2L, false, true))
    assert(!l.resultSchema("window_time").metadata.contains(Contract.eventTimeMetadata))
    assert(!l.resultSchema.fieldNames.contains(PlanDecoder.WindowTimeAlias))
  }

  test("only a process function's union carries a pane struct; pandas aggregates' elements none") {
    val element = new ArrayRecord(Array[Any]("u", 5L, 1L))
    val aggregates = layout(IndexedSeq(0))
    assertEquals(aggregates.unionSchema("pane").dataType, NullType)
    val row = aggregates.paneRow(Row("u"), TimeWindow(0, 10), pane, 3L, element)
    assertEquals(row.getInt(0), OutputLayout.PaneKind)
    assert(row.isNullAt(2))
    assertEquals(row.getStruct(3), Row("u", 5L, 1L))
    val process = layout(IndexedSeq(0), process = true)
    assertEquals(process.unionSchema("pane").dataType, process.paneSchema)
    assertEquals(process.unionSchema.fieldNames.toSeq, aggregates.unionSchema.fieldNames.toSeq)
  }
}
