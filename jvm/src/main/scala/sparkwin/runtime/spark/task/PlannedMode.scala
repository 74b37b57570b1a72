package sparkwin.runtime.spark.task

import scala.util.Try

import org.apache.spark.sql.SparkSession

import sparkwin.plan.PlanException

/** Refuses a pipeline planned for micro-batches (`toDF()`) that Spark runs in real-time mode.
  *
  * The two plans differ where it matters: a micro-batch plan's event time is Spark's watermark,
  * which in real-time mode moves only between batches, and its map side combines a partition
  * before sending it on, which in real-time mode ends only with the batch. Its windows would all
  * wait for the batch's end (minutes, as the README advises), and nothing would say why.
  *
  * Two checks, for Spark does not tell an operator its trigger:
  *   - [[atPlanning]]: Spark initialises the processor on the driver, on the query's thread,
  *     while it plans a batch; the query's id is then a local property, and its trigger can be
  *     looked up (through Spark's internal classes, so a line that renames them skips this
  *     check). The query fails before its first batch runs.
  *   - [[rowsOf]], on the executors: a micro-batch calls a task's handler once per grouping key
  *     (its rows come sorted by it), real-time mode once per row. The second call for one key
  *     group in one task is real-time mode, and the task fails before the batch commits.
  */
final class PlannedMode(realTime: Boolean) {
  private val called = new java.util.HashSet[Integer]()

  /** Checks a call of `keyGroup`'s rows (not its timers'): throws on the second one of a task. */
  def rowsOf(keyGroup: Int): Unit =
    if (!realTime && !called.add(keyGroup))
      throw PlannedMode.mismatch(s"key group $keyGroup's rows came twice to one task")

  /** On the driver, while Spark plans a batch of a streaming query: throws when the query runs
    * in real-time mode and the plan was made for micro-batches.
    */
  def atPlanning(): Unit =
    if (!realTime && PlannedMode.runningQueryTrigger().exists(_.endsWith("RealTimeTrigger")))
      throw PlannedMode.mismatch("the query's trigger is realTime")
}

object PlannedMode {
  private val QueryIdProperty = "sql.streaming.queryId" // set by Spark on a query's thread

  /** The class name of the trigger of the streaming query whose thread this is, if found. */
  private[spark] def runningQueryTrigger(): Option[String] = Try {
    // The query's thread runs a clone of the session, whose manager does not list the query.
    val sessions = (SparkSession.getActiveSession ++ SparkSession.getDefaultSession).toList
    val id = sessions.headOption.flatMap(s => Option(s.sparkContext.getLocalProperty(QueryIdProperty)))
    id.flatMap(i => sessions.iterator.flatMap(s => Option(s.streams.get(i))).toList.headOption).map { query =>
      val execution = query.getClass.getMethod("streamingQuery").invoke(query)
      execution.getClass.getMethod("trigger").invoke(execution).getClass.getName
    }
  }.toOption.flatten

  def mismatch(evidence: String): PlanException =
    new PlanException(
      s"this pipeline was planned for micro-batches (pipeline.toDF()), and Spark runs it in " +
        s"real-time mode ($evidence): its event time would move only between real-time " +
        "batches, and every window would wait for a batch's end. Plan it for real-time mode: " +
        "pipeline.toDF(realTime=True) with .outputMode(\"update\").trigger(realTime=...), or " +
        "pipeline.writeStream(checkpoint, outputs, trigger={'realTime': '5 minutes'}); start " +
        "from a new checkpoint"
    )
}
