package sparkwin.plan.connect

import java.util.Optional

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.connect.planner.SparkConnectPlanner
import org.apache.spark.sql.connect.plugin.RelationPlugin

/** The Connect plugin's name up to 0.4.0, kept so servers started with
  * `spark.connect.extensions.relation.classes=sparkwin.plan.connect.SparkwinRelationPlugin`
  * keep working. It hands every relation to [[sparkwin.gateway.connect.SparkwinRelationPlugin]].
  * It lives with the gateways (only its name is the plan package's): no plan code imports it.
  */
@deprecated("use sparkwin.gateway.connect.SparkwinRelationPlugin", "0.5.0")
final class SparkwinRelationPlugin extends RelationPlugin {
  private val plugin = new sparkwin.gateway.connect.SparkwinRelationPlugin

  override def transform(relation: Array[Byte], planner: SparkConnectPlanner): Optional[LogicalPlan] =
    plugin.transform(relation, planner)
}
