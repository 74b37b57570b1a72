package sparkwin.runtime.spark.task

import java.util.concurrent.atomic.AtomicLong

import org.apache.spark.sql.Row

import sparkwin.operator.ClockMove
import sparkwin.plan.Plan
import sparkwin.runtime.{Driver, TimeMove}
import sparkwin.runtime.local.LocalBackend

/** One key of a bounded input through the engine, inside a Spark task (`flatMapGroups`): every
  * element in event-time order (arrival order among equal timestamps), then the end of input;
  * processing time stands still at the job's start, and pending processing-time timers fire once
  * at the end.
  *
  * The key's whole input is in the task's hands, so the engine runs over an in-memory
  * [[LocalBackend]] (no Spark state store), as replay's per-key pass does ([[ReplayKeys]]).
  */
object BatchRunner {
  private val keysRun = new AtomicLong()

  /** How many keys this JVM's tasks ran through the engine on bounded input: each pass over a
    * bounded pipeline adds its keys once (a test counts engine passes with it; local mode runs
    * every task in the driver's JVM).
    */
  def keysRunSoFar: Long = keysRun.get

  /** `key` and `rows` as `SessionForms.reader` read them (the key's columns, the input's). */
  def run(plan: Plan, java8: Boolean, startTime: Long, read: Row, rows: Iterator[Row]): Iterator[Row] = {
    keysRun.incrementAndGet()
    val key = new SessionForms(plan.keys.schema)(read)
    val forms = new SessionForms(plan.inputSchema)
    val collector = new RowCollector(new OutputLayout(plan, java8))
    val backend = new LocalBackend(packable = false)
    val policy = plan.time
    val driver = new Driver(plan.spec, _ => key, plan.timestampColumn, backend, collector, policy = policy)
    backend.setCurrentKey(key)
    driver.moveClocks(TimeMove.Clocks(ClockMove.Keep, startTime, ClockMove.Set))
    val timed = rows
      .map(r => new RowRecord(forms(r)))
      .flatMap(r => Option(driver.timestampOf(r)).map(ts => (ts.longValue, r)))
    timed.toArray.sortBy(_._1).foreach { case (ts, r) => driver.processElement(r, ts) } // a stable sort
    driver.moveClocks(TimeMove.EndOfInput)
    // Processing time stood still: the timers still pending fire once, at the last one's time.
    if (policy.processingTimers) {
      val pending = driver.operator.lastProcessingTimer
      if (pending != Long.MinValue)
        driver.moveClocks(TimeMove.Clocks(ClockMove.Keep, pending, ClockMove.Advance))
    }
    val counters = OutputLayout.metricValues(driver.metrics)
    if (counters.exists(_ != 0)) collector.addMetrics(counters)
    collector.drain()
  }
}
