package sparkwin.spark

import org.apache.spark.sql.{Encoders, Row}
import org.apache.spark.sql.streaming._

import sparkwin.engine.{Operator, RecordError}
import sparkwin.state.KeyStateCodec

/** How a pipeline uses Spark's one timer domain per processor (see DESIGN.md, "Timers on
  * Spark"): event-time timers only, processing-time timers only, or both, in which case
  * processing time drives Spark's timers and keys with pending event-time timers are polled
  * every micro-batch.
  */
sealed trait TimerDomains extends Serializable
object TimerDomains {
  case object EventOnly extends TimerDomains
  case object ProcessingOnly extends TimerDomains
  case object Both extends TimerDomains
  case object Neither extends TimerDomains
}

/** The engine inside Spark's `transformWithState`: per grouping key it loads the key's state,
  * lets Spark's clocks catch the engine up (due timers fire before the batch's rows, as when a
  * watermark precedes the elements that follow it), processes the rows, saves the state, and
  * keeps one Spark timer per key at the key's next engine timer.
  *
  * It holds the plan as JSON and decodes it on the executor, so nothing of the engine needs to
  * be serialisable.
  */
final class WindowProcessor(planJson: String, java8Time: Boolean, domains: TimerDomains, combined: Boolean)
    extends StatefulProcessor[Row, Row, Row] {

  @transient private var value: ValueState[Array[Byte]] = _
  @transient private var backend: SparkKeyBackend = _
  @transient private var operator: Operator = _
  @transient private var collector: RowCollector = _
  @transient private var layout: OutputLayout = _
  @transient private var tsColumn: Int = _
  @transient private var plan: Plan = _
  @transient private var partialFields: Int = _ // combined input: key columns come first
  @transient private var reported: Array[Long] = _
  @transient private var firingTimer: Boolean = false

  override def init(outputMode: OutputMode, timeMode: TimeMode): Unit = {
    plan = PlanDecoder.decode(planJson)
    partialFields = math.max(plan.keyColumns.size, 1)
    layout = new OutputLayout(plan, java8Time)
    val aggregates = plan.spec.function match {
      case sparkwin.engine.WindowFunction.Aggregates(a) => a
      case _ => IndexedSeq.empty
    }
    value = getHandle.getValueState[Array[Byte]]("sparkwin", Encoders.BINARY, TTLConfig.NONE)
    backend = new SparkKeyBackend(new KeyStateCodec(aggregates))
    collector = new RowCollector(layout)
    operator = Operator(plan.spec, backend, collector)
    tsColumn = plan.timestampColumn
    reported = OutputLayout.metricValues(operator.metrics)
  }

  override def handleInputRows(key: Row, rows: Iterator[Row], timers: TimerValues): Iterator[Row] = {
    firingTimer = false
    begin(key, timers)
    if (combined) rows.foreach(partial)
    else
      rows.foreach { row =>
        val record = new RowRecord(row)
        if (row.isNullAt(tsColumn)) collector.emitError(record, "the timestamp is null")
        else
          try operator.processElement(record, Rows.millis(row.get(tsColumn)))
          catch { case e: RecordError => collector.emitError(record, e.getMessage) }
      }
    finish(timers)
  }

  /** A pre-aggregated row from [[Combiner]]: a group of elements, or a row without timestamp. */
  private def partial(row: Row): Unit = {
    val k = partialFields
    if (!row.isNullAt(k + 3))
      collector.emitError(new RowRecord(row.getStruct(k + 3)), "the timestamp is null")
    else
      operator
        .asInstanceOf[sparkwin.engine.WindowOperator]
        .processPartial(
          row.getLong(k),
          Combiner.decode(plan.spec, row.getAs[Array[Byte]](k + 2)),
          row.getLong(k + 1)
        )
  }

  override def handleExpiredTimer(key: Row, timers: TimerValues, info: ExpiredTimerInfo): Iterator[Row] = {
    firingTimer = true
    begin(key, timers)
    finish(timers)
  }

  /** Spark's watermark starts at 0 before any data; the engine's "no watermark yet" is -inf. */
  private def engineWatermark(timers: TimerValues): Long = {
    val wm = timers.getCurrentWatermarkInMs()
    if (wm <= 0) Long.MinValue else wm
  }

  private def begin(key: Row, timers: TimerValues): Unit = {
    backend.load(key, value)
    val now = timers.getCurrentProcessingTimeInMs()
    operator.setProcessingTime(now)
    if (domains != TimerDomains.EventOnly) operator.advanceProcessingTime(now)
    val wm = engineWatermark(timers)
    if (wm != Long.MinValue) operator.advanceWatermark(wm)
  }

  private def finish(timers: TimerValues): Iterator[Row] = {
    syncSparkTimer(timers)
    backend.save(value)
    // Counters that no output row shows travel as a metrics row (observed, then dropped).
    val now = OutputLayout.metricValues(operator.metrics)
    if (!java.util.Arrays.equals(now, reported)) {
      collector.addMetrics(now.indices.map(i => now(i) - reported(i)).toArray)
      reported = now
    }
    collector.drain()
  }

  /** One Spark timer per key, always strictly in the future: a timer due now would fire at
    * the end of this batch in Spark but at the next advance in the engine's semantics.
    */
  private def syncSparkTimer(timers: TimerValues): Unit = {
    val handle = getHandle
    val registered = backend.runtimeTimers
    val (now, next) = domains match {
      case TimerDomains.EventOnly =>
        val wm = timers.getCurrentWatermarkInMs()
        (wm, backend.eventTimers.peek.map(t => math.max(t.timestamp, wm + 1)))
      case TimerDomains.ProcessingOnly | TimerDomains.Both =>
        val pt = timers.getCurrentProcessingTimeInMs()
        val proc = backend.processingTimers.peek.map(t => math.max(t.timestamp, pt + 1))
        // Event-time timers cannot wake a key in processing-time mode: poll next batch.
        val poll = if (domains == TimerDomains.Both && !backend.eventTimers.isEmpty) Some(pt + 1) else None
        (pt, (proc ++ poll).minOption)
      case TimerDomains.Neither => (0L, None)
    }
    val current = registered(0)
    val wanted = next.getOrElse(Long.MinValue)
    if (wanted != current) {
      // A timer already due is deleted too when the key's rows got here first (the engine has
      // fired what it stood for), sparing a second handler call; never the one firing now.
      if (current != Long.MinValue && (current > now || !firingTimer)) handle.deleteTimer(current)
      if (wanted != Long.MinValue) handle.registerTimer(wanted)
      registered(0) = wanted // saved with the key's state
    }
  }
}
