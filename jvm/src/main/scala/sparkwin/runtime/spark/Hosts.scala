package sparkwin.runtime.spark

import org.apache.hadoop.fs.{FileSystem, Path}

/** Spark's operators that host the key groups, by the names checkpoints, `describe()` and errors
  * give them (DESIGN.md, "Which operator hosts the key groups").
  */
object Hosts {
  val TransformWithState = "transformWithState"
  val FlatMapGroupsWithState = "flatMapGroupsWithState"

  /** Why Spark 3.5, whose one host is `flatMapGroupsWithState`, runs no pipeline over another's
    * results on a stream: said when the pipeline inherits the upstream watermark (SparkShim) and
    * when it keeps one of its own (`HostChoice.requireStatefulAfter`).
    */
  val ChainsNeedSpark4: String =
    "a pipeline over another pipeline's results on a stream (chained windows) needs Spark 4.0 " +
      "or newer: Spark 3.5 refuses a stateful operator after flatMapGroupsWithState (its " +
      "global watermark correctness check). On Spark 3.5, write the first pipeline's results " +
      "to a table or files and read them as a new stream with a watermark of its own."

  /** The operator whose state a checkpoint's operator folder (`state/<id>`) holds: Spark 4's
    * `transformWithState` leaves operator metadata v2 and state schemas there, which
    * `flatMapGroupsWithState` writes on neither line.
    */
  def stateIn(fs: FileSystem, operatorDir: Path): String =
    if (fs.exists(new Path(operatorDir, "_metadata/v2")) || fs.exists(new Path(operatorDir, "_stateSchema")))
      TransformWithState
    else FlatMapGroupsWithState
}
