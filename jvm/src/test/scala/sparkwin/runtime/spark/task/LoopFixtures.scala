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

  /** (user, window start, sum) of a call's window results, in the order they came out. */
  def windowResults(out: Iterator[Row]): List[(String, Long, Long)] =
    out
      .filter(_.getInt(0) == OutputLayout.ResultKind)
      .map(_.getStruct(1))
      .map(r => (r.getString(0), r.getTimestamp(1).getTime, r.getLong(4)))
      .toList
}
