package sparkwin.gateway

import sparkwin.plan._
import sparkwin.runtime.spark._
import sparkwin.runtime.checkpoint.{Admission, CheckpointFiles, Migration, Relocation, StateReader}
import sparkwin.runtime.harness.Harness
import sparkwin.runtime.spark.query.{
  HostChoice,
  KeyGroupCount,
  RealTimeChecks,
  ReplayHandle,
  ReplayRuntime,
  SparkRuntime
}
import sparkwin.runtime.spark.task.{BatchRunner, OutputLayout}

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.NullNode
import org.apache.spark.sql.{DataFrame, Dataset, Row, SparkSession}

import sparkwin.BuildInfo
import sparkwin.operator.Selection

/** The one object Python reaches through Py4J (`jvm.sparkwin.gateway.PythonEntryPoint`).
  *
  * Every method takes and returns Py4J-friendly values (strings, numbers, Java Datasets), so
  * the Python side stays a thin wrapper.
  */
object PythonEntryPoint {
  private val mapper = new ObjectMapper()

  /** The jar's version; Python refuses to run against a jar of another version. */
  def version(): String = BuildInfo.version

  /** The contract the jar was built with (contract.json), for Python to compare with its own. */
  def contract(): String = Contract.text

  /** The hidden computed input columns of `df` that are not deterministic: a JSON list of
    * [name, sql] (`SparkRuntime.nondeterministicInputs`).
    */
  def nondeterministicInputs(df: DataFrame): String = {
    val found = mapper.createArrayNode()
    SparkRuntime.nondeterministicInputs(df).foreach { case (n, s) => found.addArray().add(n).add(s) }
    mapper.writeValueAsString(found)
  }

  /** The Spark version the jar was compiled against. */
  def sparkVersion(): String = BuildInfo.sparkVersion

  /** The Scala version the jar was compiled for ("2.13", "2.12"): Spark 4's, or Spark 3.5's. */
  def scalaVersion(): String = BuildInfo.scalaVersion

  /** Checks a plan and returns its output schemas as JSON: {"result", "pane", "errors",
    * "union"} (Spark schema JSON each) plus "timerDomains", "timeMode" (whether Spark wakes key
    * groups on its watermark: "EventTime" or "None"), the stateful "operator" of this jar's Spark
    * line and how it is woken ("timers", in Spark's terms), the "algorithm" the Spark runtimes
    * run it on, and what the "assigner" is ({"eventTime", "merging"}: Python's builder asks it
    * of a user's assigner).
    */
  def describe(planJson: String, java8Time: Boolean): String = describe(planJson, java8Time, false)

  /** [[describe]] of the plan run in real-time mode (`realTime`) or micro-batch mode: adds
    * "mode", and the time mode and timers are that mode's. A plan real-time mode cannot run is
    * refused here, with the fix.
    */
  def describe(planJson: String, java8Time: Boolean, realTime: Boolean): String =
    describe(planJson, java8Time, realTime, null, null)

  /** [[describe]] with "keyGroups" ({"count", "origin"}): how many key groups a stream of this
    * plan runs on `session` with the checkpoint `checkpoint` (null: unknown), and why
    * ([[KeyGroupCount]]). Nothing is written.
    */
  def describe(
      planJson: String,
      java8Time: Boolean,
      realTime: Boolean,
      session: SparkSession,
      checkpoint: String
  ): String = PlanDecoder.guarded { // whatever fails in reading a plan is a PlanException
    val plan = PlanDecoder.decode(planJson)
    val layout = new OutputLayout(plan, java8Time)
    val node = mapper.createObjectNode()
    node.set("result", mapper.readTree(layout.resultSchema.json))
    node.set("pane", mapper.readTree(layout.paneSchema.json))
    node.set("errors", mapper.readTree(layout.errorsSchema.json))
    node.set("union", mapper.readTree(layout.unionSchema.json))
    val time = plan.timeIn(RunMode.of(realTime))
    node.put("timerDomains", time.domains.toString)
    node.put("clock", time.needsClock)
    node.put("mode", time.mode.name)
    node.put("ownWatermark", time.ownWatermark)
    node.put("timeMode", time.sparkTimeMode)
    val stored =
      if (session == null) KeyGroupCount.Checkpoint.Unknown
      else KeyGroupCount.at(session, Option(checkpoint).filter(_.nonEmpty))
    val chained = time.inheritsWatermark
    val host =
      if (session == null) HostChoice.choose(SparkShim.Operators, stored, None, realTime, chained)
      else HostChoice.of(session, SparkShim.Operators, stored, realTime, chained)
    node.put("operator", host.operator)
    node.put("operatorOrigin", host.origin)
    node.put("timers", HostChoice.timers(host.operator, time.sparkTimeMode))
    node.put("algorithm", Selection.choose(plan.spec, packable = false).toString)
    val assigner = node.putObject("assigner")
    assigner.put("eventTime", plan.spec.assigner.isEventTime)
    assigner.put("merging", plan.spec.assigner.isMerging)
    if (session != null) {
      val groups = KeyGroupCount.peek(session, stored, realTime)
      val kg = node.putObject("keyGroups")
      kg.put("count", if (plan.keys.isWindowAll) 1 else groups.count)
      kg.put("origin", if (plan.keys.isWindowAll) "windowAll: one group" else groups.origin)
    }
    mapper.writeValueAsString(node)
  }

  /** Refuses, as a [[PlanException]], what real-time mode cannot run: the plan on an input that
    * is a stream or not, and the query about to start (`queryJson`: [[RealTimeQuery]]'s facts,
    * or null for `toDF(realTime=True)`).
    */
  def refuseRealTime(planJson: String, streaming: Boolean, queryJson: String): Unit =
    PlanRules.refuseRealTime(
      PlanDecoder.decode(planJson),
      Some(streaming),
      Option(queryJson).map(RealTimeQuery.parse)
    )

  /** The first rule of [[PlanRules]] the plan so far breaks, for Python's builder to raise
    * after each step: JSON `{"rule": ..., "message": ...}` with the plan's pieces as
    * `{/pointer}`s in the message (Python names them as the user wrote them). A plan it accepts
    * gets what the decoder decides where the plan is silent, for the builder to write into its
    * plan: `{"defaults": {"watermark": ...}}` ([[PlanDecoder.defaultWatermark]], or the plan's
    * own).
    */
  def validate(planJson: String, streaming: Boolean): String = PlanDecoder.guarded {
    val root = PlanDecoder.parse(planJson)
    val node = mapper.createObjectNode()
    PlanRules.check(root, Some(streaming)) match {
      case None =>
        val decided = PlanDecoder.completed(root, Some(streaming)).path("watermark")
        node
          .putObject("defaults")
          .set[JsonNode]("watermark", if (decided.isMissingNode) NullNode.instance else decided)
      case Some(r) =>
        node.put("rule", r.rule)
        node.put("message", r.message)
    }
    mapper.writeValueAsString(node)
  }

  /** How many keys this JVM ran through the engine on bounded input so far ([[BatchRunner]]):
    * what one pass over a bounded pipeline adds is its number of keys.
    */
  def boundedKeysRun(): Long = BatchRunner.keysRunSoFar

  /** Runs the plan on `df` (streaming or bounded); the union of all outputs
    * (see [[OutputLayout]]).
    */
  def windowed(df: Dataset[Row], planJson: String): DataFrame = windowed(df, planJson, false)

  /** [[windowed]] for a query that runs in Spark's real-time mode (`realTime`) or micro-batch
    * mode.
    */
  def windowed(df: Dataset[Row], planJson: String, realTime: Boolean): DataFrame =
    windowed(df, planJson, realTime, null)

  /** [[windowed]] for a query whose checkpoint is `checkpoint` (null: unknown), which keeps the
    * stream's number of key groups ([[KeyGroupCount]]).
    */
  def windowed(df: Dataset[Row], planJson: String, realTime: Boolean, checkpoint: String): DataFrame =
    SparkRuntime.windowed(
      df.toDF(),
      PlanDecoder.decode(planJson, Some(df.isStreaming)),
      RunMode.of(realTime),
      Option(checkpoint).filter(_.nonEmpty)
    )

  /** The streaming sources of `df`'s plan, each as its format ("kafka", ...) and options (the
    * keys lower-cased), for Python's real-time checks (how many task slots a query needs).
    */
  def streamingSources(df: Dataset[Row]): java.util.List[java.util.Map[String, String]] =
    RealTimeChecks.sources(df.toDF())

  /** Admits `df`'s query to the checkpoint at `location` before it starts ([[Admission]]): a
    * checkpoint it cannot resume is refused with why, and an admitted one records this release
    * and the query's sparkwin operators (found in `df`'s plan).
    */
  def checkCheckpoint(df: Dataset[Row], location: String): Unit =
    Admission.admit(
      df.sparkSession,
      location,
      SparkShim
        .operatorsOf(df.toDF())
        .map(s => Admission.Operator(s.planJson, s.keyGroups, s.realTime, s.operator))
    )

  /** Moves a stopped query's checkpoint at `source` to a new one at `target` for the query of
    * `df` ([[Migration]]); what it did, as JSON.
    */
  def stateMigrate(df: Dataset[Row], source: String, target: String): String =
    Migration.migrate(df.toDF(), source, target)

  /** Points a copied checkpoint's operator metadata at its own schema files ([[Relocation]]);
    * how many paths it changed.
    */
  def stateRelocate(spark: SparkSession, location: String): Int =
    Relocation.relocate(CheckpointFiles(location, spark.sparkContext.hadoopConfiguration))

  /** The batch a state read of `location` sees: `batchId`, checked, or the last committed (-1). */
  def stateBatch(spark: SparkSession, location: String, batchId: Long): Long =
    StateReader.batchOf(
      CheckpointFiles(location, spark.sparkContext.hadoopConfiguration),
      if (batchId < 0) None else Some(batchId)
    )

  /** What a checkpoint's sparkwin operator holds at a committed batch ([[StateReader]]): the
    * union of the state views. `planJson` null: the checkpoint's manifest's; `batchId` negative:
    * the last committed.
    */
  def stateRead(
      spark: SparkSession,
      location: String,
      planJson: String,
      batchId: Long,
      operator: Int
  ): Dataset[Row] =
    StateReader.read(spark, location, Option(planJson), if (batchId < 0) None else Some(batchId), operator)

  /** Replays a bounded DataFrame with live-stream semantics (see [[ReplayRuntime]]). */
  def replay(df: Dataset[Row], planJson: String, endOfInput: Boolean): ReplayHandle =
    ReplayRuntime.replay(df.toDF(), PlanDecoder.decode(planJson, Some(df.isStreaming)), endOfInput)

  /** A test harness for the plan (sparkwin.testing.WindowHarness). */
  def harness(planJson: String, channels: Int, generateWatermarks: Boolean): Harness =
    new Harness(planJson, channels, generateWatermarks)
}
