package sparkwin.runtime.spark

import org.apache.spark.SerializableWritable
import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.types.StructType

import sparkwin.plan.{Plan, UnsupportedSparkException}
import sparkwin.runtime.spark.task.LoopSpec

/** The Spark 3.5 side of the streaming runtime (this jar's shim, as spark-rapids and Iceberg keep
  * one per Spark version): key groups go through `flatMapGroupsWithState`
  * ([[GroupStateOperator]]). The Scala 2.13 jar has Spark 4's shim under the same name (DESIGN.md,
  * "Which operator hosts the key groups").
  */
object SparkShim {

  /** The stateful operators this line hosts key groups on ([[query.HostChoice]]). */
  val Operators: Seq[String] = Seq(GroupStateOperator.Name)

  /** Output timestamps follow the session's java8API here (Spark 4's shim sends `Instant`s). */
  val InstantOutput = false

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
    if (runtime != GroupStateOperator.Name)
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

  /** The key groups' stateful operator over `rows`, grouped by `group` (an Int column): here
    * always `flatMapGroupsWithState`.
    */
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
    if (plan.time.inheritsWatermark) throw new UnsupportedSparkException(Hosts.ChainsNeedSpark4)
    GroupStateOperator(rows, group, spec, plan, output)
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
