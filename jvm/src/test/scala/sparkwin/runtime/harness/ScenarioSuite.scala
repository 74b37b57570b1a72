package sparkwin.runtime.harness

import java.io.File

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** The engine transcripts in `tests/scenarios` (JSON files), run through the harness behind
  * `sparkwin.testing.WindowHarness` with each scenario's stored plan and no Python. pytest runs
  * the same files through the Python API (`tests/test_scenarios.py`), which also checks that the
  * builder still makes the stored plan.
  */
class ScenarioSuite extends munit.FunSuite {
  private val mapper = new ObjectMapper()

  private val directory: File = {
    // sbt may run tests from the repository root or from jvm/.
    val start = new File(".").getAbsoluteFile
    Iterator
      .iterate(start)(_.getParentFile)
      .takeWhile(_ != null)
      .map(new File(_, "tests/scenarios"))
      .find(_.isDirectory)
      .getOrElse(throw new IllegalStateException(s"no tests/scenarios above $start"))
  }

  private val files =
    Option(directory.listFiles()).toSeq.flatten.filter(_.getName.endsWith(".json")).sortBy(_.getName)

  test("the scenario files are there") {
    assert(files.size >= 7, files.map(_.getName))
  }

  for (file <- files; scenario <- mapper.readTree(file).get("scenarios").asScala) {
    test(s"${file.getName.stripSuffix(".json")}: ${scenario.get("name").asText}")(run(scenario))
  }

  private def run(scenario: JsonNode): Unit = {
    val channels = Option(scenario.get("channels")).map(_.asInt).getOrElse(1)
    val h = new Harness(mapper.writeValueAsString(scenario.get("plan")), channels, false)
    scenario.get("steps").asScala.zipWithIndex.foreach { case (step, i) =>
      val kind = step.get(0).asText
      def arg: JsonNode = step.get(1)
      def channel: Int = if (step.size > 2) step.get(2).asInt else 0
      val where = s"step $i $kind"
      kind match {
        case "element" => h.processElement(mapper.writeValueAsString(arg), channel)
        case "watermark" => h.processWatermark(arg.asLong, channel)
        case "idle" => h.markIdle(arg.asInt)
        case "active" => h.markActive(arg.asInt)
        case "processingTime" => h.setProcessingTime(arg.asLong)
        case "endOfInput" => h.endOfInput()
        case "output" => assertEquals(project(h.extractOutput(), arg).sorted, rows(arg).sorted, where)
        case "outputInOrder" => assertEquals(project(h.extractOutput(), arg), rows(arg), where)
        case "errors" =>
          assertEquals(project(h.extractSideOutput("errors"), arg).sorted, rows(arg).sorted, where)
        case "late" =>
          assertEquals(rows(mapper.readTree(h.extractSideOutput("late"))).sorted, rows(arg).sorted, where)
        case "state" => assertEquals(h.numStateEntries(), arg.asInt, where)
        case "metrics" =>
          val metrics = mapper.readTree(h.metrics())
          arg.fieldNames.asScala
            .foreach(k => assertEquals(metrics.get(k).asLong, arg.get(k).asLong, s"$where: $k"))
        case "dropped" => assertEquals(h.numLateRecordsDropped(), arg.asLong, where)
        case "currentWatermark" => assertEquals(h.currentWatermark(), arg.asLong, where)
        case "channels" =>
          // The harness says Long.MinValue where Python says None: no watermark yet.
          val status = mapper.readTree(h.channelStatus())
          status.asScala.foreach { c =>
            if (c.get("watermark").asLong == Long.MinValue)
              c.asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode].putNull("watermark")
          }
          assertEquals(project(status, arg), rows(arg), where)
        case other => fail(s"$where: unknown step $other")
      }
    }
  }

  private def rows(node: JsonNode): Seq[String] = node.asScala.toSeq.map(canonical)

  /** Each row cut down to the columns the expected rows name, as canonical JSON. */
  private def project(json: String, expected: JsonNode): Seq[String] =
    project(mapper.readTree(json), expected)

  private def project(got: JsonNode, expected: JsonNode): Seq[String] = {
    val names = expected.asScala.flatMap(_.fieldNames.asScala).toSet
    got.asScala.toSeq.map { row =>
      val kept = mapper.createObjectNode()
      row.fieldNames.asScala.filter(names).foreach(k => kept.set[JsonNode](k, row.get(k)))
      canonical(kept)
    }
  }

  /** JSON with sorted keys, so rows compare as text. */
  private def canonical(node: JsonNode): String = {
    val sorted = new java.util.TreeMap[String, JsonNode]()
    node.fieldNames.asScala.foreach(k => sorted.put(k, node.get(k)))
    mapper.writeValueAsString(sorted)
  }
}
