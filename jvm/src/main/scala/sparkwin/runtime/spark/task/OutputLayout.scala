package sparkwin.runtime.spark.task

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.types._

import sparkwin.core.Record
import sparkwin.plan.{Contract, Plan}
import sparkwin.operator.{OperatorMetrics, PaneInfo}
import sparkwin.core.window.{GlobalWindow, StormWindow, TimeWindow, Window}

/** The rows a pipeline produces on Spark. One query produces every output, so all of them
  * share one union schema, told apart by its kind column: a window result (`result`), a late
  * element (`input`), a bad record (`input`, `error`), an element of a fired pane for a Python
  * process function (`pane`, `input`), or counters for observed metrics (`metrics`). The kinds,
  * the columns and the counters' names are the [[Contract]]'s; Python splits the union into the
  * main output and the side outputs by the same contract.
  */
final class OutputLayout(val plan: Plan, val java8Time: Boolean, val firedAtType: Option[DataType] = None)
    extends Serializable {
  import OutputLayout._

  /** Whether metrics carry the valve (the watermark and each channel's): with declared channels
    * (`channel=`) only; a real-time stream's channels per source partition are Spark's business.
    */
  def showsValve: Boolean = plan.channelColumn.isDefined

  // Replay results say where each pane fired: the arrival value of that moment.
  private def firedAtFields: Seq[StructField] =
    firedAtType.map(t => StructField(Contract.firedAtColumn, t)).toSeq

  // The bounds and the window's largest timestamp; that one is marked as event time, so a
  // pipeline on these results inherits the upstream watermark.
  private def windowFields: Seq[StructField] = {
    val marked = new MetadataBuilder().putBoolean(Contract.eventTimeMetadata, true).build()
    Contract.windowColumns.map { name =>
      // EARLIEST/LATEST results are data downstream: nothing holds the watermark for them.
      val eventTime = name == Contract.eventTimeColumn && !plan.windowTimeFromAggregate
      val meta = if (eventTime) marked else Metadata.empty
      StructField(name, TimestampType, nullable = true, meta)
    }
  }

  private def paneFields: Seq[StructField] =
    Contract.paneColumns.zip(Seq(StringType, LongType, BooleanType, BooleanType)).map { case (name, t) =>
      StructField(name, t, nullable = false)
    }

  /** The main output of an aggregating pipeline (docs/plan.md). */
  val resultSchema: StructType =
    StructType(plan.keyFields ++ windowFields ++ plan.aggregateFields ++ paneFields ++ firedAtFields)

  /** What a Python process function learns about its pane; `pane_seq` tells panes apart. */
  val paneSchema: StructType =
    StructType(
      plan.keyFields ++ windowFields ++ paneFields :+ StructField(
        Contract.paneSeqColumn,
        LongType,
        nullable = false
      )
    )

  /** The counters, and with channels the watermark and each channel's (id, watermark, idle). */
  val metricsSchema: StructType =
    if (!showsValve) MetricsSchema
    else
      MetricsSchema
        .add(Contract.valveWatermarkField, LongType)
        .add(
          Contract.valveChannelsField,
          ArrayType(
            StructType(
              Seq(
                StructField(Contract.channelIdField, StringType),
                StructField(Contract.channelWatermarkField, LongType),
                StructField(Contract.channelIdleField, BooleanType)
              )
            )
          )
        )

  val errorsSchema: StructType = plan.inputSchema.add(StructField(Contract.errorColumn, StringType))

  /** Whether `pane` holds a struct: only a Python process function reads it. Elsewhere it is
    * null-typed: Spark analyses, optimises and generates code for every nested field of the
    * union's serializer in every micro-batch, and the pane's were 116 of the 658 expression
    * nodes of a tumbling sum's plan (native's whole plan: 85).
    */
  def carriesPane: Boolean = plan.isProcess

  val unionSchema: StructType = StructType(
    Contract.unionColumns
      .zip(
        Seq(
          IntegerType,
          resultSchema,
          if (carriesPane) paneSchema else NullType,
          plan.inputSchema,
          StringType,
          metricsSchema
        )
      )
      .map { case (name, t) => StructField(name, t, nullable = name != Kind) }
  )

  private def ts(ms: Long): Any = Rows.timestamp(ms, java8Time)

  private def putKey(key: Any, out: Array[Any]): Int = plan.keys.putOutput(key, out)

  // start, end, and the largest timestamp in the window: a result's event time downstream.
  private def putBounds(w: Window, out: Array[Any], at: Int): Int = {
    w match {
      case t: TimeWindow => out(at) = ts(t.start); out(at + 1) = ts(t.end); out(at + 2) = ts(t.maxTimestamp)
      case s: StormWindow =>
        out(at) = if (s.hasStart) ts(s.start) else null; out(at + 1) = ts(s.end);
        out(at + 2) = ts(s.maxTimestamp)
      case GlobalWindow => out(at) = null; out(at + 1) = null; out(at + 2) = null
    }
    at + 3
  }

  private def putPane(p: PaneInfo, out: Array[Any], at: Int): Int = {
    out(at) = p.timing.name
    out(at + 1) = p.index
    out(at + 2) = p.isFirst
    out(at + 3) = p.isLast
    at + 4
  }

  /** EARLIEST/LATEST: the hidden aggregate's timestamp, as the output's timestamp type. */
  private def windowTime(v: Any): Any = if (v == null) null else ts(sparkwin.core.Values.toMillis(v))

  private def putFiredAt(fired: Long, out: Array[Any], at: Int): Int = firedAtType match {
    case None => at
    case Some(TimestampType) => out(at) = ts(fired); at + 1
    case Some(_) => out(at) = fired; at + 1
  }

  // The aggregates whose values hold records (a struct's maxByAll, first, collectList) that
  // Spark wants as rows.
  private val nested: Array[Int] =
    plan.aggregateFields.indices.filter(j => Rows.holdsRows(plan.aggregateFields(j).dataType)).toArray

  // Rows are filled in place: one is built per fired pane, and building them by concatenating
  // Seqs was 7% of the stateful stage's JFR samples on the quick tumbling run.
  def resultRow(key: Any, window: Window, p: PaneInfo, values: Array[Any], at: Long = 0L): Row = {
    val inner = new Array[Any](resultSchema.size)
    val i = putBounds(window, inner, putKey(key, inner))
    val n = plan.aggregateFields.size
    System.arraycopy(values, 0, inner, i, n)
    nested.foreach(j => inner(i + j) = Rows.valueToSpark(values(j), plan.aggregateFields(j).dataType))
    if (plan.windowTimeFromAggregate) inner(i - 1) = windowTime(values(n))
    putFiredAt(at, inner, putPane(p, inner, i + n))
    new GenericRow(Array[Any](ResultKind, new GenericRow(inner), null, null, null, null))
  }

  /** An element of a fired pane, for a Python process function. No `fired_at`: the function's
    * output has the user's schema (until 0.3.0 a replay put it where `pane_seq` belongs, and
    * panes that fired at the same arrival reached the function as one).
    */
  def paneRow(key: Any, window: Window, p: PaneInfo, seq: Long, element: Record): Row = {
    val info =
      if (!carriesPane) null // pandas aggregates: their result row leads the pane's elements
      else {
        val fields = new Array[Any](paneSchema.size)
        fields(putPane(p, fields, putBounds(window, fields, putKey(key, fields)))) = seq
        new GenericRow(fields)
      }
    Row(PaneKind, null, info, Rows.toRow(element, plan.inputSchema), null, null)
  }

  def lateRow(record: Record): Row =
    Row(LateKind, null, null, Rows.toRow(record, plan.inputSchema), null, null)

  def errorRow(record: Record, message: String): Row =
    Row(ErrorKind, null, null, Rows.toRow(record, plan.inputSchema), message, null)

  /** An error about a window rather than a record: the key's columns filled, the rest null. */
  def windowErrorRow(key: Any, message: String): Row =
    errorRow(plan.keys.inputRecord(key, plan.inputSchema.size), message)

  private def metricsStruct(m: Array[Long], valve: Option[(Long, Seq[(String, Long, Boolean)])]): Row =
    if (!showsValve) Row.fromSeq(m.toSeq)
    else
      valve match {
        case Some((wm, channels)) =>
          val marks = channels.map { case (id, w, idle) =>
            Row(id, if (w == Long.MinValue) null else w, idle)
          }
          Row.fromSeq(m.toSeq ++ Seq(if (wm == Long.MinValue) null else wm, marks))
        case None => Row.fromSeq(m.toSeq ++ Seq(null, null))
      }

  def metricsRow(m: Array[Long], valve: Option[(Long, Seq[(String, Long, Boolean)])] = None): Row =
    Row(MetricsKind, null, null, null, null, metricsStruct(m, valve))

  /** `row` carrying metric deltas too, so counters ride on output that exists anyway. */
  def withMetrics(row: Row, m: Array[Long], valve: Option[(Long, Seq[(String, Long, Boolean)])] = None): Row =
    Row.fromSeq(row.toSeq.updated(5, metricsStruct(m, valve)))
}

object OutputLayout {
  val Kind: String = Contract.kindColumn
  val ResultKind: Int = Contract.ResultKind
  val LateKind: Int = Contract.LateKind
  val ErrorKind: Int = Contract.ErrorKind
  val PaneKind: Int = Contract.PaneKind
  val MetricsKind: Int = Contract.MetricsKind

  /** Counters reported through `observe()`; per micro-batch sums in observedMetrics. */
  val MetricNames: IndexedSeq[String] = Contract.metricNames.toIndexedSeq

  val MetricsSchema: StructType =
    StructType(MetricNames.map(StructField(_, LongType, nullable = false)))

  /** The reported counters' values, in [[MetricNames]]' order (every call of a key group reads
    * them: no map is built).
    */
  def metricValues(m: OperatorMetrics): Array[Long] = {
    val values = new Array[Long](MetricNames.size)
    var i = 0
    while (i < values.length) { values(i) = m(MetricNames(i)); i += 1 }
    values
  }
}
