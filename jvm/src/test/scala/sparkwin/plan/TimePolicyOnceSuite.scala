package sparkwin.plan

import java.io.File

import org.apache.spark.sql.types._

import sparkwin.PackageLayersSuite.PackageLayers

/** A plan's decisions about time are made once, with the plan, and every runtime asks that one
  * policy (DESIGN.md, "One owner of time").
  */
class TimePolicyOnceSuite extends munit.FunSuite {
  private val schema = StructType(Seq(StructField("user", StringType), StructField("ts", LongType)))
  private val json =
    s"""{"planVersion": 1, "inputSchema": ${schema.json}, "timestamp": "ts", "keys": ["user"],
        "watermark": null, "arrival": null, "channel": null, "channels": null,
        "assigner": {"kind": "tumbling", "sizeMs": 10, "offsetMs": 0, "eventTime": false},
        "trigger": null, "evictor": null, "allowedLatenessMs": 0, "lateOutputTag": null,
        "accumulationMode": "accumulating", "ansi": true,
        "function": {"kind": "aggregate", "aggregates": [{"fn": "count", "alias": "n"}]}}"""

  test("a plan builds its policy once per mode, and every ask gets that one") {
    val plan = PlanDecoder.decode(json)
    assert(plan.time eq plan.time)
    assert(TimePolicy.of(plan) eq plan.time)
    assert(plan.timeIn(RunMode.MicroBatch) eq plan.time)
    assert(plan.timeIn(RunMode.RealTime) eq plan.timeIn(RunMode.RealTime))
    assert(!(plan.timeIn(RunMode.RealTime) eq plan.time))
    // An executor decodes through the cache, so its tasks share one policy per plan too.
    assert(PlanDecoder.cached(json).time eq PlanDecoder.cached(json).time)
  }

  test("only TimePolicy.scala constructs a policy") {
    val Construct = """(?<![\w.])TimePolicy\(""".r
    val builders = PackageLayers
      .sources(new File("src/main"))
      .filter(s => Construct.findFirstIn(PackageLayers.code(s.text)).isDefined)
      .map(s => new File(s.name).getName)
    assertEquals(builders, List("TimePolicy.scala"))
  }
}
