package sparkwin.runtime.spark

import org.apache.hadoop.fs.{FileSystem, Path}

/** Spark's operators that host the key groups, by the names checkpoints, `describe()` and errors
  * give them (DESIGN.md, "Which operator hosts the key groups").
  */
object Hosts {
  val TransformWithState = "transformWithState"
  val FlatMapGroupsWithState = "flatMapGroupsWithState"

  /** The operator whose state a checkpoint's operator folder (`state/<id>`) holds: Spark 4's
    * `transformWithState` leaves operator metadata v2 and state schemas there, which
    * `flatMapGroupsWithState` writes on neither line.
    */
  def stateIn(fs: FileSystem, operatorDir: Path): String =
    if (fs.exists(new Path(operatorDir, "_metadata/v2")) || fs.exists(new Path(operatorDir, "_stateSchema")))
      TransformWithState
    else FlatMapGroupsWithState
}
