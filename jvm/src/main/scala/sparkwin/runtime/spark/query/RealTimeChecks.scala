package sparkwin.runtime.spark.query

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.streaming.StreamingRelationV2

/** What Python's real-time checks need to know of a query's input before it starts: its
  * streaming sources, each as its format and options. Real-time mode runs every source partition
  * and every shuffle partition as a task at once, so the number of Kafka partitions a query reads
  * decides how many task slots it needs (DESIGN.md, "Real-time mode").
  */
object RealTimeChecks {

  /** Each streaming source of `df`'s plan: `format` (its short name, lower case) and its
    * options with lower-cased keys.
    */
  def sources(df: DataFrame): java.util.List[java.util.Map[String, String]] =
    df.queryExecution.logical
      .collectLeaves()
      .collect { case r: StreamingRelationV2 =>
        val options = new java.util.HashMap[String, String]()
        r.extraOptions.asCaseSensitiveMap().asScala.foreach { case (k, v) => options.put(k.toLowerCase, v) }
        options.put("format", r.sourceName.toLowerCase)
        options: java.util.Map[String, String]
      }
      .asJava
}
