package sparkwin.runtime.spark

import org.apache.spark.sql.{Column, DataFrame, Encoders, Row}
import org.apache.spark.sql.catalyst.plans.logical.EventTimeWatermark
import org.apache.spark.sql.functions.lit
import org.apache.spark.sql.streaming.{GroupState, GroupStateTimeout, OutputMode}
import org.apache.spark.sql.types.{MetadataBuilder, StructType, TimestampType}

import sparkwin.plan.{Plan, SparkTimers}
import sparkwin.runtime.spark.task.{GroupHost, GroupTable, KeyGroupLoop, LoopSpec, SessionForms}

/** The key groups on `flatMapGroupsWithState`, each group's entries in one state value
  * ([[GroupTable]]): Spark 3.5's only host, and Spark 4's for a micro-batch query on a new
  * checkpoint, where it pays less per task than `transformWithState` (DESIGN.md, "Which operator
  * hosts the key groups").
  */
object GroupStateOperator {

  /** The operator's name, as checkpoints, `describe()` and errors give it. */
  val Name: String = Hosts.FlatMapGroupsWithState

  /** A column in the operator's input that carries Spark's watermark tag and is null on every
    * row: an event-time timeout needs a watermarked input column, and Spark drops the rows whose
    * watermarked value is at or before the watermark, which a null never is.
    */
  private val WatermarkTag = "__sw_watermark"

  // Processing time comes from sparkwin's clock, never from ProcessingTimeTimeout, which runs a
  // micro-batch every trigger interval for as long as the query runs.
  private def timeout(plan: Plan): GroupStateTimeout =
    if (plan.time.sparkTimers == SparkTimers.OnWatermark) GroupStateTimeout.EventTimeTimeout
    else GroupStateTimeout.NoTimeout

  /** The operator over `rows`, grouped by `group` (an Int column). */
  def apply(rows: DataFrame, group: Column, spec: LoopSpec, plan: Plan, output: StructType): DataFrame = {
    val tag = new MetadataBuilder().putLong(EventTimeWatermark.delayKey, 0L).build()
    val tagged = rows.withColumn(WatermarkTag, lit(null).cast(TimestampType).as(WatermarkTag, tag))
    tagged
      .groupBy(group)
      .as[Int, Row](Encoders.scalaInt, SessionForms.reader(tagged.schema))
      .flatMapGroupsWithState(OutputMode.Append(), timeout(plan))(new GroupStateRunner(spec, rows.schema))(
        Encoders.BINARY,
        SessionForms.writer(output)
      )
  }
}

/** The `flatMapGroupsWithState` function, its state one [[GroupTable]] per key group. Spark
  * forgets a group's timeout at every call, so each call sets it again; the group times out once
  * the watermark passes it (strictly), so the timeout is one before the timer the loop wants. Its
  * rows (`input`'s columns, then the watermark tag) come as `SessionForms.reader` reads them, and
  * reach the loop in the session's forms ([[SessionForms]]).
  */
final class GroupStateRunner(val spec: LoopSpec, input: StructType)
    extends ((Int, Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row])
    with Serializable {

  @transient private var loop: KeyGroupLoop = _
  @transient private var forms: SessionForms = _

  override def apply(group: Int, read: Iterator[Row], state: GroupState[Array[Byte]]): Iterator[Row] = {
    if (loop == null) { // one per task, as transformWithState's processor
      loop = new KeyGroupLoop(spec, GroupStateOperator.Name)
      forms = new SessionForms(input)
    }
    val rows = if (forms.identity) read else read.map(forms)
    val host =
      try new GroupStateRunner.Host(group, state)
      catch { case e: sparkwin.core.CorruptStateException => throw e.in(loop.describeGroup(group)) }
    val out = loop.call(host, rows, firing = state.hasTimedOut)
    host.commit()
    out
  }
}

object GroupStateRunner {
  private final class Host(override val keyGroup: Int, state: GroupState[Array[Byte]]) extends GroupHost {
    private val table = GroupTable.read(state.getOption.orNull)
    private var wanted = Long.MinValue

    def get(key: Array[Byte]): Array[Byte] = table.get(key)
    def put(key: Array[Byte], value: Array[Byte]): Unit = table.put(key, value)
    def remove(key: Array[Byte]): Unit = table.remove(key)
    def packsKeys: Boolean = false // the group is one value: buckets in it would only cost
    // The operator's input always has the watermark tag, so Spark answers (0 before any data).
    def watermark: Long = state.getCurrentWatermarkMs()
    def batchTime: Long = state.getCurrentProcessingTimeMs()
    def timer(current: Long, wanted: Long, firing: Boolean): Unit = this.wanted = wanted

    def commit(): Unit = {
      if (table.changed) {
        val bytes = table.encode()
        if (bytes == null) state.remove() else state.update(bytes)
      }
      // Spark takes only positive timeouts: a timer at or before 1 ms then waits for a
      // watermark of 2 ms (Spark's watermark is 0 until the first data).
      if (wanted != Long.MinValue) state.setTimeoutTimestamp(math.max(wanted - 1, 1L))
    }
  }
}
