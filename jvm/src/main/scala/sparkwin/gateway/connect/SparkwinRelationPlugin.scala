package sparkwin.gateway.connect

import java.util.Optional

import org.apache.spark.SparkEnv
import org.apache.spark.sql.{DataFrame, Encoders, Row}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.classic.{Dataset, SparkSession}
import org.apache.spark.sql.connect.planner.SparkConnectPlanner
import org.apache.spark.sql.connect.plugin.RelationPlugin

import sparkwin.gateway.PythonEntryPoint
import sparkwin.plan.PlanException

/** sparkwin on Spark Connect: the server-side half of the Connect transport.
  *
  * Register it on the server with
  * `spark.connect.extensions.relation.classes=sparkwin.gateway.connect.SparkwinRelationPlugin` (and
  * the jar in `spark.jars`); `sparkwin.configure(builder)` sets both. A Python client sends a
  * [[RelationMessage]] packed in a `spark.connect.Relation`'s `extension`; the plugin answers
  * with the logical plan the classic (Py4J) transport builds through [[PythonEntryPoint]], so
  * both transports run one builder.
  *
  * Spark calls `transform` each time it plans a request, so it must stay cheap and free of
  * side effects: it builds plans, it never runs a job.
  */
final class SparkwinRelationPlugin extends RelationPlugin {
  override def transform(relation: Array[Byte], planner: SparkConnectPlanner): Optional[LogicalPlan] =
    RelationMessage.unpack(relation) match {
      case None => Optional.empty()
      case Some(message) => Optional.of(SparkwinRelationPlugin.plan(message, planner))
    }
}

object SparkwinRelationPlugin {
  private val RecursionLimitConf = "spark.connect.grpc.marshallerRecursionLimit"
  private val DefaultRecursionLimit = 1024

  def plan(message: RelationMessage, planner: SparkConnectPlanner): LogicalPlan = {
    val session = planner.session
    message.operation match {
      case RelationMessage.Windowed =>
        val input = message.input.getOrElse(
          throw new PlanException("a sparkwin 'windowed' relation needs an input relation")
        )
        val relation = RelationMessage.parseRelation(input, recursionLimit)
        val df = dataFrame(session, planner.transformRelation(relation))
        PythonEntryPoint.windowed(df, message.planJson).queryExecution.analyzed
      case RelationMessage.Describe =>
        single(
          session,
          "describe",
          PythonEntryPoint.describe(message.planJson, java8Time(session), false, session, null)
        )
      case RelationMessage.Validate =>
        single(session, "validate", PythonEntryPoint.validate(message.planJson, message.streaming))
      case RelationMessage.Version =>
        single(session, "version", PythonEntryPoint.version())
      case RelationMessage.StateRead =>
        val args = StateArguments(message.argumentsJson)
        PythonEntryPoint
          .stateRead(
            session,
            args.checkpoint,
            Option(message.planJson).filter(_.nonEmpty).orNull,
            args.batchId,
            args.operator
          )
          .queryExecution
          .analyzed
      case RelationMessage.StateBatch =>
        val args = StateArguments(message.argumentsJson)
        single(
          session,
          "stateBatch",
          PythonEntryPoint.stateBatch(session, args.checkpoint, args.batchId).toString
        )
      case other =>
        throw new PlanException(
          s"unknown sparkwin Connect operation '$other': the client's sparkwin is newer than the " +
            s"server's jar (${PythonEntryPoint.version()}); install the same version on both"
        )
    }
  }

  /** The state operations' arguments: the checkpoint, the batch (-1: the last committed) and the
    * operator.
    */
  private final case class StateArguments(checkpoint: String, batchId: Long, operator: Int)

  private object StateArguments {
    private val mapper = new com.fasterxml.jackson.databind.ObjectMapper()

    def apply(json: String): StateArguments = {
      val node =
        try mapper.readTree(if (json == null || json.isEmpty) "{}" else json)
        catch {
          case e: com.fasterxml.jackson.core.JacksonException =>
            throw new PlanException(
              s"a sparkwin state operation's arguments are not JSON: ${e.getOriginalMessage}"
            )
        }
      val checkpoint = Option(node.get("checkpoint"))
        .filter(_.isTextual)
        .map(_.asText)
        .getOrElse(
          throw new PlanException("a sparkwin state operation needs 'checkpoint', the checkpoint's path")
        )
      def long(name: String, default: Long): Long =
        Option(node.get(name))
          .filter(n => !n.isNull)
          .map { n =>
            if (!n.canConvertToLong) throw new PlanException(s"'$name' must be a whole number, got $n")
            n.asLong
          }
          .getOrElse(default)
      StateArguments(checkpoint, long("batchId", -1L), long("operator", 0L).toInt)
    }
  }

  /** The classic DataFrame of a plan, as Spark's own (package-private) `Dataset.ofRows`
    * makes it: analyzed now, so a bad input fails here, with the analyzer's message.
    */
  private def dataFrame(session: SparkSession, plan: LogicalPlan): DataFrame = {
    val execution = session.sessionState.executePlan(plan)
    execution.assertAnalyzed()
    new Dataset[Row](session, execution.analyzed, Encoders.row(execution.analyzed.schema))
  }

  /** What Python's describe() reads from its session's conf, read from the Connect session's. */
  private def java8Time(session: SparkSession): Boolean =
    session.conf.get("spark.sql.datetime.java8API.enabled", "false").toBoolean

  private def recursionLimit: Int =
    Option(SparkEnv.get)
      .flatMap(env => env.conf.getOption(RecursionLimitConf))
      .flatMap(_.trim.toIntOption)
      .getOrElse(DefaultRecursionLimit)

  /** One row, one string column: how a Connect client gets a value back from the plugin. */
  private def single(session: SparkSession, column: String, value: String): LogicalPlan = {
    val df: DataFrame = session.createDataset(Seq(value))(Encoders.STRING).toDF(column)
    df.queryExecution.analyzed
  }
}
