package sparkwin.plan

import sparkwin.operator.algorithms.Algorithms
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import sparkwin.gateway.PythonEntryPoint
import sparkwin.operator.{Operator, WindowOperator}
import sparkwin.runtime.harness.Harness
import sparkwin.runtime.spark.task.SparkKeyBackend

/** Users' own triggers, assigners, evictors and aggregates (`sparkwin.api`, the plan's `jvm`
  * kinds): loading and checking when a plan is decoded, running in the engine, and their state
  * refused by a restart with another class or version. The extensions are Scala classes of the
  * test class path (`testext`), loaded by name as a user's jar would be.
  */
class ExtensionsSuite extends munit.FunSuite {
  private val mapper = new ObjectMapper()
  private val pkg = "sparkwin.plan.testext"

  private def jvm(className: String, params: String = "{}"): String =
    s"""{"kind": "jvm", "className": "$pkg.$className", "params": $params}"""

  private val count = """{"fn": "count", "alias": "n"}"""
  private val sum = """{"fn": "sum", "column": "amount", "alias": "total"}"""

  /** A plan over (user string, ts long, amount long) keyed by user. */
  private def plan(
      assigner: String = """{"kind": "tumbling", "sizeMs": 10, "offsetMs": 0, "eventTime": true}""",
      trigger: String = "null",
      evictor: String = "null",
      aggregates: Seq[String] = Seq(count)
  ): String =
    s"""{"planVersion": ${Contract.planVersion},
       |"inputSchema": {"type": "struct", "fields": [
       |  {"name": "user", "type": "string", "nullable": true, "metadata": {}},
       |  {"name": "ts", "type": "long", "nullable": true, "metadata": {}},
       |  {"name": "amount", "type": "long", "nullable": true, "metadata": {}}]},
       |"timestamp": "ts", "keys": ["user"], "assigner": $assigner, "trigger": $trigger,
       |"evictor": $evictor, "allowedLatenessMs": 0, "accumulationMode": "accumulating",
       |"function": {"kind": "aggregate", "aggregates": [${aggregates.mkString(", ")}]}}""".stripMargin

  private def refused(json: String): String = intercept[PlanException](PlanDecoder.decode(json)).getMessage

  private def harness(json: String) = new Harness(json, 1, false)
  private def add(h: Harness, user: String, ts: Long, amount: Long): Unit =
    h.processElement(s"""{"user": "$user", "ts": $ts, "amount": $amount}""", 0)

  /** Results as "window_start pane_timing column...", in emission order. */
  private def results(h: Harness, columns: String*): List[String] =
    mapper.readTree(h.extractOutput()).elements().asScala.toList.map { r =>
      (Seq(r.get("window_start"), r.get("pane_timing")) ++ columns.map(r.get)).map(_.asText).mkString(" ")
    }

  // -------------------------------------------------------------------------------------------
  // Loading and checking

  test("a named class that is not an extension is refused without running its static initializer") {
    val probe = s"$pkg.StaticInitProbe"
    System.clearProperty("sparkwin.test.staticInitProbe")
    for (role <- Seq("trigger", "evictor", "aggregate")) {
      val json = role match {
        case "trigger" => plan(trigger = jvm("StaticInitProbe"))
        case "evictor" => plan(evictor = jvm("StaticInitProbe"))
        case _ =>
          plan(aggregates =
            Seq(s"""{"fn": "jvm", "className": "$probe", "columns": ["amount"], "alias": "x"}""")
          )
      }
      val message = intercept[PlanException](PlanDecoder.decode(json)).getMessage
      assert(message.contains(s"$probe does not implement"), message)
    }
    assertEquals(System.getProperty("sparkwin.test.staticInitProbe"), null, "its static initializer ran")
    // The probe does record it: initializing the class sets the property.
    Class.forName(probe, true, getClass.getClassLoader)
    assertEquals(System.getProperty("sparkwin.test.staticInitProbe"), "ran")
  }

  test("a missing class is refused naming the class and how to add its jar") {
    val message = refused(plan(trigger = jvm("Nowhere")))
    assert(message.contains(s"trigger: no class $pkg.Nowhere on the class path"), message)
    assert(message.contains("sparkwin.jvm.addJar"), message)
  }

  test("a class of the wrong kind is refused naming the interface to implement") {
    val message = refused(plan(trigger = jvm("NotAnExtension")))
    assert(message.contains(s"$pkg.NotAnExtension does not implement sparkwin.api.Trigger"), message)
    val assigner = refused(plan(assigner = jvm("EveryN", """{"n": 2}""")))
    assert(assigner.contains("does not implement sparkwin.api.WindowAssigner"), assigner)
  }

  test("a class without a usable constructor is refused saying which ones work") {
    val message = refused(plan(trigger = jvm("NeedsAString")))
    assert(message.contains("needs a public constructor taking a sparkwin.api.Setup"), message)
  }

  test("params: missing, of the wrong kind, unknown or rejected by the extension, each named") {
    assert(refused(plan(trigger = jvm("EveryN"))).contains("param 'n' is required: pass it, e.g. {\"n\": 3}"))
    val kind = refused(plan(trigger = jvm("EveryN", """{"n": "three"}""")))
    assert(kind.contains(s"""trigger $pkg.EveryN: param 'n' must be a whole number, got "three""""), kind)
    val unknown = refused(plan(trigger = jvm("EveryN", """{"n": 2, "m": 1}""")))
    assert(
      unknown.contains("unknown param 'm' (it reads n, version): remove it or correct its name"),
      unknown
    )
    val own = refused(plan(trigger = jvm("EveryN", """{"n": 0}""")))
    assert(own.contains(s"trigger $pkg.EveryN: param 'n' must be positive, got 0"), own)
    val none = refused(plan(trigger = jvm("SneakyTimer", """{"n": 1}""")))
    assert(none.contains("unknown param 'n' (it reads no params)"), none)
  }

  test("a column param names a column of the input, or the error lists them") {
    val message = refused(plan(evictor = jvm("KeepLargest", """{"column": "price", "k": 1}""")))
    assert(message.contains("param 'column': no column 'price'; the input has user, ts, amount"), message)
  }

  test("a trigger's states and an aggregate's result type are checked") {
    assert(refused(plan(trigger = jvm("TwiceDeclared"))).contains("declares the state 'a' twice"))
    val agg = s"""{"fn": "jvm", "className": "$pkg.MapResult", "columns": [], "alias": "m"}"""
    val message = refused(plan(aggregates = Seq(agg)))
    assert(message.contains("resultType() is 'map<string,int>'"), message)
    val wrongColumn = s"""{"fn": "jvm", "className": "$pkg.Spread", "columns": ["user"], "alias": "s"}"""
    assert(refused(plan(aggregates = Seq(wrongColumn))).contains("Spread takes one bigint column"))
  }

  test("describe reports a user's assigner's clock, and the trigger's clocks pick the time mode") {
    def described(json: String) = mapper.readTree(PythonEntryPoint.describe(json, java8Time = false))
    val eventTime = described(plan(assigner = jvm("ShiftedWindows", """{"sizeMs": 10}""")))
    assert(eventTime.get("assigner").get("eventTime").asBoolean)
    assert(eventTime.get("algorithm").asText.contains(s"""assigner $pkg.ShiftedWindows{"sizeMs":10}"""))
    val processing =
      described(plan(assigner = jvm("ShiftedWindows", """{"sizeMs": 10, "eventTime": false}""")))
    assert(!processing.get("assigner").get("eventTime").asBoolean)
    val global = """{"kind": "global"}"""
    assertEquals(described(plan(global, jvm("EveryN", """{"n": 2}"""))).get("timeMode").asText, "EventTime")
    // Processing-time timers wake through sparkwin's clock, not Spark's timers.
    val ticking = described(plan(global, jvm("ProcessingTick")))
    assertEquals(ticking.get("timeMode").asText, "None")
    assert(ticking.get("clock").asBoolean)
  }

  // -------------------------------------------------------------------------------------------
  // Running

  test("a user's trigger fires every n elements and at the window's end") {
    val h = harness(plan(trigger = jvm("EveryN", """{"n": 2}"""), aggregates = Seq(count, sum)))
    Seq(1L -> 1L, 2L -> 2L, 3L -> 4L, 12L -> 8L).foreach { case (ts, amount) => add(h, "a", ts, amount) }
    assertEquals(results(h, "n", "total"), List("0 EARLY 2 3"))
    h.processWatermark(9, 0)
    assertEquals(results(h, "n", "total"), List("0 ON_TIME 3 7"))
    add(h, "a", 15, 16)
    assertEquals(results(h, "n", "total"), List("10 EARLY 2 24"))
    h.endOfInput()
    assertEquals(results(h, "n", "total"), List("10 ON_TIME 2 24"))
  }

  test("a user's trigger merges its state on session windows") {
    val sessions = """{"kind": "session", "gapMs": 10, "eventTime": true}"""
    val h = harness(plan(sessions, jvm("EveryN", """{"n": 3}""")))
    add(h, "a", 0, 1)
    add(h, "a", 20, 1)
    add(h, "a", 10, 1) // merges [0, 10), [10, 20) and [20, 30): three elements, one firing
    assertEquals(results(h, "n"), List("0 EARLY 3"))
  }

  test("a timer on an undeclared clock, or undeclared state, fails naming the trigger") {
    val sneaky = intercept[IllegalStateException](add(harness(plan(trigger = jvm("SneakyTimer"))), "a", 1, 1))
    assert(
      sneaky.getMessage.contains("registers an event-time timer, but its usesEventTimeTimers() is false")
    )
    val state =
      intercept[IllegalStateException](add(harness(plan(trigger = jvm("UndeclaredState"))), "a", 1, 1))
    assert(state.getMessage.contains("uses the state 'seen' that it does not declare in states()"))
  }

  test("a user's assigner makes the windows, and an empty window sends the element to errors") {
    val h = harness(plan(assigner = jvm("ShiftedWindows", """{"sizeMs": 10, "shiftMs": 3}""")))
    Seq(2L, 3L, 12L, 13L).foreach(add(h, "a", _, 1))
    h.endOfInput()
    assertEquals(results(h, "n").toSet, Set("-7 ON_TIME 1", "3 ON_TIME 2", "13 ON_TIME 1"))
    val broken = harness(plan(assigner = jvm("ShiftedWindows", """{"sizeMs": 10, "broken": true}""")))
    add(broken, "a", 5, 1)
    val errors = mapper.readTree(broken.extractSideOutput("errors"))
    assert(errors.get(0).get("error").asText.contains("assigned the window [5, 5), which is empty"), errors)
  }

  test("a user's evictor removes elements before the aggregates see them") {
    val global = """{"kind": "global"}"""
    val h = harness(
      plan(
        global,
        """{"kind": "count", "count": 4}""",
        jvm("KeepLargest", """{"column": "amount", "k": 2}"""),
        Seq(count, sum)
      )
    )
    Seq(5L, 1L, 9L, 3L).zipWithIndex.foreach { case (amount, i) => add(h, "a", i.toLong, amount) }
    assertEquals(mapper.readTree(h.extractOutput()).get(0).get("total").asLong, 14L)
  }

  test("a user's aggregate over sliding windows, merged from slices, equals a direct computation") {
    val spread = s"""{"fn": "jvm", "className": "$pkg.Spread", "columns": ["amount"], "alias": "spread"}"""
    val sliding = """{"kind": "sliding", "sizeMs": 30, "slideMs": 10, "offsetMs": 0, "eventTime": true}"""
    val json = plan(sliding, aggregates = Seq(spread))
    assert(PythonEntryPoint.describe(json, java8Time = false).contains("sliced"))
    val rnd = new scala.util.Random(7)
    val rows = (0 until 200).map(_ => (rnd.nextInt(300).toLong, rnd.nextInt(1000).toLong - 500))
    val h = harness(json)
    rows.foreach { case (ts, amount) => add(h, "a", ts, amount) }
    h.endOfInput()
    val got = results(h, "spread").toSet
    val expected = rows
      .flatMap { case (ts, _) => (0 until 3).map(i => ts - ts % 10 - 10 * i) }
      .distinct
      .map { start =>
        val in = rows.collect { case (ts, amount) if ts >= start && ts < start + 30 => amount }
        s"$start ON_TIME ${in.max - in.min}"
      }
      .toSet
    assertEquals(got, expected)
  }

  // -------------------------------------------------------------------------------------------
  // State across restarts

  /** Runs `first` for one key, saves its state as Spark would, and resumes it with `second`. */
  private def restart(first: String, second: String): Unit = {
    def open(json: String, bytes: Array[Byte]) = {
      val spec = PlanDecoder.decode(json).spec
      val backend = new SparkKeyBackend(spec.aggregates)
      val operator = Algorithms.operator(spec, backend, new sparkwin.TestSupport.Collect)
      backend.load("a", bytes)
      (backend, operator)
    }
    val (backend, operator) = open(first, null)
    operator.processElement(new sparkwin.core.ArrayRecord(Array("a", 1L, 5L)), 1L)
    var bytes: Array[Byte] = null
    backend.save(b => bytes = b, () => ())
    assert(operator.isInstanceOf[WindowOperator])
    open(second, bytes)
  }

  test("trigger state is saved under the class and version: another one is refused by name") {
    val v1 = plan(trigger = jvm("EveryN", """{"n": 3}"""))
    restart(v1, plan(trigger = jvm("EveryN", """{"n": 5}"""))) // the same class and version resume
    val version = intercept[IllegalStateException](
      restart(v1, plan(trigger = jvm("EveryN", """{"n": 3, "version": 2}""")))
    )
    assert(version.getMessage.contains(s"trigger state '$pkg.EveryN.count' of version 1"), version.getMessage)
    val purging = s"""{"kind": "purging", "nested": ${jvm("EveryN", """{"n": 3}""")}}"""
    val moved = intercept[IllegalStateException](restart(v1, plan(trigger = purging)))
    assert(
      moved.getMessage.contains(s"trigger state '$pkg.EveryN.count' that the pipeline's trigger"),
      moved.getMessage
    )
  }

  test("an aggregate's saved fields carry its class and version: another one is refused") {
    def spread(params: String) =
      s"""{"fn": "jvm", "className": "$pkg.Spread", "columns": ["amount"], "params": $params, "alias": "s"}"""
    val lateness = (json: String) => json.replace("\"allowedLatenessMs\": 0", "\"allowedLatenessMs\": 5")
    val v1 = lateness(plan(aggregates = Seq(spread("{}"))))
    restart(v1, v1)
    val v2 = intercept[IllegalStateException](
      restart(v1, lateness(plan(aggregates = Seq(spread("""{"version": 2}""")))))
    )
    assert(
      v2.getMessage.contains(s"aggregate 's' saved by $pkg.Spread version 1, but the pipeline's is"),
      v2.getMessage
    )
  }
}
