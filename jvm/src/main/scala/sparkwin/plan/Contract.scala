package sparkwin.plan

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/** The jar's side of the one contract with the Python package: `contract.json` (the build copies
  * python/sparkwin/contract.json into the jar's resources). It defines the plan's schema, the
  * kinds and columns of the union output's rows and the counters it reports; [[OutputLayout]] and
  * [[PlanDecoder]] take their names from here, and Python reads the same file.
  */
object Contract {
  private val mapper = new ObjectMapper()

  /** The contract as the jar carries it, verbatim (Python compares its own copy with it). */
  val text: String = {
    val in = getClass.getResourceAsStream("/sparkwin/contract.json")
    if (in == null) throw new IllegalStateException("the sparkwin jar lacks sparkwin/contract.json")
    // Not InputStream.readAllBytes: the Scala 2.12 (Spark 3.5) build keeps to Java 8's API.
    try scala.io.Source.fromInputStream(in)(scala.io.Codec.UTF8).mkString
    finally in.close()
  }

  private val root: JsonNode = mapper.readTree(text)
  private val output = root.get("output")
  private val plan = root.get("plan")

  val planVersion: Int = plan.get("version").asInt
  val kindColumn: String = output.get("kindColumn").asText
  private val kinds = output.get("kinds")
  val ResultKind: Int = kinds.get("result").asInt
  val LateKind: Int = kinds.get("late").asInt
  val ErrorKind: Int = kinds.get("error").asInt
  val PaneKind: Int = kinds.get("pane").asInt
  val MetricsKind: Int = kinds.get("metrics").asInt
  val unionColumns: Seq[String] = strings(output.get("unionColumns"))
  val windowColumns: Seq[String] = strings(output.get("windowColumns"))

  /** Column metadata marking a result's window bounds: event time a downstream pipeline sees. */
  val eventTimeMetadata: String = output.get("eventTimeMetadata").asText

  /** A result's event time (the window's largest timestamp, as Flink's results carry it). */
  val eventTimeColumn: String = output.get("eventTimeColumn").asText
  val paneColumns: Seq[String] = strings(output.get("paneColumns"))

  /** The columns every aggregate result has besides its keys and aggregates. */
  val outputColumns: Seq[String] = windowColumns ++ paneColumns
  val paneSeqColumn: String = output.get("paneSeqColumn").asText
  val firedAtColumn: String = output.get("firedAtColumn").asText
  val errorColumn: String = output.get("errorColumn").asText

  /** Engine counters that ride on output rows, in the order of the metrics struct. */
  val metricNames: Seq[String] = strings(root.get("metrics").get("engineCounters"))

  private val channelFields = root.get("metrics").get("channelFields")

  /** With channels, the metrics also carry the watermark and each channel's state. */
  val valveWatermarkField: String = channelFields.get("watermark").asText
  val valveChannelsField: String = channelFields.get("channels").asText
  val channelIdField: String = channelFields.get("channel").asText
  val channelWatermarkField: String = channelFields.get("channelWatermark").asText
  val channelIdleField: String = channelFields.get("idle").asText

  /** What the harness says became of an element (`runtime.harness.Harness.processElement`). */
  val elementFates: Seq[String] = strings(root.get("harness").get("elementFates"))

  private def strings(n: JsonNode): Seq[String] = n.elements().asScala.map(_.asText).toSeq

  /** The fields of a `kind` of plan `section` that hold more of the same section (a trigger's
    * nested triggers): (field, whether it is a list).
    */
  def nestedFields(section: String, kind: String): Seq[(String, Boolean)] =
    Option(plan.get("sections").get(section).get("kinds").get(kind)).toSeq.flatMap { fields =>
      fields
        .fieldNames()
        .asScala
        .map(f => (f, fields.get(f).asText))
        .collect {
          case (f, spec) if spec.startsWith(s"@$section") => (f, spec.stripSuffix("?").endsWith("]"))
        }
        .toSeq
    }

  // ---------------------------------------------------------------------------------------
  // The Spark Connect message (connect.SparkwinRelationPlugin reads it, Python writes it).

  private val connect = root.get("connect")

  /** The type URL of the `google.protobuf.Any` the message travels in. */
  val connectTypeUrl: String = connect.get("typeUrl").asText

  /** A field of the message: its number and its type (string, bool or relation). */
  def connectField(name: String): (Int, String) = {
    val f = Option(connect.get("fields").get(name))
      .getOrElse(throw new IllegalStateException(s"contract.json's connect message has no field '$name'"))
    (f.get("number").asInt, f.get("type").asText)
  }

  /** An operation a client may ask for, as it travels (`windowed`, `describe`, ...). */
  def connectOperation(name: String): String =
    if (strings(connect.get("operations")).contains(name)) name
    else throw new IllegalStateException(s"contract.json's connect message has no operation '$name'")

  /** The column types an aggregate's column parameters take: parameter -> (types, words). */
  def aggregateInputs(fn: String): Seq[(String, Set[String], String)] =
    Option(plan.get("aggregateInputs").get(fn)).toSeq.flatMap { params =>
      params.fields().asScala.map { e =>
        val category = plan.get("inputTypes").get(e.getValue.asText)
        (e.getKey, strings(category.get("types")).toSet, category.get("words").asText)
      }
    }

  /** Spark's name of a type as the contract's type lists spell it: `decimal`, not `decimal(10,2)`. */
  def typeName(t: org.apache.spark.sql.types.DataType): String =
    t.typeName.takeWhile(c => c != '(' && c != ' ')

  // ---------------------------------------------------------------------------------------
  // Plan validation: the same schema Python's builder is held to.

  private val ListSpec = """(.+)\[(\d*(?:\.\.\d*)?)\]""".r
  private val RangeSpec = """double\((.+?)\.\.(.+)\)""".r

  /** Throws a [[PlanException]] naming the path if `json` does not follow the contract. */
  def validate(json: JsonNode): Unit = obj(json, plan.get("root"), "plan", None)

  /** Whether the plan's piece `name` (a section: assigner, trigger, evictor) follows the contract. */
  def follows(piece: JsonNode, name: String): Boolean =
    try { section(piece, name, s"plan.$name"); true }
    catch { case _: PlanException => false }

  private def fail(message: String) = throw new PlanException(message)

  /** A value as a message quotes it ([[Limits.quoted]]). */
  private def shown(value: JsonNode): String = Limits.quoted(String.valueOf(value))

  private def obj(value: JsonNode, fields: JsonNode, path: String, skip: Option[String]): Unit = {
    if (value == null || !value.isObject) fail(s"$path must be an object, got ${shown(value)}")
    val known = fields.fieldNames().asScala.toSet ++ skip
    val unknown = value.fieldNames().asScala.filterNot(known).toSeq.sorted
    if (unknown.nonEmpty)
      fail(s"$path has fields the contract does not know: ${Limits.quoted(unknown.mkString(", "))}")
    fields.fields().asScala.foreach(e => field(value.get(e.getKey), e.getValue.asText, s"$path.${e.getKey}"))
  }

  private def field(value: JsonNode, spec0: String, path: String): Unit = {
    val optional = spec0.endsWith("?")
    val spec = spec0.stripSuffix("?")
    if (value == null || value.isNull) { if (!optional) fail(s"$path is required"); return }
    spec match {
      case ListSpec(item, bounds) =>
        if (!value.isArray) fail(s"$path must be a list, got ${shown(value)}")
        val (low, high) = boundsOf(bounds)
        if (value.size < low || high.exists(value.size > _))
          fail(s"$path must have $bounds items, got ${value.size}")
        value.elements().asScala.zipWithIndex.foreach { case (v, i) => field(v, item, s"$path[$i]") }
      case s if s.startsWith("@") => section(value, s.drop(1), path)
      case "int" | "long" | "long>=0" | "long>0" =>
        if (!value.isIntegralNumber || !value.canConvertToLong)
          fail(s"$path must be a long, got ${shown(value)}")
        if (spec == "long>=0" && value.asLong < 0) fail(s"$path must be >=0, got ${shown(value)}")
        if (spec == "long>0" && value.asLong <= 0) fail(s"$path must be >0, got ${shown(value)}")
      case "double" => if (!value.isNumber) fail(s"$path must be a number, got ${shown(value)}")
      case RangeSpec(low, high) =>
        if (!value.isNumber || value.asDouble < low.toDouble || value.asDouble > high.toDouble)
          fail(s"$path must be a number from $low to $high, got ${shown(value)}")
      case "bool" => if (!value.isBoolean) fail(s"$path must be true or false, got ${shown(value)}")
      case "string" | "column" =>
        if (!value.isTextual || value.asText.isEmpty)
          fail(s"$path must be a non-empty string, got ${shown(value)}")
      case "schema" =>
        if (!value.isObject || value.path("type").asText != "struct") fail(s"$path must be a struct schema")
      case "params" =>
        val scalar = (v: JsonNode) => v.isTextual || v.isNumber || v.isBoolean
        if (
          !value.isObject || !value.properties().asScala.forall(e => e.getKey.nonEmpty && scalar(e.getValue))
        )
          fail(s"$path must map names to strings, numbers or booleans, got ${shown(value)}")
      case choice if choice.contains("|") =>
        if (!choice.split('|').contains(value.asText) || !value.isTextual)
          fail(s"$path must be one of ${choice.split('|').mkString(", ")}, got ${shown(value)}")
      case other => fail(s"$path: unknown type '$other' in contract.json")
    }
  }

  private def section(value: JsonNode, name: String, path: String): Unit = {
    val s = plan.get("sections").get(name)
    if (!value.isObject) fail(s"$path must be an object, got ${shown(value)}")
    val kinds = s.get("kinds")
    s.get("tag").asText match {
      case "onlyKey" =>
        val keys = value.fieldNames().asScala.toSeq
        if (keys.size != 1 || !kinds.has(keys.head))
          fail(s"$path must have one of ${kinds.fieldNames().asScala.mkString(", ")}, got ${shown(value)}")
        obj(value, kinds.get(keys.head), path, None)
      case tag =>
        val kind = value.path(tag).asText
        if (!kinds.has(kind))
          fail(
            s"$path.$tag must be one of ${kinds.fieldNames().asScala.mkString(", ")}, got '${Limits.quoted(kind)}'"
          )
        obj(value, kinds.get(kind), s"$path($kind)", Some(tag))
    }
  }

  private def boundsOf(text: String): (Int, Option[Int]) =
    if (text.isEmpty) (0, None)
    else
      text.split("\\.\\.", -1) match {
        case Array(exact) => (exact.toInt, Some(exact.toInt))
        case Array(low, high) =>
          (if (low.isEmpty) 0 else low.toInt, if (high.isEmpty) None else Some(high.toInt))
        case _ => fail(s"bad list bounds '$text' in contract.json")
      }
}
