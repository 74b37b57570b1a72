package sparkwin.runtime.spark.task

import org.apache.spark.sql.Row

/** What a key group's loop puts out at the end of a call ([[KeyGroupLoop]]): the rows it
  * collected (panes, late and error rows), with a metrics row for counters that no output row
  * shows (observed, then dropped) and the valve (the group's watermark and channels, with declared
  * channels only: a source partition's is Spark's business).
  *
  * @param reported0 the counters as the loop starts (what is said is what they moved since)
  */
final class CallOutput(collector: RowCollector, realTime: Boolean, reported0: Array[Long]) {
  private var reported = reported0
  private var reportedValve: Option[(Long, Seq[(String, Long, Boolean)])] = None

  /** Whether the last call put out rows other than a metrics row (panes, late or error rows). */
  var putOut = false

  /** The call's rows, given the counters now, the group's `valve` (None: not shown) and whether
    * the call `holds` its writes ([[GroupWrites.holds]]).
    */
  def drain(
      counters: Array[Long],
      valve: Option[(Long, Seq[(String, Long, Boolean)])],
      holds: Boolean
  ): Iterator[Row] = {
    // A real-time call is one row: the valve goes out only when it moved since this loop last
    // said it (a task's loop is new each batch, so every batch still reports it); else a row
    // per input row, saying nothing new, would go through the output and its observe().
    val valveNews = if (realTime) valve.filter(v => !reportedValve.contains(v)) else valve
    // A call that holds its writes holds a counters-only row too: the group's next summary or
    // timer call says it (before the batch commits, as the writes). At many keys nearly every
    // row opens a window, and a metrics row per input row went through the output's projection
    // and observe(). Counters ride on a row going out anyway.
    val says = !holds || valveNews.isDefined || collector.rows.nonEmpty
    if (says && (!java.util.Arrays.equals(counters, reported) || valveNews.isDefined)) {
      val delta = counters.indices.map(i => counters(i) - reported(i)).toArray
      collector.addMetrics(delta, valveNews)
      reported = counters
      if (valveNews.isDefined) reportedValve = valveNews
    }
    putOut = collector.rows.exists(_.getInt(0) != OutputLayout.MetricsKind)
    collector.drain()
  }
}
