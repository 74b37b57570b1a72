package sparkwin.plan

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.core.{JacksonException, JsonFactoryBuilder, JsonParser, StreamReadConstraints}
import com.fasterxml.jackson.core.exc.StreamConstraintsException
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.spark.sql.types._

import sparkwin.core.agg.{Aggregate, NumberType, NumericKind, SparkHash}
import sparkwin.operator.{AccumulationMode, OperatorSpec, WindowFunction}
import sparkwin.core.evictor.{ConditionEvictor, CountEvictor, DeltaEvictor, Evictor, TimeEvictor}
import sparkwin.core.time.{ChannelWatermarks, WatermarkStrategy}
import sparkwin.core.trigger._
import sparkwin.core.window._

/** A decoded pipeline plan (docs/plan.md): the engine's spec and what the runtimes need
  * around it. Decoding builds fresh trigger instances, so each decode gives an independent spec.
  */
final case class Plan(
    json: String,
    inputSchema: StructType,
    timestampColumn: Int,
    keyColumns: IndexedSeq[Int],
    watermark: Option[WatermarkStrategy],
    arrivalColumn: Option[Int],
    channelColumn: Option[Int],
    spec: OperatorSpec,
    lateOutputTag: Option[String],
    aggregateFields: IndexedSeq[StructField],
    processSchema: Option[StructType],
    timestampCombiner: String = "endOfWindow",
    declaredChannels: Seq[String] = Nil
) {

  /** EARLIEST or LATEST: the spec's last aggregate (min or max of the timestamp, after the
    * plan's own) is the results' `window_time` rather than a column.
    */
  def windowTimeFromAggregate: Boolean = timestampCombiner != "endOfWindow"

  /** The key (`keyFields` are its output columns; windowAll has none). */
  lazy val keys: Keys = new Keys(keyColumns, inputSchema)
  def keyFields: IndexedSeq[StructField] = keys.outputFields
  def hasTimestamp: Boolean = timestampColumn >= 0
  def timestampIsLong: Boolean = hasTimestamp && inputSchema.fields(timestampColumn).dataType == LongType
  def isProcess: Boolean = processSchema.isDefined
  def timestampName: String = inputSchema.fields(timestampColumn).name

  /** The timestamp is a sparkwin result's event time: the pipeline follows the upstream
    * watermark (chained windows).
    */
  def inheritsWatermark: Boolean =
    hasTimestamp && inputSchema.fields(timestampColumn).metadata.contains(Contract.eventTimeMetadata)

  /** Every decision about time for this plan in micro-batch mode, decided once and asked by every
    * runtime (stream, batch, replay, the harness) and by `describe()`.
    */
  lazy val time: TimePolicy = TimePolicy.decide(this, RunMode.MicroBatch)
  private lazy val realTimePolicy: TimePolicy = TimePolicy.decide(this, RunMode.RealTime)

  /** [[time]] for a stream run in `mode`. */
  def timeIn(mode: RunMode): TimePolicy = if (mode == RunMode.RealTime) realTimePolicy else time
}

/** Thrown for a plan the JVM cannot accept: off the contract, or breaking a rule of
  * [[PlanRules]] (which Python's builder asks as it goes, so a builder's plan rarely meets it).
  */
final class PlanException(message: String, cause: Throwable)
    extends IllegalArgumentException(message, cause) {
  def this(message: String) = this(message, null)
}

object PlanDecoder {

  /** The hidden aggregate of an EARLIEST or LATEST timestamp combiner. */
  val WindowTimeAlias: String = "__sw_window_time"
  // Its parser refuses nesting past Limits.MaxPlanNesting (Jackson's own limit is 1,000).
  private val mapper = new ObjectMapper(
    new JsonFactoryBuilder()
      .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(Limits.MaxPlanNesting).build())
      .build()
  )
  val SupportedVersion: Int = Contract.planVersion

  // Executors decode a plan once per JVM, not per key or partition: a decoded plan is
  // immutable (triggers keep no per-use state), so every task may share it.
  private val decoded = new java.util.concurrent.ConcurrentHashMap[String, Plan]()

  /** The plan of `json`, decoded once per JVM. */
  def cached(json: String): Plan = {
    if (decoded.size > 64) decoded.clear() // a long-lived driver that saw many plans
    decoded.computeIfAbsent(json, j => decode(j))
  }

  /** The plan of `json`, refused if it is off the contract or breaks a rule of [[PlanRules]];
    * `streaming`: whether the input is a stream, where the caller knows.
    */
  def decode(json: String, streaming: Option[Boolean] = None): Plan = {
    val root = parse(json)
    guarded(decodeTree(json, root, streaming))
  }

  /** A plan's JSON tree, or a [[PlanException]] when the text is not one JSON object and nothing
    * more: bad syntax, nesting past [[Limits.MaxPlanNesting]], a number or a string past Jackson's
    * limits, anything but white space after the object. It is the one reader of a plan's text:
    * nothing walks a tree it has not bounded.
    */
  def parse(json: String): JsonNode = {
    if (json == null) throw new PlanException("no plan: the plan's JSON is null")
    if (json.length > Limits.MaxPlanChars)
      throw new PlanException(
        s"the plan's JSON is ${json.length} characters; a plan is at most ${Limits.MaxPlanChars}"
      )
    val parser = mapper.getFactory.createParser(json)
    try {
      val root =
        try mapper.readTree[JsonNode](parser)
        catch {
          case _: StreamConstraintsException
              if parser.getParsingContext.getNestingDepth >= Limits.MaxPlanNesting =>
            throw new PlanException(
              s"the plan's JSON nests more than ${Limits.MaxPlanNesting} levels deep (objects and arrays), at " +
                s"${Limits.quoted(placeOf(parser))}; a plan nests at most ${Limits.MaxPlanNesting}, which no plan " +
                s"sparkwin's builder writes reaches (its triggers nest at most ${Limits.MaxTriggerNesting} deep)"
            )
          case e: JacksonException =>
            throw new PlanException(s"the plan is not valid JSON: ${Limits.quoted(e.getOriginalMessage)}")
        }
      if (root == null || !root.isObject)
        throw new PlanException(
          s"a plan is a JSON object, got ${if (root == null) "nothing" else root.getNodeType}"
        )
      // Where the object ends: what follows it starts at the first character that is not white
      // space (Jackson's own location of a bad token differs between its versions).
      val end = math.max(0L, math.min(parser.currentLocation().getCharOffset, json.length.toLong)).toInt
      val more =
        try parser.nextToken() != null
        catch { case _: JacksonException => true }
      if (more) {
        val from = (end until json.length).find(i => !Character.isWhitespace(json.charAt(i))).getOrElse(end)
        throw new PlanException(
          s"the plan's JSON goes on after its object ends, at character $from: " +
            s"'${Limits.quoted(json.substring(from))}'; a plan is one JSON object, with nothing after it"
        )
      }
      root
    } finally parser.close()
  }

  /** Where `parser` stands, as a JSON pointer (`/` for the plan's own object). */
  private def placeOf(parser: JsonParser): String = {
    val at = parser.getParsingContext.pathAsPointer().toString
    if (at.isEmpty) "/" else at
  }

  /** The last guard of a plan from outside: an exception that no check of the decoder or the
    * rules raised on purpose becomes a [[PlanException]] (with its cause, so the fuzz suites
    * still see it), never a server's crash. The gateways wrap what they answer from outside in it.
    */
  def guarded[A](body: => A): A =
    try body
    catch {
      case e: PlanException => throw e
      // A stack too small for a walk of the plan: one no check of the plan's size or depth
      // bounded (a hole, reported as one); the server keeps serving.
      case e: StackOverflowError =>
        throw new PlanException(
          s"the plan could not be read: $e (a check sparkwin lacks; please report it)",
          e
        )
      case e: VirtualMachineError => throw e
      case e: UnsupportedSparkException => throw e
      case e: RuntimeException =>
        throw new PlanException(
          s"the plan could not be read: $e (a check sparkwin lacks; please report it)",
          e
        )
    }

  private def decodeTree(json: String, root: JsonNode, streaming: Option[Boolean]): Plan = {
    val stated = required(root, "planVersion")
    if (!stated.isIntegralNumber || !stated.canConvertToInt)
      throw new PlanException(
        s"planVersion must be a whole number, the plan format's version ($SupportedVersion for this jar), " +
          s"got ${stated.getNodeType.toString.toLowerCase} ${Limits.quoted(stated.toString)}"
      )
    val version = stated.asInt
    if (version != SupportedVersion)
      throw new PlanException(
        s"plan version $version is not supported by this jar (it reads version $SupportedVersion)"
      )
    PlanRules.refuse(root, streaming) // first: a rule's message says more than the contract's
    val chosen = root.has("watermark")
    val whole = completed(root, streaming)
    Contract.validate(whole)
    val schema = struct(root, "inputSchema")
    val columns = new Columns(schema)
    // No timestamp: a stream without event time (Storm's windows in arrival order).
    val ts = optional(root, "timestamp").fold(-1)(n => columns.index(n.asText, "timestamp"))
    if (ts >= 0) schema.fields(ts).dataType match {
      case TimestampType | LongType =>
      case other =>
        throw new PlanException(s"timestamp column must be a timestamp or a long, got $other")
    }
    val keys = root.get("keys").elements().asScala.map(k => columns.index(k.asText, "keys")).toIndexedSeq
    val watermark = optional(whole, "watermark").map(decodeWatermark(_, columns))
    val assigner = decodeAssigner(root.get("assigner"), columns)
    val declared =
      optional(root, "channels").fold(Seq.empty[String])(_.elements().asScala.map(_.asText).toSeq)
    try ChannelWatermarks.checked(declared)
    catch { case e: IllegalArgumentException => throw new PlanException(e.getMessage) }
    val trigger = optional(root, "trigger")
      .map(decodeTrigger(_, columns))
      .getOrElse(DefaultTrigger.forAssigner(assigner))
    val evictor = optional(root, "evictor").map(decodeEvictor(_, columns))
    val fn = root.get("function")
    val combiner = optional(fn, "timestampCombiner").fold("endOfWindow")(_.asText)
    val (function, aggFields, processSchema) = str(fn, "kind") match {
      case "aggregate" =>
        val aggs = fn.get("aggregates").elements().asScala.map(filtered(_, columns)).toIndexedSeq
        // Beam's EARLIEST/LATEST: one more aggregate over the timestamp gives window_time.
        val combined = combiner match {
          case "endOfWindow" => IndexedSeq.empty
          case "earliest" => IndexedSeq(Aggregate.Min(WindowTimeAlias, ts))
          case "latest" => IndexedSeq(Aggregate.Max(WindowTimeAlias, ts)) // PlanRules: ts >= 0
        }
        (WindowFunction.Aggregates(aggs.map(_._1) ++ combined), aggs.map(_._2), None)
      case "process" =>
        val out = struct(fn, "outputSchema")
        (WindowFunction.ProcessElements, IndexedSeq.empty, Some(out))
      case other => throw new PlanException(s"unknown function kind '$other'")
    }
    val mode = str(root, "accumulationMode") match {
      case "accumulating" => AccumulationMode.Accumulating
      case "discarding" => AccumulationMode.Discarding
      case other => throw new PlanException(s"unknown accumulationMode '$other'")
    }
    val lateTag = optional(root, "lateOutputTag").map(_.asText)
    val spec =
      try
        OperatorSpec(
          assigner,
          trigger,
          evictor,
          long(root, "allowedLatenessMs"),
          lateTag.isDefined,
          function,
          mode,
          ansi = optional(root, "ansi").forall(_.asBoolean), // absent: Spark 4's default
          emitsElements = optional(fn, "elements").exists(_.asBoolean) // pandas aggregates
        )
      catch { case e: IllegalArgumentException => throw new PlanException(e.getMessage) }
    Plan(
      if (chosen) json else mapper.writeValueAsString(whole), // the runtimes read what was decided
      schema,
      ts,
      keys,
      watermark,
      optional(root, "arrival").map(n => columns.index(n.asText, "arrival")),
      optional(root, "channel").map(n => columns.index(n.asText, "channel")),
      spec,
      lateTag,
      aggFields,
      processSchema,
      combiner,
      declared
    )
  }

  /** Storm's watermarks come every second (`topology.bolts.watermark.event.interval.ms`). */
  val StormLagIntervalMs: Long = 1000L

  /** The watermark strategy, as the plan's JSON, of a plan that leaves `watermark` out; a
    * `null` one is `noWatermarks()` and a given one is the user's, so neither asks. Storm windows
    * in event time on an input that is not a stream get Storm's lag watermark (`max - lag`, the
    * assigner's lag), as Storm's event-time windows run; a stream needs one chosen (a rule says
    * so), and a pipeline on a sparkwin result's window bounds inherits the upstream one where the
    * input may be a stream. Every other plan gets none. This is the one place that decides it:
    * the builder hears it in `PythonEntryPoint.validate`'s answer and writes it into its plan.
    */
  def defaultWatermark(root: JsonNode, streaming: Option[Boolean]): Option[JsonNode] = {
    val assigner = root.path("assigner")
    val timestamp = root.path("timestamp")
    val stormInEventTime = assigner.path("kind").asText == "storm" &&
      !(assigner
        .has("eventTime") && assigner.get("eventTime").isBoolean && !assigner.get("eventTime").asBoolean)
    def marked: Boolean =
      Try(DataType.fromJson(mapper.writeValueAsString(root.get("inputSchema")))).toOption.exists {
        case s: StructType =>
          s.fields.exists(f => f.name == timestamp.asText && f.metadata.contains(Contract.eventTimeMetadata))
        case _ => false
      }
    val mayInherit = streaming != Some(false) && marked
    if (
      root.has("watermark") || !timestamp.isTextual || !stormInEventTime || streaming.contains(
        true
      ) || mayInherit
    )
      None
    else {
      val lag = mapper.createObjectNode()
      lag.put("kind", "stormLag")
      lag.put("lagMs", assigner.path("lagMs").asLong(0L))
      lag.putNull("idleTimeoutMs")
      lag.put("intervalMs", StormLagIntervalMs)
      Some(lag)
    }
  }

  /** `root` with its `watermark` decided: the given one, or [[defaultWatermark]] (`null`: none). */
  def completed(root: JsonNode, streaming: Option[Boolean]): JsonNode =
    if (root.has("watermark") || !root.isObject) root
    else {
      val whole = root.deepCopy[ObjectNode]()
      defaultWatermark(root, streaming) match {
        case Some(w) => whole.set[JsonNode]("watermark", w)
        case None => whole.putNull("watermark")
      }
      whole
    }

  private final class Columns(schema: StructType) {
    private val byName = schema.fields.map(_.name).zipWithIndex.toMap
    def index(name: String, param: String): Int =
      byName.getOrElse(
        name,
        throw new PlanException(
          s"$param: no column '${Limits.quoted(name)}'; the input has ${Limits.quoted(schema.fieldNames.mkString(", "))}"
        )
      )
    def field(i: Int): StructField = schema.fields(i)
    def forExtensions: Extensions.Columns = new Extensions.Columns(index, field)
  }

  /** The assigner and a trigger of a plan's JSON, for [[PlanRules]] (which ask what they are). */
  private[plan] def assignerOf(n: JsonNode, schema: StructType): WindowAssigner =
    decodeAssigner(n, new Columns(schema))
  private[plan] def triggerOf(n: JsonNode, schema: StructType): Trigger =
    decodeTrigger(n, new Columns(schema))

  /** Decodes the plan's piece `name` (assigner, trigger or evictor) alone, for PlanRules. */
  private[plan] def pieceOf(name: String, n: JsonNode, schema: StructType): Any = name match {
    case "assigner" => decodeAssigner(n, new Columns(schema))
    case "trigger" => decodeTrigger(n, new Columns(schema))
    case _ => decodeEvictor(n, new Columns(schema))
  }

  private def decodeWatermark(n: JsonNode, columns: Columns): WatermarkStrategy = {
    val idle = optional(n, "idleTimeoutMs").map(_.asLong)
    val interval = long(n, "intervalMs")
    val kind = str(n, "kind") match {
      case "boundedOutOfOrderness" => WatermarkStrategy.BoundedOutOfOrderness(long(n, "boundMs"))
      case "punctuated" =>
        WatermarkStrategy.Punctuated(
          columns.index(str(n, "markerColumn"), "markerColumn"),
          long(n, "boundMs")
        )
      case "stormLag" => WatermarkStrategy.StormLag(long(n, "lagMs"))
      case other => throw new PlanException(s"unknown watermark kind '$other'")
    }
    WatermarkStrategy(kind, idle, interval)
  }

  private def decodeAssigner(n: JsonNode, columns: Columns): WindowAssigner =
    guard {
      str(n, "kind") match {
        case "tumbling" =>
          TumblingWindows(long(n, "sizeMs"), long(n, "offsetMs"), bool(n, "eventTime"))
        case "sliding" =>
          SlidingWindows(long(n, "sizeMs"), long(n, "slideMs"), long(n, "offsetMs"), bool(n, "eventTime"))
        case "session" =>
          val gapColumn = optional(n, "gapColumn").map(c => columns.index(c.asText, "gapColumn"))
          SessionWindows(
            optional(n, "gapMs").map(_.asLong).getOrElse(0L),
            gapColumn.getOrElse(-1),
            bool(n, "eventTime")
          )
        case "global" => GlobalWindows
        case "calendar" =>
          val zone = // as Spark reads spark.sql.session.timeZone: region IDs, offsets, short IDs
            try java.time.ZoneId.of(str(n, "zone"), java.time.ZoneId.SHORT_IDS)
            catch {
              case _: java.time.DateTimeException =>
                throw new PlanException(
                  s"CalendarWindows: zone '${str(n, "zone")}' is not a time zone; use a region ID " +
                    "such as 'Europe/Amsterdam' (daylight saving included) or an offset such as '+01:00'"
                )
            }
          CalendarWindows(CalendarUnit.named(str(n, "unit")).get, zone, bool(n, "eventTime"))
        case "computed" =>
          val column = columns.index(str(n, "column"), "ComputedWindows")
          columns.field(column).dataType match {
            case ArrayType(LongType, _) => ComputedWindows(column)
            case other =>
              throw new PlanException(
                s"ComputedWindows: its bounds must be an array of bigint milliseconds, got ${other.simpleString}"
              )
          }
        case "jvm" => Extensions.assigner(n, columns.forExtensions)
        case "storm" =>
          val length = stormSize(n.get("length"))
          val slide = optional(n, "slide").map(stormSize).getOrElse(length)
          StormWindows(length, slide, long(n, "lagMs"), optional(n, "eventTime").forall(_.asBoolean))
        case other => throw new PlanException(s"unknown assigner kind '$other'")
      }
    }

  private def stormSize(n: JsonNode): StormSize =
    if (n.has("count")) StormSize.Count(long(n, "count"))
    else StormSize.Duration(long(n, "durationMs"))

  private def decodeTrigger(n: JsonNode, columns: Columns): Trigger = guard {
    def nested(field: String) = decodeTrigger(n.get(field), columns)
    def list(field: String) = n.get(field).elements().asScala.map(decodeTrigger(_, columns)).toSeq
    str(n, "kind") match {
      case "eventTime" => EventTimeTrigger
      case "processingTime" => ProcessingTimeTrigger
      case "never" => NeverTrigger
      case "count" => CountTrigger(long(n, "count"))
      case "condition" => ConditionTrigger(boolean(n, columns, "ConditionTrigger"))
      case "continuousEventTime" => ContinuousEventTimeTrigger(long(n, "intervalMs"))
      case "continuousProcessingTime" => ContinuousProcessingTimeTrigger(long(n, "intervalMs"))
      case "delta" => DeltaTrigger(n.get("threshold").asDouble, delta(n, columns))
      case "aggregate" =>
        AggregateTrigger(runningAggregate(n, columns), str(n, "op"), n.get("threshold").asDouble)
      case "purging" => PurgingTrigger(nested("nested"))
      case "processingTimeout" =>
        ProcessingTimeoutTrigger(
          nested("nested"),
          long(n, "timeoutMs"),
          bool(n, "resetTimerOnNewRecord"),
          bool(n, "shouldClearOnTimeout")
        )
      case "afterWatermark" =>
        AfterWatermark(
          optional(n, "early").map(decodeTrigger(_, columns)),
          optional(n, "late").map(decodeTrigger(_, columns))
        )
      case "afterProcessingTime" => AfterProcessingTime(long(n, "delayMs"))
      case "afterPane" => AfterPane(long(n, "count"))
      case "repeatedly" => Repeatedly(nested("nested"))
      case "afterEach" => AfterEach(list("triggers"))
      case "afterFirst" => AfterFirst(list("triggers"))
      case "afterAll" => AfterAll(list("triggers"))
      case "orFinally" => OrFinally(nested("main"), nested("until"))
      case "jvm" => Extensions.trigger(n, columns.forExtensions)
      case other => throw new PlanException(s"unknown trigger kind '$other'")
    }
  }

  private def decodeEvictor(n: JsonNode, columns: Columns): Evictor = guard {
    def after = bool(n, "doEvictAfter")
    str(n, "kind") match {
      case "count" => CountEvictor(long(n, "maxCount"), after)
      case "time" => TimeEvictor(long(n, "windowSizeMs"), after)
      case "delta" => DeltaEvictor(n.get("threshold").asDouble, delta(n, columns), after)
      case "condition" => ConditionEvictor(boolean(n, columns, "ConditionEvictor"), after)
      case "jvm" => Extensions.evictor(n, columns.forExtensions)
      case other => throw new PlanException(s"unknown evictor kind '$other'")
    }
  }

  private def delta(n: JsonNode, columns: Columns): DeltaFunction = {
    val read = n.get("columns").elements().asScala.map(c => columns.index(c.asText, "columns")).toSeq
    val relative = optional(n, "relative").exists(_.asBoolean)
    if (relative && read.size != 1)
      throw new PlanException(s"DeltaTrigger: a relative delta reads one column, got ${read.size}")
    DeltaFunction(read, relative)
  }

  /** A condition's column (`column`): a boolean one, or a PlanException naming `who`. */
  private def boolean(n: JsonNode, columns: Columns, who: String): Int = {
    val column = columns.index(str(n, "column"), who)
    val t = columns.field(column).dataType
    if (t != BooleanType)
      throw new PlanException(s"$who: its condition must be boolean, got ${t.simpleString}")
    column
  }

  /** An AggregateTrigger's running aggregate: its function, numeric column and filter. */
  private def runningAggregate(n: JsonNode, columns: Columns): RunningAggregate = {
    val fn = str(n, "fn")
    val column = optional(n, "column").fold(-1) { c =>
      val i = columns.index(c.asText, s"AggregateTrigger's $fn")
      columns.field(i).dataType match {
        case _: NumericType =>
        case _ if fn == "count" => // counts values of any type
        case other =>
          throw new PlanException(s"AggregateTrigger: $fn needs a numeric column, got ${other.simpleString}")
      }
      i
    }
    if (column < 0 && fn != "count") throw new PlanException(s"AggregateTrigger: $fn needs a column")
    val filter = optional(n, "filter").fold(-1) { f =>
      val i = columns.index(f.asText, "AggregateTrigger's filter")
      if (columns.field(i).dataType != BooleanType)
        throw new PlanException(
          s"AggregateTrigger: its filter must be boolean, got ${columns.field(i).dataType.simpleString}"
        )
      i
    }
    RunningAggregate(fn, column, filter)
  }

  /** An aggregate with its `filter` (SQL's `FILTER (WHERE ...)`: a boolean column), if any. */
  private def filtered(n: JsonNode, columns: Columns): (Aggregate, StructField) = {
    val (aggregate, field) = decodeAggregate(n, columns)
    optional(n, "filter") match {
      case None => (aggregate, field)
      case Some(f) =>
        val named = Limits.quoted(aggregate.alias)
        val filter = columns.index(f.asText, s"aggregate $named's filter")
        val t = columns.field(filter).dataType
        if (t != BooleanType)
          throw new PlanException(
            s"aggregate $named: its filter must be a boolean column, got ${t.simpleString}"
          )
        (Aggregate.Filtered(aggregate, filter), field)
    }
  }

  /** An aggregate and the output field it produces (name, Spark type). */
  private def decodeAggregate(n: JsonNode, columns: Columns): (Aggregate, StructField) = {
    val alias = str(n, "alias")
    val named = Limits.quoted(alias) // as messages quote it
    val fn = str(n, "fn")
    val col = optional(n, "column").map(c => columns.index(c.asText, s"aggregate $named"))
    def input = col.getOrElse(throw new PlanException(s"aggregate $named ($fn) needs a column"))
    def inType = columns.field(input).dataType
    def numeric(): NumericKind = inType match {
      case ByteType | ShortType | IntegerType | LongType => NumericKind.Integral
      case FloatType | DoubleType => NumericKind.Fractional
      case _: DecimalType => NumericKind.Decimal
      case other => throw new PlanException(s"aggregate $named: $fn needs a numeric column, got $other")
    }
    // The contract's type rules, the same Python's builder applies with the parameter's name.
    for ((param, types, words) <- Contract.aggregateInputs(fn)) {
      val t = columns.field(columns.index(str(n, param), s"aggregate $named")).dataType
      if (!types.contains(Contract.typeName(t)))
        throw new PlanException(s"aggregate $named: $fn needs $words for $param, got ${t.simpleString}")
    }
    def ord = columns.index(str(n, "ord"), s"aggregate $named")
    fn match {
      case "jvm" => Extensions.aggregate(n, alias, columns.forExtensions)
      case "stddev" | "stddevSamp" | "stddevPop" | "variance" | "varSamp" | "varPop" =>
        val sample = !fn.endsWith("Pop")
        (
          Aggregate.Variance(alias, input, sample, sqrt = fn.startsWith("stddev")),
          StructField(alias, DoubleType)
        )
      case "countIf" => (Aggregate.CountIf(alias, input), StructField(alias, LongType, nullable = false))
      case "minBy" | "maxBy" =>
        (Aggregate.ExtremeBy(alias, input, ord, fn == "maxBy", orderable(inType)), StructField(alias, inType))
      case "minByAll" | "maxByAll" =>
        (
          Aggregate.ExtremeByAll(
            alias,
            input,
            ord,
            fn == "maxByAll",
            tiesOrder(inType),
            optional(n, "limit").fold(Long.MaxValue)(_.asLong)
          ),
          StructField(alias, ArrayType(inType, containsNull = false), nullable = false)
        )
      case "approxCountDistinct" =>
        val hash = inType match {
          case ByteType | ShortType | IntegerType | BooleanType => SparkHash.AsInt
          case DateType => SparkHash.AsDate
          case LongType => SparkHash.AsLong
          case TimestampType | TimestampNTZType => SparkHash.AsTimestamp
          case FloatType => SparkHash.AsFloat
          case DoubleType => SparkHash.AsDouble
          case d: DecimalType => SparkHash.AsDecimal(d.precision, d.scale)
          case _ => SparkHash.AsBytes // string, binary (the contract admits no other)
        }
        (
          Aggregate.ApproxCountDistinct(alias, input, n.get("rsd").asDouble, hash),
          StructField(alias, LongType, nullable = false)
        )
      case "percentileApprox" =>
        val resultType = inType match {
          case ByteType => NumberType.ByteNumber
          case ShortType => NumberType.ShortNumber
          case IntegerType => NumberType.IntNumber
          case LongType => NumberType.LongNumber
          case FloatType => NumberType.FloatNumber
          case d: DecimalType => NumberType.DecimalNumber(d.scale)
          case _ => NumberType.DoubleNumber
        }
        val percentages = n.get("percentages").elements().asScala.map(_.asDouble).toIndexedSeq
        val array = bool(n, "array")
        if (!array && percentages.size != 1)
          throw new PlanException(s"aggregate $named: one percentage, or array true for several")
        val out = if (array) ArrayType(inType, containsNull = false) else inType
        (
          Aggregate.PercentileApprox(alias, input, percentages, long(n, "accuracy"), array, resultType),
          StructField(alias, out)
        )
      case "count" =>
        (Aggregate.Count(alias, col.getOrElse(-1)), StructField(alias, LongType, nullable = false))
      case "sum" =>
        val kind = numeric()
        kind match {
          case NumericKind.Decimal =>
            val d = inType.asInstanceOf[DecimalType]
            val out = DecimalType(math.min(d.precision + 10, DecimalType.MAX_PRECISION), d.scale)
            (Aggregate.Sum(alias, input, kind, out.precision - out.scale), StructField(alias, out))
          case _ =>
            val out = if (kind == NumericKind.Integral) LongType else DoubleType
            (Aggregate.Sum(alias, input, kind), StructField(alias, out))
        }
      case "avg" => numeric(); (Aggregate.Avg(alias, input), StructField(alias, DoubleType))
      case "min" => (Aggregate.Min(alias, input), StructField(alias, inType))
      case "max" => (Aggregate.Max(alias, input), StructField(alias, inType))
      case "first" => (Aggregate.First(alias, input), StructField(alias, inType))
      case "last" => (Aggregate.Last(alias, input), StructField(alias, inType))
      case "collectList" =>
        (
          Aggregate.CollectList(alias, input),
          StructField(alias, ArrayType(inType, containsNull = false), nullable = false)
        )
      case "collectSet" =>
        (
          Aggregate.CollectSet(alias, input),
          StructField(alias, ArrayType(inType, containsNull = false), nullable = false)
        )
      case other => throw new PlanException(s"unknown aggregate '$other'")
    }
  }

  /** Whether `t` is one of the contract's orderable types (min's and max's). */
  private def orderable(t: DataType): Boolean =
    Contract.aggregateInputs("min").forall(_._2.contains(Contract.typeName(t)))

  /** Whether values of `t` order as ties are kept ([[Aggregate.tieOrdering]]): the contract's
    * orderable types, and structs and arrays of them.
    */
  private def tiesOrder(t: DataType): Boolean = t match {
    case s: StructType => s.fields.forall(f => tiesOrder(f.dataType))
    case a: ArrayType => tiesOrder(a.elementType)
    case other => orderable(other)
  }

  // A piece's own check (Scala's `require`) says what is wrong; "requirement failed" says nothing.
  private def guard[A](body: => A): A =
    try body
    catch {
      case e: PlanException => throw e
      case e: IllegalArgumentException =>
        throw new PlanException(String.valueOf(e.getMessage).stripPrefix("requirement failed: "))
    }

  /** The Spark struct type in `n`'s `field` (Spark's JSON form of a schema). */
  private def struct(n: JsonNode, field: String): StructType =
    (try DataType.fromJson(mapper.writeValueAsString(required(n, field)))
    catch {
      case e: Exception => throw new PlanException(s"$field is not a Spark schema in JSON: ${e.getMessage}")
    }) match {
      case s: StructType => s
      case other => throw new PlanException(s"$field must be a struct, got $other")
    }

  private def optional(n: JsonNode, field: String): Option[JsonNode] =
    Option(n.get(field)).filterNot(_.isNull)
  private def str(n: JsonNode, field: String): String = required(n, field).asText
  private def long(n: JsonNode, field: String): Long = required(n, field).asLong
  private def bool(n: JsonNode, field: String): Boolean = required(n, field).asBoolean
  private def required(n: JsonNode, field: String): JsonNode =
    optional(n, field).getOrElse(
      throw new PlanException(s"the plan lacks '${Limits.quoted(field)}' in ${Limits.quoted(n.toString)}")
    )
}
