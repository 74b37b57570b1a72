package sparkwin.plan

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper

/** What a real-time query is made of, as the client sees it just before it starts: facts only,
  * which [[PlanRules.refuseRealTime]] judges (Python gathers them: its outputs are Python
  * objects, and it asks the cluster and the Kafka brokers how many task slots and partitions
  * there are).
  *
  * @param interval
  *   the trigger's batch length as given: `Left(text)` for a string, `Right(how Python writes it)` otherwise
  * @param outputs
  *   each output's tag, kind (`kafka`, `row`, `directory`, `table`, `function`, or `other`) and
  *   how the user wrote it (a path, or the object's repr), in the order given
  * @param kafkaSinks
  *   how many different (bootstrap servers, options) the Kafka outputs name
  * @param sources
  *   the partitions the query's sources read and how they are made up ("4 Kafka partitions"),
  *   where they could be counted
  * @param shufflePartitions
  *   `spark.sql.shuffle.partitions`
  * @param taskSlots
  *   the tasks the cluster runs at once, where known
  */
final case class RealTimeQuery(
    interval: Either[String, String],
    foreachOutput: Boolean,
    outputs: Seq[RealTimeQuery.Out],
    kafkaSinks: Int,
    sources: Option[(Int, String)],
    shufflePartitions: Int,
    taskSlots: Option[Int]
)

object RealTimeQuery {
  final case class Out(tag: String, kind: String, written: String)

  private val mapper = new ObjectMapper()

  /** The facts from their JSON (`_spark/realtime.py` writes it); a malformed one is the
    * client's bug, refused as a plan would be.
    */
  def parse(json: String): RealTimeQuery =
    Try {
      val root = mapper.readTree(json)
      def int(field: String): Option[Int] = Option(root.get(field)).filter(_.isInt).map(_.asInt)
      val interval = root.path("interval")
      val sources = Option(root.get("sources")).filter(_.isObject).map { s =>
        (s.path("count").asInt, s.path("described").asText)
      }
      RealTimeQuery(
        interval =
          if (interval.isTextual) Left(interval.asText) else Right(root.path("intervalGiven").asText),
        foreachOutput = root.path("foreachOutput").asBoolean(false),
        outputs = root.path("outputs").elements().asScala.toList.map { o =>
          Out(o.path("tag").asText, o.path("kind").asText, o.path("written").asText)
        },
        kafkaSinks = int("kafkaSinks").getOrElse(0),
        sources = sources,
        shufflePartitions = int("shufflePartitions").getOrElse(200),
        taskSlots = int("taskSlots")
      )
    }.getOrElse(throw new PlanException(s"a real-time query's description does not read: $json"))
}
