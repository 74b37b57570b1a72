package sparkwin.plan

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.{ArrayNode, JsonNodeFactory, ObjectNode}
import org.scalacheck.Gen

import sparkwin.Fuzz
import sparkwin.gateway.PythonEntryPoint

/** Plans from clients sparkwin does not trust (a shared Spark Connect server takes any client's):
  * the stored scenarios' plans, mutated along the JSON's grammar (fields removed, added, of the
  * wrong type, huge numbers, deep nesting, long and unicode strings, aggregates twice) or as
  * text, are decoded (and their rules asked) to a plan or a [[PlanException]], never another
  * exception, within a time limit and a bounded allocation.
  */
class PlanFuzzSuite extends munit.FunSuite {
  private val mapper = new ObjectMapper()
  private val nodes = JsonNodeFactory.instance

  private val plans: Seq[String] = {
    val dir = sparkwin.TestSupport.scenarioDirectory
    dir.listFiles().toSeq.filter(_.getName.endsWith(".json")).sortBy(_.getName).flatMap { f =>
      mapper.readTree(f).get("scenarios").asScala.map(s => mapper.writeValueAsString(s.get("plan")))
    }
  }

  /** Every container node of `root` with the place of each child: (parent, field or index). */
  private def places(root: JsonNode): IndexedSeq[(JsonNode, Either[String, Int])] = {
    val out = IndexedSeq.newBuilder[(JsonNode, Either[String, Int])]
    def walk(n: JsonNode): Unit = n match {
      case o: ObjectNode => o.fieldNames.asScala.toList.foreach { f => out += ((o, Left(f))); walk(o.get(f)) }
      case a: ArrayNode => (0 until a.size).foreach { i => out += ((a, Right(i))); walk(a.get(i)) }
      case _ =>
    }
    walk(root)
    out.result()
  }

  private def nested(depth: Int): JsonNode = {
    val root = nodes.arrayNode()
    var at = root
    (1 until depth).foreach(_ => at = at.addArray())
    root
  }

  /** A value of another kind than a plan expects, or at the edge of what its kind holds. */
  private val hostileValue: Gen[JsonNode] = Gen.oneOf[JsonNode](
    Gen.const(nodes.nullNode()),
    Gen.oneOf(true, false).map(b => nodes.booleanNode(b)),
    Gen
      .oneOf(Long.MaxValue, Long.MinValue, -1L, 0L, Int.MaxValue.toLong + 1, 1L << 53)
      .map(l => nodes.numberNode(l)),
    Gen.oneOf(1e308, -1e308, 1e-300, 0.5, Double.MaxValue).map(d => nodes.numberNode(d)),
    Gen.const(nodes.numberNode(new java.math.BigInteger("1" + "0" * 40))),
    Gen
      .oneOf("", "x", "ü⏱𝄞\u0000", "count", "ts", "user", "jvm", "session", "\"}")
      .map(s => nodes.textNode(s)),
    Gen.choose(1000, 200000).map(n => nodes.textNode("a" * n)),
    Gen.oneOf(10, 120, 600).map(nested), // deeper nesting goes in as text (hostilePlan)
    Gen.const(nodes.objectNode()),
    Gen.const(nodes.arrayNode())
  )

  /** One grammar-aware mutation of a plan's tree (in place). */
  private val treeMutation: Gen[JsonNode => Unit] = Gen.choose(0, Int.MaxValue).flatMap { pick =>
    def place(root: JsonNode) = { val ps = places(root); if (ps.isEmpty) None else Some(ps(pick % ps.size)) }
    Gen.frequency(
      4 -> hostileValue.map(v =>
        (root: JsonNode) =>
          place(root).foreach {
            case (o: ObjectNode, Left(f)) => o.set[JsonNode](f, v.deepCopy[JsonNode]())
            case (a: ArrayNode, Right(i)) => a.set(i, v.deepCopy[JsonNode]())
            case _ =>
          }
      ),
      3 -> Gen.const((root: JsonNode) =>
        place(root).foreach {
          case (o: ObjectNode, Left(f)) => o.remove(f)
          case (a: ArrayNode, Right(i)) => a.remove(i)
          case _ =>
        }
      ),
      2 -> (for (name <- Gen.oneOf("extra", "kind", "alias", "fn", "className", "params"); v <- hostileValue)
        yield (root: JsonNode) =>
          place(root).foreach {
            case (o: ObjectNode, _) => o.set[JsonNode](name, v.deepCopy[JsonNode]())
            case (a: ArrayNode, _) => a.add(v.deepCopy[JsonNode]())
            case _ =>
          }),
      2 -> Gen
        .choose(1, 10000)
        .map(n =>
          (root: JsonNode) => {
            // aggregates repeated, aliases and all, up to thousands of them
            val aggs = Option(root.get("function")).flatMap(f => Option(f.get("aggregates")))
            aggs.collect { case a: ArrayNode if a.size > 0 => a }.foreach { a =>
              val first = a.get(0)
              (0 until n).foreach(_ => a.add(first.deepCopy[JsonNode]()))
            }
          }
        ),
      1 -> Gen
        .choose(0, Int.MaxValue)
        .map(other =>
          (root: JsonNode) => {
            // a value moved to another place: right types in the wrong spots
            val ps = places(root)
            if (ps.size > 1) {
              val (from, at) = ps(other % ps.size)
              val v = at.fold(from.get(_), from.get(_)).deepCopy[JsonNode]()
              place(root).foreach {
                case (o: ObjectNode, Left(f)) => o.set[JsonNode](f, v)
                case (a: ArrayNode, Right(i)) => a.set(i, v)
                case _ =>
              }
            }
          }
        )
    )
  }

  /** A plan that must be refused, and the words of its refusal; or one a refusal must not name
    * for them (None: any answer will do).
    */
  private final case class Hostile(
      text: String,
      mustRefuse: Option[String] = None,
      notFor: Option[String] = None
  )

  private val Nesting = "nests more than"
  private val Trailing = "goes on after its object ends"

  /** The plan's JSON with `value` as an extra field's (ahead of `keys`). */
  private def withExtra(json: String, value: String): String =
    json.replaceFirst("\"keys\":", "\"extra\": " + value + ", \"keys\":")

  /** A struct column `depth` structs deep (three levels of JSON each), as Spark writes a schema. */
  private def deepStruct(depth: Int): String =
    (1 to depth).foldLeft("\"long\"")((t, _) =>
      s"""{"type": "struct", "fields": [{"name": "n", "type": $t, "nullable": true, "metadata": {}}]}"""
    )

  /** Nesting near the plan's limit (arrays, objects, a schema's structs, triggers): past it the
    * parser refuses it, naming the depth; at or under it no refusal is about nesting.
    */
  private val nestedNearTheLimit: Gen[Hostile] = for {
    json <- Gen.oneOf(plans)
    depth <- Fuzz.depthsNear(Limits.MaxPlanNesting)
    kind <- Gen.oneOf("arrays", "objects", "schema", "triggers")
  } yield {
    val text = kind match {
      // The plan's object is level 1, the extra field's value level 2.
      case "arrays" => withExtra(json, "[" * (depth - 1) + "]" * (depth - 1))
      case "objects" => withExtra(json, "{\"a\": " * (depth - 1) + "1" + "}" * (depth - 1))
      case "schema" =>
        // inputSchema (2), its fields (3), the column (4), then three levels a struct.
        val column =
          s"""{"name": "deep", "type": ${deepStruct((depth - 4) / 3)}, "nullable": true, "metadata": {}}"""
        json.replaceFirst(
          "\"fields\":\\s*\\[",
          "\"fields\": [" + java.util.regex.Matcher.quoteReplacement(column) + ", "
        )
      case _ =>
        // trigger (2), then a level a repeatedly.
        val tree = (1 until depth - 1).foldLeft("{\"kind\": \"eventTime\"}")((t, _) =>
          s"""{"kind": "repeatedly", "nested": $t}"""
        )
        withExtra(json, "1")
          .replaceFirst(
            "\"extra\": 1, ",
            "\"trigger\": " + java.util.regex.Matcher.quoteReplacement(tree) + ", "
          )
          .replaceFirst("\"trigger\":\\s*null,", "")
    }
    val deepest = depthOf(text)
    if (deepest > Limits.MaxPlanNesting) Hostile(text, mustRefuse = Some(Nesting))
    else Hostile(text, notFor = Some(Nesting))
  }

  /** How deep `text` nests, counted as a stream of brackets outside strings. */
  private def depthOf(text: String): Int = {
    var (depth, deepest, inString, escaped) = (0, 0, false, false)
    text.foreach { c =>
      if (inString) {
        if (escaped) escaped = false else if (c == '\\') escaped = true else if (c == '"') inString = false
      } else if (c == '"') inString = true
      else if (c == '{' || c == '[') { depth += 1; deepest = math.max(deepest, depth) }
      else if (c == '}' || c == ']') depth -= 1
    }
    deepest
  }

  /** A valid plan followed by white space (read) or by anything else (refused, naming it). */
  private val trailed: Gen[Hostile] = for {
    json <- Gen.oneOf(plans)
    (after, refused) <- Fuzz.trailing(json)
  } yield
    if (refused) Hostile(json + after, mustRefuse = Some(Trailing))
    else Hostile(json + after, notFor = Some(Trailing))

  /** Values at the edges of Jackson's other read limits: numbers of about 1,000 digits, field
    * names of about 50,000 characters, strings up to the plan's own length.
    */
  private val atParserLimits: Gen[Hostile] = for {
    json <- Gen.oneOf(plans)
    value <- Gen.oneOf(
      Gen.oneOf(999, 1000, 1001).map("9" * _),
      Gen.oneOf(999, 1000, 1001).map(n => "0." + "5" * n),
      Gen.oneOf(49999, 50000, 50001).map(n => "{\"" + "k" * n + "\": 1}"),
      Gen
        .oneOf(Limits.MaxPlanChars - json.length - 40, Limits.MaxPlanChars - json.length - 20)
        .map(n => "\"" + "s" * math.max(n, 0) + "\"")
    )
  } yield Hostile(withExtra(json, value))

  private lazy val hostile: Gen[Hostile] =
    Gen.frequency(
      8 -> hostilePlan.map(Hostile(_)),
      1 -> nestedNearTheLimit,
      1 -> trailed,
      1 -> atParserLimits
    )

  /** A plan's JSON mutated along its grammar one to three times, or cut or changed as text. */
  private val hostilePlan: Gen[String] = Gen.oneOf(plans).flatMap { json =>
    Gen.frequency(
      8 -> Gen.choose(1, 3).flatMap(n => Gen.listOfN(n, treeMutation)).map { ms =>
        val root = mapper.readTree(json)
        ms.foreach(_(root))
        // Jackson writes no deeper than it reads (1000); deeper plans come as text below.
        try mapper.writeValueAsString(root)
        catch { case _: com.fasterxml.jackson.core.JsonProcessingException => json }
      },
      2 -> Fuzz.mutatedBytes(Seq(json.getBytes("UTF-8"))).map(b => new String(b, "UTF-8")),
      1 -> Gen.oneOf(700, 999, 1001, 5000, 100000).map { depth =>
        json.replaceFirst("\"keys\":", "\"keys\": " + "[" * depth + "]" * depth + ", \"was\": ")
      }
    )
  }

  private def bound(length: Int): Long = (64L << 20) + 4096L * length

  /** A refusal that is the plan's: a [[PlanException]] raised on purpose, not a crash caught by
    * the decoder's last guard (which keeps the cause).
    */
  private def typed(e: Throwable): Boolean = e.isInstanceOf[PlanException] && e.getCause == null

  test("the stored plans decode and pass their rules") {
    assert(plans.size >= 20, plans.size)
    plans.foreach { p => PlanDecoder.decode(p); PythonEntryPoint.validate(p, true) }
  }

  private val targets: Seq[(String, String, String => Any)] = Seq(
    ("PlanDecoder", "the plan decoder: a hostile plan decodes", p => PlanDecoder.decode(p, Some(true))),
    ("describe", "describe: a hostile plan is described", p => PythonEntryPoint.describe(p, false)),
    (
      "PlanRules",
      "the plan rules: a hostile plan passes or breaks a rule",
      p => PythonEntryPoint.validate(p, false)
    )
  )

  /** `body` held to what `input` says of it: a refusal it must give (with those words), or one it
    * must not give for a reason; an answer otherwise is an AssertionError, a failure.
    */
  private def judged(body: String => Any)(input: Hostile): Any = {
    val answer =
      try body(input.text)
      catch {
        case e: PlanException if input.notFor.exists(w => e.getMessage.contains(w)) =>
          throw new AssertionError(
            s"refused for what it is not (${input.notFor.get}): ${e.getMessage.take(200)}"
          )
        case e: PlanException if input.mustRefuse.forall(w => e.getMessage.contains(w)) => throw e
        case e: PlanException =>
          throw new AssertionError(s"refused, but not as ${input.mustRefuse.get}: ${e.getMessage.take(200)}")
      }
    input.mustRefuse.foreach(w => throw new AssertionError(s"accepted a plan that must be refused ($w)"))
    answer
  }

  for ((target, what, body) <- targets)
    test(s"fuzz $what, or is refused with a PlanException") {
      // Spark's schema reader loads its error messages at its first refusal (2.5 s on a loaded
      // machine): once per JVM, not an input's time.
      intercept[PlanException](PlanDecoder.decode(plans.head.replace("\"nullable\"", "\"nqllable\"")))
      val outcome =
        Fuzz.run(
          target,
          Fuzz.cases(500),
          hostile,
          (h: Hostile) => h.text.length,
          (h: Hostile) => h.text,
          bound,
          5000
        )(
          typed
        )(judged(body))
      Fuzz.passed(outcome)
    }
}
