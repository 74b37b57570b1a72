package sparkwin.runtime.spark.query

import scala.util.Try

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession

import sparkwin.plan.{PlanException, UnsupportedSparkException}
import sparkwin.runtime.spark.Hosts

/** Which of Spark's stateful operators hosts a streaming query's key groups, and why
  * (`describe()` shows both). Both run the same key-group loop; they differ in what Spark pays per
  * task and in the form of the state, so a checkpoint stays on the operator that wrote it
  * (DESIGN.md, "Which operator hosts the key groups").
  */
final case class HostChoice(operator: String, origin: String)

object HostChoice {
  import Hosts.{FlatMapGroupsWithState => GroupState, TransformWithState => Processor}

  /** The Spark conf that names the operator for a micro-batch query on a checkpoint without
    * state (a new one, or one sparkwin cannot see).
    */
  val Conf = "spark.sparkwin.operator"

  /** The rule, without Spark. `hosts` are the operators this Spark line runs the loop on (3.5:
    * `flatMapGroupsWithState` alone); `stored` the one whose state a checkpoint with progress
    * holds. On Spark 4: real-time mode and a pipeline over another's results need
    * `transformWithState` (a call per row; Spark refuses a stateful operator after
    * `flatMapGroupsWithState`); a checkpoint with progress keeps its operator; a new micro-batch
    * checkpoint gets `flatMapGroupsWithState`, one value per key group, which costs a task less;
    * a checkpoint sparkwin cannot see may hold an earlier release's `transformWithState` state,
    * so it gets that. `explicit` ([[Conf]]) decides where the checkpoint has no state.
    */
  def choose(
      hosts: Seq[String],
      checkpoint: KeyGroupCount.Checkpoint,
      stored: => Option[String],
      realTime: Boolean,
      chained: Boolean,
      explicit: Option[String] = None
  ): HostChoice =
    if (hosts == Seq(GroupState)) HostChoice(GroupState, "Spark 3.5's one operator for sparkwin")
    else if (realTime) HostChoice(Processor, "real-time mode: a call per row")
    else if (chained)
      HostChoice(
        Processor,
        "over another pipeline's results: Spark takes no stateful operator after the other one"
      )
    else {
      def unlessSet(default: HostChoice) = explicit.fold(default)(HostChoice(_, Conf))
      checkpoint match {
        case KeyGroupCount.Checkpoint.Fresh(_) =>
          unlessSet(HostChoice(GroupState, "a new micro-batch checkpoint"))
        case KeyGroupCount.Checkpoint.Unknown =>
          unlessSet(
            HostChoice(
              Processor,
              "checkpoint unknown: give toDF() the checkpointLocation, use writeStream, or set " +
                s"$Conf to $GroupState for a new one"
            )
          )
        case _ =>
          stored match {
            case Some(op) if hosts.contains(op) => HostChoice(op, "the checkpoint's state is on it")
            // A checkpoint of the other line: Admission refuses it, naming the line.
            case Some(_) => HostChoice(Processor, "the checkpoint's state is on another line's operator")
            case None =>
              unlessSet(HostChoice(Processor, "a checkpoint with no state yet, as earlier releases wrote"))
          }
      }
    }

  /** The choice for a query on `spark` whose checkpoint, as read when it was planned
    * ([[KeyGroupCount.at]]), is `checkpoint`; `upstream`: the operators of the sparkwin pipelines
    * in its input ([[requireStatefulAfter]]); `watermarked`: the pipeline has a watermark strategy
    * of its own ([[requireInheritedWatermark]]).
    */
  def of(
      spark: SparkSession,
      hosts: Seq[String],
      checkpoint: KeyGroupCount.Checkpoint,
      realTime: Boolean,
      chained: Boolean,
      upstream: Seq[String] = Nil,
      watermarked: Boolean = false
  ): HostChoice = {
    val set = explicit(spark.conf.getOption(Conf), hosts)
    requireStatefulAfter(upstream, hosts, set)
    requireInheritedWatermark(upstream, watermarked)
    choose(hosts, checkpoint, checkpoint.place.flatMap(storedOperator(spark, _)), realTime, chained, set)
  }

  /** Refuses a pipeline over the results of one on `flatMapGroupsWithState` (`upstream`: the
    * operators of the sparkwin pipelines in its input), before the query starts: Spark takes no
    * stateful operator after that one (its global watermark check), and a query run past the
    * check would drop this pipeline's input as late. On Spark 4 an upstream pipeline gets that
    * operator only when its `toDF` was given a checkpoint, or [[Conf]] names it (`explicit`).
    * Spark 3.5 has no other operator, so there every pipeline over another is refused, whether
    * it inherits the upstream watermark or keeps its own.
    */
  def requireStatefulAfter(upstream: Seq[String], hosts: Seq[String], explicit: Option[String]): Unit =
    if (!hosts.contains(Processor)) {
      if (upstream.nonEmpty) throw new UnsupportedSparkException(Hosts.ChainsNeedSpark4)
    } else if (upstream.contains(GroupState)) {
      val why = explicit match {
        case Some(GroupState) => s"$Conf is set to $GroupState: unset it, or set it to $Processor"
        case _ =>
          s"build the upstream pipeline with toDF() without checkpointLocation (the query's " +
            s"writeStream keeps it), or set $Conf to $Processor"
      }
      throw new PlanException(
        s"this pipeline reads the results of a pipeline on $GroupState, after which Spark takes " +
          s"no stateful operator (its global watermark check; run past it, this pipeline's input " +
          s"would be dropped as late): $why " +
          "(DESIGN.md, \"Which operator hosts the key groups\")"
      )
    }

  /** Refuses a pipeline over another's results (`upstream`: the operators of the sparkwin
    * pipelines in its input) that keeps a watermark of its own (`watermarked`), before the query
    * starts. Spark holds one watermark for a query, the least of its watermarks; this one sees no
    * row until the upstream fires, so it holds the query's at 0 for ever and no window of either
    * pipeline fires (Spark 3.5 fails the query at its start instead). Reading the upstream's event
    * time without a strategy follows its watermark, as Flink's downstream operators do. Python
    * refuses a strategy on the marked column; this covers a result whose mark was dropped.
    */
  def requireInheritedWatermark(upstream: Seq[String], watermarked: Boolean): Unit =
    if (upstream.nonEmpty && watermarked)
      throw new PlanException(
        "this pipeline reads another pipeline's results and has a watermark strategy of its own: " +
          "Spark keeps one watermark for a query, the least of its watermarks, and this one would " +
          "hold it back for ever (no window would fire). Give sw.stream() no watermark= and the " +
          "upstream's event-time column (window_time for window results, kept as it came): the " +
          "pipeline then follows the upstream's watermark (DESIGN.md, \"Chained pipelines on a stream\")"
      )

  /** [[Conf]]'s value, if set: one of `hosts`, or refused naming them. */
  def explicit(value: Option[String], hosts: Seq[String]): Option[String] =
    value.map(_.trim).filter(_.nonEmpty).map { name =>
      hosts.find(_.equalsIgnoreCase(name)).getOrElse {
        throw new PlanException(
          s"$Conf must name one of this Spark's operators for sparkwin (${hosts.mkString(", ")}), " +
            s"got '$name': set it to one of them, or unset it for the default " +
            "(DESIGN.md, \"Which operator hosts the key groups\")"
        )
      }
    }

  /** The operator a checkpoint's state is on, as its first operator folder shows it (none: no
    * state written yet, so none to keep).
    */
  def storedOperator(spark: SparkSession, location: String): Option[String] = {
    val state = new Path(location, "state")
    val fs = state.getFileSystem(spark.sparkContext.hadoopConfiguration)
    if (!fs.exists(state)) None
    else
      fs.listStatus(state)
        .filter(s => s.isDirectory && Try(s.getPath.getName.toInt).isSuccess)
        .sortBy(_.getPath.getName.toInt)
        .headOption
        .map(s => Hosts.stateIn(fs, s.getPath))
  }

  /** How Spark wakes a key group on `operator`, in Spark's terms, for a policy's time mode. */
  def timers(operator: String, timeMode: String): String =
    if (operator == Processor) s"TimeMode.$timeMode"
    else if (timeMode == "EventTime") "GroupStateTimeout.EventTimeTimeout"
    else "GroupStateTimeout.NoTimeout"
}
