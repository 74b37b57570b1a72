package sparkwin.runtime.spark

import org.apache.spark.SerializableWritable
import org.apache.spark.sql.{Column, DataFrame, Encoders, Row, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.EventTimeWatermark
import org.apache.spark.sql.functions.lit
import org.apache.spark.sql.streaming.{GroupState, GroupStateTimeout, OutputMode}
import org.apache.spark.sql.types.{MetadataBuilder, StructType, TimestampType}

import sparkwin.plan.{Plan, SparkTimers, UnsupportedSparkException}
import sparkwin.runtime.spark.task.{GroupHost, GroupTable, KeyGroupLoop, LoopSpec, SessionForms}

/** The Spark 3.5 side of the streaming runtime (this jar's shim, as spark-rapids and Iceberg keep
  * one per Spark version): key groups go through `flatMapGroupsWithState`, each group's entries
  * in one state value ([[GroupTable]]), hosted by [[GroupStateRunner]]. The Scala 2.13 jar has
  * Spark 4's shim under the same name (DESIGN.md, "Spark 3.5: one value per key group").
  */
object SparkShim {

  /** The stateful operator, as `describe()` names it. */
  val Operator = "flatMapGroupsWithState"

  /** A column in the operator's input that carries Spark's watermark tag and is null on every
    * row: an event-time timeout needs a watermarked input column, and Spark drops the rows whose
    * watermarked value is at or before the watermark, which a null never is.
    */
  private val WatermarkTag = "__sw_watermark"

  /** Output timestamps follow the session's java8API here (Spark 4's shim sends `Instant`s). */
  val InstantOutput = false

  /** How Spark wakes a key group, in Spark's terms, for TimePolicy.sparkTimeMode's name. */
  def timers(timeMode: String): String =
    if (timeMode == "EventTime") "GroupStateTimeout.EventTimeTimeout" else "GroupStateTimeout.NoTimeout"

  // Processing time comes from sparkwin's clock, never from ProcessingTimeTimeout, which runs a
  // micro-batch every trigger interval for as long as the query runs.
  private def timeout(plan: Plan): GroupStateTimeout =
    if (plan.time.sparkTimers == SparkTimers.OnWatermark) GroupStateTimeout.EventTimeTimeout
    else GroupStateTimeout.NoTimeout

  /** Moving a checkpoint writes Spark 4's operator: not on this line. */
  def importState(entries: DataFrame, spec: LoopSpec, watermark: Long): DataFrame =
    throw new UnsupportedSparkException(
      "moving a checkpoint (sparkwin.state.migrate) writes sparkwin's Spark 4 runtime: run it on " +
        "Spark 4.0 or newer"
    )

  /** A sparkwin operator's stored entries at batch `batchId` (see the Spark 4 shim): here only a
    * checkpoint of this runtime is read, a group's whole table a row (`key` null).
    */
  def stateEntries(
      spark: SparkSession,
      location: String,
      operator: Int,
      batchId: Long,
      runtime: String,
      partitions: Int,
      providerClass: String
  ): DataFrame = {
    if (runtime != Operator)
      throw new UnsupportedSparkException(
        s"the checkpoint at $location holds state of sparkwin's Spark 4 runtime ($runtime): read it " +
          "on Spark 4.0 or newer"
      )
    StateStoreEntries.read(spark, location, operator, batchId, partitions, providerClass)
  }

  /** The sparkwin operators in `df`'s logical plan, outermost first (the order Spark numbers
    * stateful operators in: a chained query's last pipeline is operator 0).
    */
  def operatorsOf(df: DataFrame): Seq[LoopSpec] = {
    val found = Seq.newBuilder[LoopSpec]
    df.queryExecution.logical.foreach { node =>
      node.productIterator.foreach {
        case p: GroupStateRunner => found += p.spec
        case _ =>
      }
    }
    found.result()
  }

  /** The key groups' stateful operator over `rows`, grouped by `group` (an Int column). */
  def keyGroupOperator(
      rows: DataFrame,
      group: Column,
      spec: LoopSpec,
      plan: Plan,
      output: StructType
  ): DataFrame = {
    if (spec.realTime)
      throw new UnsupportedSparkException(
        "real-time mode (trigger={'realTime': ...}) needs Spark 4.1 or newer; Spark 3.5 runs " +
          "sparkwin in micro-batch mode"
      )
    if (plan.time.inheritsWatermark)
      throw new UnsupportedSparkException(
        "a pipeline over another pipeline's results on a stream (chained windows) needs Spark 4.0 " +
          "or newer: Spark 3.5 refuses a stateful operator after flatMapGroupsWithState (its " +
          "global watermark correctness check). On Spark 3.5, write the first pipeline's results " +
          "to a table or files and read them as a new stream with a watermark of its own."
      )
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

object StateStoreEntries {
  import org.apache.spark.sql.execution.streaming.state._
  import org.apache.spark.sql.types.{BinaryType, IntegerType, LongType, StructField, StructType}

  private val KeySchema = StructType(Seq(StructField("__sw_key_group", IntegerType)))
  private val ValueSchema = StructType(
    Seq(
      StructField("groupState", StructType(Seq(StructField("value", BinaryType)))),
      StructField("timeoutTimestamp", LongType, nullable = false)
    )
  )

  /** Every group's table of a `flatMapGroupsWithState` operator at a batch, read partition by
    * partition through Spark's state store provider (Spark 3.5 has no state reader), each
    * partition in a provider of its own: a running query's stores are never touched.
    */
  def read(
      spark: SparkSession,
      location: String,
      operator: Int,
      batchId: Long,
      partitions: Int,
      providerClass: String
  ): DataFrame = {
    val conf = spark.sessionState.conf.clone()
    conf.setConfString("spark.sql.streaming.stateStore.providerClass", providerClass)
    // A store written with changelogs is read with them; one written without reads either way.
    conf.setConfString("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
    val storeConf = new StateStoreConf(conf)
    val hadoop =
      spark.sparkContext.broadcast(new SerializableWritable(spark.sparkContext.hadoopConfiguration))
    val root = new org.apache.hadoop.fs.Path(location, "state").toString
    val rows =
      spark.sparkContext.parallelize(0 until partitions, math.max(partitions, 1)).flatMap { partition =>
        val id =
          StateStoreProviderId(StateStoreId(root, operator.toLong, partition), java.util.UUID.randomUUID())
        val provider =
          StateStoreProvider.createAndInit(id, KeySchema, ValueSchema, 0, storeConf, hadoop.value.value)
        try {
          val store = provider.getReadStore(batchId + 1)
          try
            store
              .iterator()
              .map { pair =>
                val table = pair.value.getStruct(0, 1)
                Row(partition, pair.key.getInt(0), null, if (table == null) null else table.getBinary(0))
              }
              .toList
          finally store.abort()
        } finally provider.close()
      }
    spark.createDataFrame(
      rows,
      StructType(
        Seq(
          StructField("partition", IntegerType),
          StructField("label", IntegerType),
          StructField("key", BinaryType),
          StructField("value", BinaryType)
        )
      )
    )
  }
}

/** Spark 3.5's host of the key-group loop: the `flatMapGroupsWithState` function, its state one
  * [[GroupTable]] per key group. Spark forgets a group's timeout at every call, so each call
  * sets it again; the group times out once the watermark passes it (strictly), so the timeout is
  * one before the timer the loop wants. Its rows (`input`'s columns, then the watermark tag) come as `SessionForms.reader`
  * reads them, and reach the loop in the session's forms ([[SessionForms]]).
  */
final class GroupStateRunner(val spec: LoopSpec, input: StructType)
    extends ((Int, Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row])
    with Serializable {

  @transient private var loop: KeyGroupLoop = _
  @transient private var forms: SessionForms = _

  override def apply(group: Int, read: Iterator[Row], state: GroupState[Array[Byte]]): Iterator[Row] = {
    if (loop == null) { // one per task, as Spark 4's processor
      loop = new KeyGroupLoop(spec, SparkShim.Operator)
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
