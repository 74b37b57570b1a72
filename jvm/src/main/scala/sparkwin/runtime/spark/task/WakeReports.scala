package sparkwin.runtime.spark.task

import org.apache.spark.TaskContext
import org.apache.spark.util.AccumulatorV2

/** What the key groups of one micro-batch of one query asked the clock for: the earliest
  * processing time any of them must wake at (Long.MaxValue: none), and whether the batch was a
  * tick, so every group reported and the earliest is the whole query's, not a lower bound.
  */
final case class Wake(at: Long, complete: Boolean) {
  def merge(o: Wake): Wake = Wake(math.min(at, o.at), complete || o.complete)
}

/** The channel from the key groups (tasks) to the clock source (the driver): an accumulator, so
  * a batch's reports are on the driver before the batch ends, and a failed task attempt's are
  * not counted. Reports are kept per streaming query id: one pipeline's DataFrame may run in
  * several queries at once, each with its own state and its own clock.
  */
final class WakeReports extends AccumulatorV2[(String, Wake), java.util.Map[String, Wake]] {
  private val byQuery = new java.util.HashMap[String, Wake]()

  override def isZero: Boolean = synchronized(byQuery.isEmpty)
  override def copy(): WakeReports = synchronized {
    val c = new WakeReports
    c.byQuery.putAll(byQuery)
    c
  }
  override def reset(): Unit = synchronized(byQuery.clear())
  override def add(v: (String, Wake)): Unit = synchronized {
    byQuery.merge(v._1, v._2, (a: Wake, b: Wake) => a.merge(b))
  }
  override def merge(other: AccumulatorV2[(String, Wake), java.util.Map[String, Wake]]): Unit =
    other.value.forEach((q, w) => add((q, w)))
  override def value: java.util.Map[String, Wake] = synchronized(new java.util.HashMap(byQuery))

  /** A group's report from inside a streaming query's task (elsewhere: nothing to report to). */
  def report(at: Long, tick: Boolean): Unit = {
    val task = TaskContext.get()
    val query = if (task == null) null else task.getLocalProperty(WakeReports.QueryIdProperty)
    if (query != null) add((query, Wake(at, tick)))
  }

  /** The reports of `query` since the last call (None: none came), removed. */
  def take(query: String): Option[Wake] = synchronized(Option(byQuery.remove(query)))
}

object WakeReports {

  /** The local property Spark sets on every job of a streaming query: its id. */
  val QueryIdProperty = "sql.streaming.queryId"

  // The driver's reports by pipeline token: the clock source finds its pipeline's here. The map
  // holds them weakly: the pipeline's plan (its operator's LoopSpec) holds them for as long as a
  // DataFrame or query of it lives, and a long-lived driver that builds many pipelines must not
  // keep every one it ever built.
  private val byToken =
    new java.util.concurrent.ConcurrentHashMap[String, java.lang.ref.WeakReference[WakeReports]]()

  /** New reports for a pipeline, registered with Spark (driver side) under a fresh token. */
  def register(spark: org.apache.spark.sql.SparkSession): (String, WakeReports) = {
    val reports = new WakeReports
    spark.sparkContext.register(reports, "sparkwin wake-ups")
    (remember(reports), reports)
  }

  /** `reports` under a fresh token, once the entries of pipelines gone are dropped. */
  private[spark] def remember(reports: WakeReports): String = {
    byToken.values().removeIf(_.get() == null)
    val token = java.util.UUID.randomUUID().toString
    byToken.put(token, new java.lang.ref.WeakReference(reports))
    token
  }

  def forToken(token: String): Option[WakeReports] = Option(byToken.get(token)).flatMap(r => Option(r.get()))

  /** How many pipelines' reports the driver holds (for tests). */
  private[spark] def registered: Int = byToken.size
}
