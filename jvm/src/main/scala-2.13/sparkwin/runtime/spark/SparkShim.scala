package sparkwin.runtime.spark

import org.apache.spark.sql.{Column, DataFrame, Encoders, Row}
import org.apache.spark.sql.catalyst.encoders.RowEncoder
import org.apache.spark.sql.streaming.{OutputMode, TimeMode}
import org.apache.spark.sql.types.StructType

import sparkwin.plan.{Plan, SparkTimers}

/** The Spark 4 side of the streaming runtime (this jar's shim, as spark-rapids and Iceberg keep
  * one per Spark version): key groups go through `transformWithState`, hosted by
  * [[KeyGroupProcessor]]. The Scala 2.12 jar has Spark 3.5's shim under the same name.
  */
object SparkShim {

  /** The stateful operator, as `describe()` names it. */
  val Operator = "transformWithState"

  /** Whether the loop's output rows carry timestamps as `java.time.Instant`, whatever the
    * session's `spark.sql.datetime.java8API.enabled`: the operator's output encoder is lenient
    * (it takes either), and an `Instant` goes in without the calendar rebase a
    * `java.sql.Timestamp` costs (its `TimeZone.getDefault` copy per value was the largest share
    * of a pane's serialisation when 10k panes leave at once).
    */
  val InstantOutput = true

  /** How Spark wakes a key group, in Spark's terms (TimePolicy.sparkTimeMode's name). */
  def timers(timeMode: String): String = s"TimeMode.$timeMode"

  /** The key groups' stateful operator over `rows`, grouped by `group` (an Int column). */
  def keyGroupOperator(
      rows: DataFrame,
      group: Column,
      spec: LoopSpec,
      plan: Plan,
      output: StructType
  ): DataFrame = {
    val timeMode = plan.timeIn(spec.realTime).sparkTimers match {
      case SparkTimers.OnWatermark => TimeMode.EventTime()
      case SparkTimers.OnProcessingTime => TimeMode.ProcessingTime()
      case SparkTimers.NoTimers => TimeMode.None()
    }
    rows
      .groupBy(group)
      .as[Int, Row](Encoders.scalaInt, Encoders.row(rows.schema))
      .transformWithState(new KeyGroupProcessor(spec), timeMode, OutputMode.Append())(
        RowEncoder.encoderFor(output, true) // lenient: InstantOutput
      )
  }
}
