package sparkwin.runtime.spark.task

import java.io.File

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.Row

/** What the key-group loop's suites run and read: one plan and the window results of a call. */
object LoopFixtures {

  /** tumbling.json's first scenario: 10 ms tumbling windows, sum(amount) per user, bound 0. */
  lazy val tumblingPlanJson: String = {
    val mapper = new ObjectMapper()
    val file = new File(sparkwin.TestSupport.scenarioDirectory, "tumbling.json")
    mapper.writeValueAsString(mapper.readTree(file).get("scenarios").get(0).get("plan"))
  }

  /** A loop's spec in real-time mode over `groups` key groups, its writes never held. */
  def realTimeSpec(planJson: String, groups: Int): LoopSpec =
    LoopSpec(
      planJson,
      java8Time = false,
      combined = false,
      groups,
      None,
      -1,
      sparkwin.plan.RunMode.RealTime,
      0
    )

  /** A real-time task's state store over a map, each group's host as Spark 4's offers it: reads
    * go through `mirror` (none: straight to the store) and are counted, writes go to both.
    */
  final class TaskStore(mirror: Option[StoreMirror] = None) {
    val entries = new java.util.HashMap[String, Array[Byte]]()
    var reads = 0
    private var clock = 1000L
    private def id(group: Int, key: Array[Byte]) = s"$group/${key.mkString(",")}"

    def host(group: Int): GroupHost = new GroupHost {
      private def read(key: Array[Byte]): Array[Byte] = { reads += 1; entries.get(id(group, key)) }
      def get(key: Array[Byte]): Array[Byte] =
        mirror.fold(read(key))(_.get(group, key, () => read(key)))
      def put(key: Array[Byte], value: Array[Byte]): Unit = {
        entries.put(id(group, key), value)
        mirror.foreach(_.wrote(group, key, value))
      }
      def remove(key: Array[Byte]): Unit = {
        entries.remove(id(group, key))
        mirror.foreach(_.wrote(group, key, null))
      }
      def packsKeys: Boolean = true
      def watermark: Long = 0L
      val batchTime: Long = { clock += 1; clock }
      def timer(current: Long, wanted: Long, firing: Boolean): Unit = ()
      override def keyGroup: Int = group
    }
  }

  /** (user, window start, sum) of a call's window results, in the order they came out. */
  def windowResults(out: Iterator[Row]): List[(String, Long, Long)] =
    out
      .filter(_.getInt(0) == OutputLayout.ResultKind)
      .map(_.getStruct(1))
      .map(r => (r.getString(0), r.getTimestamp(1).getTime, r.getLong(4)))
      .toList
}
