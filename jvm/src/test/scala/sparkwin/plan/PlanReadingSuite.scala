package sparkwin.plan

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode

import sparkwin.gateway.PythonEntryPoint

/** Reading a plan's text ([[PlanDecoder.parse]], the one reader): nesting bounded before any walk
  * of the tree, nothing after the plan's object, a plan version of the right kind, and messages
  * that quote the plan's pieces only so far. Each failure is a [[PlanException]] from every entry
  * the gateways answer (the decoder, `describe`, `validate`).
  */
class PlanReadingSuite extends munit.FunSuite {
  private val mapper = new ObjectMapper()

  private val plan: String = {
    val f = new java.io.File(sparkwin.TestSupport.scenarioDirectory, "tumbling.json")
    mapper.writeValueAsString(mapper.readTree(f).get("scenarios").get(0).get("plan"))
  }

  /** The plan with `nested` (a JSON value) as the value of an extra field, ahead of `keys`. */
  private def withExtra(nested: String): String =
    plan.replaceFirst("\"keys\":", s""""extra": $nested, "keys":""")

  private def arrays(depth: Int): String = "[" * depth + "]" * depth

  /** The plan (an object, level 1) nesting `depth` levels in all: an extra field of arrays. */
  private def nestingTo(depth: Int): String = withExtra(arrays(depth - 1))

  /** Every way a gateway reads a plan, each to a PlanException (or an answer). */
  private val readers: Seq[(String, String => Any)] = Seq(
    "decode" -> (p => PlanDecoder.decode(p)),
    "describe" -> (p => PythonEntryPoint.describe(p, false)),
    "validate" -> (p => PythonEntryPoint.validate(p, true))
  )

  /** `body` on a thread with a small stack, as a cold JIT's deep frames would leave it: what it
    * threw (null: nothing).
    */
  private def onASmallStack(body: => Any): Throwable = {
    var thrown: Throwable = null
    val t = new Thread(
      null,
      () =>
        try body
        catch { case e: Throwable => thrown = e },
      "small-stack",
      192L * 1024
    )
    t.start()
    t.join()
    thrown
  }

  test("a plan nested deeper than Limits.MaxPlanNesting is refused at the place, by every reader") {
    for (depth <- Seq(800, 999, Limits.MaxPlanNesting + 1, 5000); (name, read) <- readers) {
      val thrown = onASmallStack(read(nestingTo(depth)))
      assert(thrown.isInstanceOf[PlanException], s"$name at $depth: $thrown")
      assertEquals(thrown.getCause, null, s"$name at $depth: a PlanException on purpose")
      val at = "/extra" + "/0" * (Limits.MaxPlanNesting - 2)
      assert(
        thrown.getMessage.startsWith(
          s"the plan's JSON nests more than ${Limits.MaxPlanNesting} levels deep (objects and arrays), at $at"
        ),
        s"$name at $depth: ${thrown.getMessage}"
      )
    }
  }

  test("a schema nested hundreds of levels deep is refused before Spark's reader or describe's walk it") {
    // Each struct is three levels of JSON: 300 of them, 900 levels, under Jackson's own 1,000;
    // describe's union schema holds the input one level deeper still.
    val struct = (1 to 300).foldLeft(""""long"""")((t, _) =>
      s"""{"type": "struct", "fields": [{"name": "n", "type": $t, "nullable": true, "metadata": {}}]}"""
    )
    val node = mapper.readTree(plan).asInstanceOf[ObjectNode]
    val column = s"""{"name": "deep", "type": $struct, "nullable": true, "metadata": {}}"""
    node
      .get("inputSchema")
      .get("fields")
      .asInstanceOf[com.fasterxml.jackson.databind.node.ArrayNode]
      .add(mapper.readTree(column))
    val json = mapper.writeValueAsString(node)
    for ((name, read) <- readers) {
      val thrown = onASmallStack(read(json))
      assert(thrown.isInstanceOf[PlanException] && thrown.getCause == null, s"$name: $thrown")
      assert(
        thrown.getMessage.contains(s"nests more than ${Limits.MaxPlanNesting} levels deep"),
        thrown.getMessage
      )
    }
  }

  test("nesting up to the limit is read, and then the contract speaks") {
    val e = intercept[PlanException](PlanDecoder.decode(nestingTo(Limits.MaxPlanNesting)))
    assert(e.getMessage.startsWith("plan has fields the contract does not know: extra"), e.getMessage)
    assert(PythonEntryPoint.validate(nestingTo(Limits.MaxPlanNesting), true).contains("\"defaults\""))
  }

  test("the deepest trigger tree the rules take nests well under the plan's limit") {
    val node = mapper.readTree(plan).asInstanceOf[ObjectNode]
    val count = """{"kind": "count", "count": 3}"""
    // afterEach nests two levels a trigger (its list and the item): the deepest kind there is.
    val deepest = (2 to Limits.MaxTriggerNesting).foldLeft(count)((t, _) =>
      s"""{"kind": "afterEach", "triggers": [$t, $count]}"""
    )
    node.set("trigger", mapper.readTree(deepest))
    assertEquals(PlanRules.check(PlanDecoder.parse(mapper.writeValueAsString(node)), Some(true)), None)
    val stored = sparkwin.TestSupport.scenarioDirectory.listFiles().toSeq.filter(_.getName.endsWith(".json"))
    val depths =
      stored.flatMap(f => mapper.readTree(f).get("scenarios").asScala.map(s => depth(s.get("plan"))))
    assert(depths.max < Limits.MaxPlanNesting / 4, depths.max)
  }

  private def depth(n: com.fasterxml.jackson.databind.JsonNode): Int =
    if (n.isContainerNode) 1 + n.elements().asScala.map(depth).foldLeft(0)(math.max) else 0

  test("anything but white space after the plan's object is refused, naming where it starts") {
    for (
      (after, quoted) <- Seq(
        plan -> plan.take(Limits.MaxQuotedChars),
        " junk" -> "junk",
        "}" -> "}",
        "\n[1]" -> "[1]",
        "{" -> "{",
        "\"x\"" -> "\"x\""
      );
      (name, read) <- readers
    ) {
      val e = intercept[PlanException](read(plan + after))
      assert(
        e.getMessage.startsWith(s"the plan's JSON goes on after its object ends, at character ") &&
          e.getMessage.contains(s": '$quoted"),
        s"$name, ${after.take(20)}: ${e.getMessage}"
      )
      assert(e.getMessage.length < 1000, s"$name: ${e.getMessage.length} characters")
    }
    assert(PythonEntryPoint.validate(plan + " \n\t ", true).contains("\"defaults\""))
  }

  test("a plan version of the wrong kind says what was found") {
    for (
      (version, found) <- Seq(
        "\"x\"" -> "string \"x\"",
        "\"1\"" -> "string \"1\"",
        "[1]" -> "array [1]",
        "{}" -> "object {}",
        "1.5" -> "number 1.5",
        "true" -> "boolean true",
        "99999999999" -> "number 99999999999"
      );
      (name, read) <- readers.take(2) // validate asks the rules of a plan so far only
    ) {
      val bad = plan.replaceFirst("\"planVersion\":\\s*1", s""""planVersion": $version""")
      val e = intercept[PlanException](read(bad))
      assertEquals(
        e.getMessage,
        s"planVersion must be a whole number, the plan format's version (1 for this jar), got $found",
        name
      )
    }
  }

  test("a plan that lacks a field quotes only the start of what it lacks it in") {
    val node = mapper.readTree(plan).asInstanceOf[ObjectNode]
    node.remove("planVersion")
    node.put("pad", "a" * 100000)
    val e = intercept[PlanException](PlanDecoder.decode(mapper.writeValueAsString(node)))
    assert(e.getMessage.startsWith("the plan lacks 'planVersion' in {"), e.getMessage)
    assert(e.getMessage.length < 1000, e.getMessage.length)
  }

  test("triggers nested past the limit are named by their place; the message stays short") {
    val node = mapper.readTree(plan).asInstanceOf[ObjectNode]
    // 40 deep (80 levels of JSON, under the plan's limit), each trigger with 50 more beside it.
    val siblings = Seq.fill(50)("""{"kind": "count", "count": 3}""").mkString(", ")
    val tree = (1 to 40).foldLeft("""{"kind": "eventTime"}""")((t, _) =>
      s"""{"kind": "afterFirst", "triggers": [$t, $siblings]}"""
    )
    node.set("trigger", mapper.readTree(tree))
    val json = mapper.writeValueAsString(node)
    assert(json.length > 50000, json.length)
    val at = "/trigger" + "/triggers/0" * Limits.MaxTriggerNesting
    val words = s"trigger: triggers nest more than 32 deep (the one at $at is 33 deep); at most 32"
    val refusal = PlanRules.check(mapper.readTree(json), Some(true)).get
    assert(refusal.message.startsWith(words), refusal.message)
    for ((name, read) <- readers.take(2)) {
      val e = intercept[PlanException](read(json))
      assert(e.getMessage.startsWith(words), s"$name: ${e.getMessage.take(300)}")
      assert(e.getMessage.length < 1000, s"$name: ${e.getMessage.length} characters")
    }
  }

  test("a refusal quotes each piece it names only so far") {
    val node = mapper.readTree(plan).asInstanceOf[ObjectNode]
    val sliding = mapper.createObjectNode()
    sliding.put("kind", "sliding").put("sizeMs", 86400000L).put("slideMs", 1L).put("offsetMs", 0L)
    sliding.put("eventTime", true).put("pad", "a" * 50000)
    node.set("assigner", sliding)
    val refusal = PlanRules.check(node, Some(true)).getOrElse(fail("no refusal"))
    assertEquals(refusal.rule, "windowsPerElementAtMost")
    val rendered = refusal.rendered(node)
    assert(rendered.contains("... (49"), rendered)
    assert(rendered.length < 1000, rendered.length)
    val e = intercept[PlanException](PlanDecoder.decode(mapper.writeValueAsString(node)))
    assert(e.getMessage.length < 1000, e.getMessage.take(300))
  }

  test("more windows per element than the limit is a rule's refusal, naming the assigner and the fix") {
    val node = mapper.readTree(plan).asInstanceOf[ObjectNode]
    node.set(
      "assigner",
      mapper.readTree(
        """{"kind": "sliding", "sizeMs": 86400000, "slideMs": 1, "offsetMs": 0, "eventTime": true}"""
      )
    )
    val json = mapper.writeValueAsString(node)
    val e = intercept[PlanException](PlanDecoder.decode(json))
    assert(
      e.getMessage.startsWith(
        """window: {"kind":"sliding","sizeMs":86400000,"slideMs":1,"offsetMs":0,"eventTime":true} gives 86400000 """ +
          s"windows per element (its size, 86400000 ms, over its slide, 1 ms); an element is in at most " +
          s"${Limits.MaxWindowsPerElement} windows: use a larger slide or a smaller size"
      ),
      e.getMessage
    )
    assert(PythonEntryPoint.validate(json, true).contains("\"rule\":\"windowsPerElementAtMost\""))
    node.set(
      "assigner",
      mapper.readTree(
        """{"kind": "sliding", "sizeMs": 1000000, "slideMs": 1, "offsetMs": 0, "eventTime": true}"""
      )
    )
    assertEquals(PlanRules.check(node, Some(true)), None) // at the limit
  }

  test("a piece's own check speaks without Scala's 'requirement failed'") {
    val node = mapper.readTree(plan).asInstanceOf[ObjectNode]
    node.set(
      "assigner",
      mapper.readTree("""{"kind": "tumbling", "sizeMs": 1000, "offsetMs": 5000, "eventTime": true}""")
    )
    val e = intercept[PlanException](PlanDecoder.decode(mapper.writeValueAsString(node)))
    assertEquals(e.getMessage, "|offset| must be smaller than size, got offset 5000")
  }
}
