package sparkwin.plan

import org.apache.spark.sql.types._

import sparkwin.TestSupport
import sparkwin.core.time.WatermarkStrategy
import sparkwin.core.window.TumblingWindows

/** Real-time mode's refusals, all in [[PlanRules.refuseRealTime]]: the plan on its input, then
  * the query Python is about to start, each naming the fix, in the order a user meets them.
  */
class RealTimeRulesSuite extends munit.FunSuite {
  private val schema = StructType(Seq(StructField("user", StringType), StructField("ts", LongType)))
  private val plan = Plan(
    "{}",
    schema,
    1,
    IndexedSeq(0),
    Some(WatermarkStrategy(WatermarkStrategy.BoundedOutOfOrderness(1000), None, 200)),
    None,
    None,
    TestSupport.aggregateSpec(TumblingWindows(10, 0, isEventTime = true), Seq(TestSupport.countAll), false),
    None,
    IndexedSeq.empty,
    None
  )

  private def query(fields: String*): Option[RealTimeQuery] = {
    val base = Map(
      "interval" -> "\"5 minutes\"",
      "outputs" -> """[{"tag": "main", "kind": "kafka", "written": "KafkaOutput('out')"}]""",
      "kafkaSinks" -> "1",
      "shufflePartitions" -> "2",
      "taskSlots" -> "8",
      "sources" -> """{"count": 4, "described": "4 Kafka partitions"}"""
    )
    val given = fields.map { f =>
      val Array(k, v) = f.split("=", 2); k -> v
    }.toMap
    val json = (base ++ given).map { case (k, v) => s""""$k": $v""" }.mkString("{", ", ", "}")
    Some(RealTimeQuery.parse(json))
  }

  private def refusal(p: Plan, streaming: Boolean, q: Option[RealTimeQuery]): String =
    intercept[PlanException](PlanRules.refuseRealTime(p, Some(streaming), q)).getMessage

  test("a stream of an event-time plan with a Kafka output and enough slots runs") {
    PlanRules.refuseRealTime(plan, Some(true), query())
    PlanRules.refuseRealTime(plan, Some(true), None)
  }

  test("the plan: a bounded input, a process() function, no watermark strategy") {
    assert(refusal(plan, streaming = false, None).contains("runs streams only"))
    val process = plan.copy(processSchema = Some(StructType(Seq(StructField("n", LongType)))))
    assert(refusal(process, streaming = true, None).contains("cannot run process() pipelines"))
    assert(refusal(plan.copy(watermark = None), streaming = true, None).contains("watermark strategy"))
  }

  test("the trigger takes the batch length as a non-empty string") {
    val number = refusal(plan, streaming = true, query("interval=null", "intervalGiven=\"300\""))
    assert(number.contains("got 300") && number.contains("'5 minutes'"), number)
    val blank = refusal(plan, streaming = true, query("interval=\"  \""))
    assert(blank.contains("got '  '"), blank)
  }

  test("each output real-time mode cannot write is named with the fix, foreachOutput first") {
    def outputs(kind: String) =
      s"""outputs=[{"tag": "main", "kind": "$kind", "written": "/tmp/out"}]"""
    assert(
      refusal(plan, true, query(outputs("directory"))).contains("outputs['main'] is a directory ('/tmp/out')")
    )
    assert(refusal(plan, true, query(outputs("table"))).contains("is a table"))
    assert(refusal(plan, true, query(outputs("function"))).contains("sw.forEachRow(fn)"))
    assert(refusal(plan, true, query(outputs("other"))).contains("cannot write /tmp/out"))
    val each = refusal(plan, true, query(outputs("directory"), "foreachOutput=true"))
    assert(each.contains("foreachOutput(tag, df, batchId)"), each)
    assert(refusal(plan, true, query("outputs=[]")).contains("at least one output"))
  }

  test("one sink: one kind of output, one Kafka cluster") {
    val mixed =
      """outputs=[{"tag": "main", "kind": "kafka", "written": "k"}, {"tag": "late", "kind": "row", "written": "r"}]"""
    assert(refusal(plan, true, query(mixed)).contains("all sw.toKafka(...) or all sw.forEachRow(...)"))
    assert(refusal(plan, true, query("kafkaSinks=2")).contains("same bootstrapServers"))
  }

  test("a batch's tasks need a slot each, counted where the sources could be") {
    val slots = refusal(plan, true, query("taskSlots=2"))
    assert(slots.contains("4 Kafka partitions and 2 shuffle partitions"), slots)
    assert(slots.contains("need 6 task slots, and this cluster has 2") && slots.contains("at most 1"), slots)
    PlanRules.refuseRealTime(plan, Some(true), query("taskSlots=6"))
    PlanRules.refuseRealTime(plan, Some(true), query("taskSlots=2", "sources=null"))
  }

  test("the plan is judged before the query, and a description that does not read is refused") {
    assert(refusal(plan, false, query("outputs=[]")).contains("runs streams only"))
    intercept[PlanException](RealTimeQuery.parse("{not json"))
  }
}
