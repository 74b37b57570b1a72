package sparkwin.runtime.checkpoint

import org.apache.spark.sql.{DataFrame, Encoders, Row, SparkSession}
import org.apache.spark.sql.functions.col

import sparkwin.plan.{PlanDecoder, PlanException}
import sparkwin.runtime.spark.SparkShim
import sparkwin.runtime.spark.task.GroupTable

/** Reads what a checkpoint's sparkwin operator holds at a committed batch, as the union of
  * [[StateViews]]: per key its open windows and timers, per key group its channel watermarks and
  * sizes. It reads through Spark's state reader (Spark 4) or state store providers of its own
  * (Spark 3.5), so a running query's checkpoint is read as it stands, at a batch it committed,
  * and nothing is written.
  */
object StateReader {

  /** The batch a read sees: `batchId` if given (one the checkpoint committed), else the last
    * committed.
    */
  def batchOf(files: CheckpointFiles, batchId: Option[Long]): Long = {
    val last = files.lastCommitted.getOrElse(
      throw new PlanException(
        s"the checkpoint at ${files.location} has no committed batch yet: start its query and let a " +
          "batch finish, then read it"
      )
    )
    batchId match {
      case None => last
      case Some(b) if b >= 0 && b <= last => b
      case Some(b) =>
        throw new PlanException(
          s"batchId must be a batch the checkpoint committed, 0 to $last, got $b: leave it out to read " +
            "the last one"
        )
    }
  }

  /** The plan of the checkpoint's operator `operator`: `planJson` if given, else the one its
    * manifest keeps.
    */
  def planOf(files: CheckpointFiles, planJson: Option[String], operator: Int): String =
    planJson.getOrElse {
      val manifest = Manifest
        .read(files)
        .getOrElse(
          throw new PlanException(
            s"the checkpoint at ${files.location} keeps no sparkwin manifest (it was written before " +
              "sparkwin 0.5, or its query was started with toDF() and Spark's own writeStream): pass the " +
              "pipeline that wrote it, sw.state.read(checkpoint, pipeline)"
          )
        )
      manifest.operators
        .lift(operator)
        .map(_.planJson)
        .getOrElse(
          throw new PlanException(
            s"the checkpoint at ${files.location} has ${manifest.operators.size} sparkwin operator(s), " +
              s"0 to ${manifest.operators.size - 1}; operator=$operator names none"
          )
        )
    }

  def read(
      spark: SparkSession,
      location: String,
      planJson: Option[String],
      batchId: Option[Long],
      operator: Int
  ): DataFrame = {
    val files = CheckpointFiles(location, spark.sparkContext.hadoopConfiguration)
    val batch = batchOf(files, batchId)
    Relocation.requireInPlace(files, "read it")
    val op = files.operators
      .find(_.id == operator)
      .getOrElse(
        throw new PlanException(
          s"the checkpoint at $location has no stateful operator $operator (it has " +
            s"${if (files.operators.isEmpty) "none" else files.operators.map(_.id).mkString(", ")})"
        )
      )
    val plan = planOf(files, planJson, operator)
    PlanDecoder.decode(plan) // refused here, not in a task, when it is not a plan
    val provider = files
      .offsets(batch)
      .conf
      .getOrElse("spark.sql.streaming.stateStore.providerClass", RocksDbProvider)
    val raw = SparkShim.stateEntries(spark, location, operator, batch, op.runtime, op.partitions, provider)
    views(raw, plan, java8(spark))
  }

  private val RocksDbProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

  private def java8(spark: SparkSession): Boolean =
    spark.conf.get("spark.sql.datetime.java8API.enabled", "false").toBoolean

  /** The views of raw entries (`partition`, `label`, `key`, `value`; a null key: `value` is a
    * Spark 3.5 group's whole table): a group's entries side by side, each group decoded once.
    */
  def views(raw: DataFrame, planJson: String, java8Time: Boolean): DataFrame = {
    val schema = StateViews.unionSchema(PlanDecoder.cached(planJson))
    raw
      .repartition(col("label"))
      .sortWithinPartitions(col("label"))
      .mapPartitions { rows =>
        val views = new StateViews(planJson, java8Time)
        val input = rows.buffered
        new Iterator[Iterator[Row]] {
          def hasNext: Boolean = input.hasNext
          def next(): Iterator[Row] = {
            val label = input.head.getInt(1)
            val partition = input.head.getInt(0)
            val entries = Seq.newBuilder[(Array[Byte], Array[Byte])]
            while (input.hasNext && input.head.getInt(1) == label) {
              val r = input.next()
              val value = r.getAs[Array[Byte]](3)
              if (r.isNullAt(2)) { if (value != null) entries ++= GroupTable.read(value).entries }
              else entries += ((r.getAs[Array[Byte]](2), value))
            }
            views.rows(label, partition, entries.result())
          }
        }.flatMap(identity)
      }(Encoders.row(schema))
  }
}
