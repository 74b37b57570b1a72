package sparkwin.runtime.spark

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession

import sparkwin.plan.UnsupportedSparkException

/** Which Spark line's runtime wrote a streaming checkpoint's state, from the files Spark keeps
  * there: Spark 4's `transformWithState` leaves operator metadata (`state/0/_metadata/v2`) and
  * state schemas (`state/0/_stateSchema`) that Spark 3.5's `flatMapGroupsWithState` never
  * writes. Each line's Spark fails on the other's state with errors that do not say why
  * (3.5 an `EOFException` in a task, 4.x `STDS_FAILED_TO_READ_OPERATOR_METADATA`), so the
  * driver asks first.
  */
object Checkpoints {

  /** Refuses, with the reason, a checkpoint whose state the running line's runtime cannot read. */
  def check(spark: SparkSession, location: String): Unit = {
    val root = new Path(location)
    val fs = root.getFileSystem(spark.sparkContext.hadoopConfiguration)
    val state = new Path(root, "state/0")
    if (fs.exists(state)) {
      val spark4 = fs.exists(new Path(state, "_metadata/v2")) || fs.exists(new Path(state, "_stateSchema"))
      val (writer, line) =
        if (spark4) ("transformWithState", "4.0 or newer") else ("flatMapGroupsWithState", "3.5")
      if (writer != SparkShim.Operator)
        throw new UnsupportedSparkException(
          s"the checkpoint at $location holds state of sparkwin's Spark $line runtime ($writer), " +
            s"and this is Spark ${spark.version}, whose runtime (${SparkShim.Operator}) keeps its " +
            s"state in another form: resume the query on Spark $line, or start it from a new " +
            "checkpoint"
        )
    }
  }
}
