package sparkwin.runtime.spark.task

import org.apache.spark.sql.Row
import org.apache.spark.sql.types.DataType

import sparkwin.core.Record
import sparkwin.plan.Plan
import sparkwin.runtime.{BadRecords, Driver, TimeMove}
import sparkwin.runtime.local.{LocalBackend, Position, ReplayDriver, WatermarkTimeline}

/** Replay's second pass, one key inside a Spark task (`flatMapGroups`): the key's elements in
  * arrival order through the engine, event time following the broadcast watermark timeline and
  * processing time following arrival ([[ReplayDriver]]). As [[BatchRunner]], it holds the key's
  * whole input, so the engine runs over an in-memory [[LocalBackend]].
  */
object ReplayKeys {

  /** `rows` are the input's columns followed by arrival, channel and ordinal (ReplayRuntime's),
    * as `SessionForms.reader` read them, and `read` the key's columns.
    */
  def run(
      plan: Plan,
      java8: Boolean,
      firedAtType: DataType,
      timeline: WatermarkTimeline,
      lastArrival: Long,
      endOfInput: Boolean,
      read: Row,
      rows: Iterator[Row]
  ): Iterator[Row] = {
    val n = plan.inputSchema.length
    val key = new SessionForms(plan.keys.schema)(read)
    val forms = new SessionForms(plan.inputSchema)
    val layout = new OutputLayout(plan, java8, Some(firedAtType))
    val clock = new ReplayDriver.Clock
    val collector = new RowCollector(layout, () => clock.firedAt)
    val backend = new LocalBackend(packable = false)
    val driver = new Driver(plan.spec, _ => key, plan.timestampColumn, backend, collector, policy = plan.time)
    backend.setCurrentKey(key)
    val ts = plan.timestampColumn
    val valid = Array.newBuilder[(Position, Row, Long)]
    rows.foreach { read =>
      val r = forms(read)
      val input = new RowRecord(r, n)
      val why =
        BadRecords.reason(input, ts, arrivalMissing = r.isNullAt(n), channelMissing = r.isNullAt(n + 1))
      if (why != null) collector.emitError(input, why)
      else
        valid += ((
          Position.element(r.getLong(n), r.getInt(n + 1), r.getLong(n + 2)),
          r,
          Rows.millis(r.get(ts))
        ))
    }
    val elements = valid.result().sortBy(_._1).iterator.map { case (p, r, t) =>
      (p, new RowRecord(r, n): Record, t)
    }
    ReplayDriver.run(driver, timeline, elements, lastArrival, clock)
    if (endOfInput) driver.moveClocks(TimeMove.EndOfInput)
    val counters = OutputLayout.metricValues(driver.metrics)
    if (counters.exists(_ != 0)) collector.addMetrics(counters)
    collector.drain()
  }
}
