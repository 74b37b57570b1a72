package sparkwin.gateway.connect

import org.apache.spark.sql.connect.plugin.RelationPlugin
import org.sparkproject.connect.protobuf.{Any => ProtoAny, ByteString}

import sparkwin.plan.PlanException

/** A server names the plugin in `spark.connect.extensions.relation.classes` and Spark loads it by
  * that name: the current one and the one up to 0.4.0 (a deprecated alias) both load and answer
  * alike.
  */
class PluginNamesSuite extends munit.FunSuite {
  private val names = List(
    "sparkwin.gateway.connect.SparkwinRelationPlugin",
    "sparkwin.plan.connect.SparkwinRelationPlugin"
  )

  private def load(name: String): RelationPlugin =
    Class.forName(name).getDeclaredConstructor().newInstance().asInstanceOf[RelationPlugin]

  test("both plugin names load as relation plugins, the way Spark Connect loads them") {
    names.foreach(n => assertEquals(load(n).getClass.getName, n))
  }

  test("both names pass over another plugin's relation and refuse bytes that are not protobuf") {
    val other =
      ProtoAny.newBuilder().setTypeUrl("type.googleapis.com/other.Relation").setValue(ByteString.EMPTY)
    names.foreach { n =>
      val plugin = load(n)
      assert(!plugin.transform(other.build().toByteArray, null).isPresent, n)
      intercept[PlanException](plugin.transform(Array[Byte](0x0a, 0x7f), null))
    }
  }
}
