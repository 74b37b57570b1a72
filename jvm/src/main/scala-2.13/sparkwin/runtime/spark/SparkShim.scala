package sparkwin.runtime.spark

import org.apache.spark.sql.{Column, DataFrame, Encoders, Row, SparkSession}
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.streaming.OutputMode
import org.apache.spark.sql.types.StructType

import sparkwin.plan.Plan
import sparkwin.runtime.spark.task.{LoopSpec, SessionForms}

/** The Spark 4 side of the streaming runtime (this jar's shim, as spark-rapids and Iceberg keep
  * one per Spark version): key groups go through `transformWithState` ([[KeyGroupProcessor]]) or
  * `flatMapGroupsWithState` ([[GroupStateOperator]]), as [[query.HostChoice]] chose. The Scala
  * 2.12 jar has Spark 3.5's shim under the same name.
  */
object SparkShim {

  /** The stateful operators this line hosts key groups on ([[query.HostChoice]]). */
  val Operators: Seq[String] = Seq(Hosts.TransformWithState, GroupStateOperator.Name)

  /** Whether the loop's output rows carry timestamps as `java.time.Instant`, whatever the
    * session's `spark.sql.datetime.java8API.enabled`: the operator's output encoder is lenient
    * (it takes either), and an `Instant` goes in without the calendar rebase a
    * `java.sql.Timestamp` costs (its `TimeZone.getDefault` copy per value was the largest share
    * of a pane's serialisation when 10k panes leave at once).
    */
  val InstantOutput = true

  /** The sparkwin operators in `df`'s logical plan, outermost first (the order Spark numbers
    * stateful operators in: a chained query's last pipeline is operator 0).
    */
  def operatorsOf(df: DataFrame): Seq[LoopSpec] = {
    val found = Seq.newBuilder[LoopSpec]
    df.queryExecution.logical.foreach { node =>
      node.productIterator.foreach {
        case p: KeyGroupProcessor => found += p.spec
        case p: GroupStateRunner => found += p.spec
        case _ =>
      }
    }
    found.result()
  }

  /** The key groups' stateful operator over `rows`, grouped by `group` (an Int column): the one
    * `spec` names.
    */
  def keyGroupOperator(
      rows: DataFrame,
      group: Column,
      spec: LoopSpec,
      plan: Plan,
      output: StructType
  ): DataFrame =
    if (spec.operator == GroupStateOperator.Name) GroupStateOperator(rows, group, spec, plan, output)
    else
      rows
        .groupBy(group)
        .as[Int, Row](Encoders.scalaInt, SessionForms.reader(rows.schema))
        .transformWithState(
          new KeyGroupProcessor(spec, rows.schema),
          StateImportProcessor.timeMode(spec),
          OutputMode.Append()
        )(
          SessionForms.writer(output) // lenient: InstantOutput
        )

  /** The one batch of a moved checkpoint: `entries` (a stream of `label`, `key`, `value`) into
    * the key groups' state variable, in the time mode of `spec`'s operator, each group's Spark
    * timer as `spec`'s policy wants it at Spark watermark `watermark`.
    */
  def importState(entries: DataFrame, spec: LoopSpec, watermark: Long): DataFrame = {
    val input = entries.select(col("label").as("__sw_key_group"), col("key"), col("value"))
    input
      .groupBy(col("__sw_key_group"))
      .as[Int, Row](Encoders.scalaInt, Encoders.row(input.schema))
      .transformWithState(
        new StateImportProcessor(spec, watermark),
        StateImportProcessor.timeMode(spec),
        OutputMode.Append()
      )(Encoders.row(StructType(Nil)))
  }

  /** A sparkwin operator's stored entries at batch `batchId` of the checkpoint at `location`, as
    * Spark's state reader gives them: `partition`, `label` (the key group), and `key` and `value`
    * for a `transformWithState` operator's entries, or `key` null and `value` the group's whole
    * table for a `flatMapGroupsWithState` one (Spark 3.5's, or Spark 4's for micro-batches).
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
    val reader = spark.read
      .format("statestore")
      .option("path", location)
      .option("operatorId", operator.toLong)
      .option("batchId", batchId)
    if (runtime == Hosts.TransformWithState) {
      val entries = reader.option("stateVarName", "sparkwin").load()
      entries.select(
        col("partition_id").as("partition"),
        label(entries),
        col("user_map_key").getField("value").as("key"),
        col("user_map_value").getField("value").as("value")
      )
    } else {
      val groups = reader.load()
      groups.select(
        col("partition_id").as("partition"),
        label(groups),
        lit(null).cast("binary").as("key"),
        col("value").getField("groupState").getField("value").as("value")
      )
    }
  }

  /** The key group's label, the grouping key's one field: Spark 4.1 names it after the grouping
    * column, Spark 4.0's reader `value`.
    */
  private def label(entries: DataFrame): Column = entries.schema("key").dataType match {
    case s: StructType if s.fields.nonEmpty => col("key").getField(s.fields.head.name).as("label")
    case _ => col("key").as("label")
  }
}
