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
    Gen.oneOf(10, 200, 600).map(nested), // deeper nesting goes in as text (hostilePlan)
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
      1 -> Gen.oneOf(1001, 5000, 100000).map { depth =>
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
    (
      "PlanRules",
      "the plan rules: a hostile plan passes or breaks a rule",
      p => PythonEntryPoint.validate(p, false)
    )
  )

  for ((target, what, body) <- targets)
    test(s"fuzz $what, or is refused with a PlanException") {
      val outcome =
        Fuzz.run(
          target,
          Fuzz.cases(500),
          hostilePlan,
          (s: String) => s.length,
          (s: String) => s,
          bound,
          5000
        )(
          typed
        )(body)
      Fuzz.passed(outcome)
    }
}
