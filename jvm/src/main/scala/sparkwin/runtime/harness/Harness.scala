package sparkwin.runtime.harness

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.types._

import sparkwin.core.{ArrayRecord, Element, Record}
import sparkwin.core.window.{GlobalWindow, StormWindow, TimeWindow, Window}
import sparkwin.operator.{Emitter, PaneInfo}
import sparkwin.plan.PlanDecoder
import sparkwin.runtime.TimeMove
import sparkwin.runtime.local.LocalRunner

/** The test harness behind `sparkwin.testing.WindowHarness`: the engine Spark runs, driven by
  * hand through a [[LocalRunner]] (channels, valve, watermarks, processing time), with rows
  * going in and out as JSON.
  *
  * Values: timestamps are epoch milliseconds, dates are days since the epoch, decimals are
  * strings; everything else is plain JSON.
  */
final class Harness(planJson: String, channels: Int, generateWatermarks: Boolean) {
  private val mapper = new ObjectMapper()
  private val plan = PlanDecoder.decode(planJson)
  private val schema = plan.inputSchema
  private val out = new HarnessOutput
  private val runner = new LocalRunner(
    plan.spec,
    plan.keys.of,
    channels,
    if (generateWatermarks) plan.watermark else None,
    out,
    timestampColumn = plan.timestampColumn,
    policy = plan.time
  )

  /** Processes one element; `row` is a JSON object of column values. Returns what became of
    * it, as the engine decided it (an [[sparkwin.operator.ElementFate]]'s name).
    */
  def processElement(row: String, channel: Int): String =
    runner.processRecord(new ArrayRecord(Harness.fromJson(mapper.readTree(row), schema)), channel).name

  // Flink's test harness's names (Python's WindowHarness keeps them); each is one move of the
  // runner's one door for time, but a channel's idleness, which is the valve's (Driver).
  def processWatermark(watermark: Long, channel: Int): Unit =
    runner.moveClocks(TimeMove.Watermark(watermark, channel))
  def markIdle(channel: Int): Unit = runner.markIdle(channel)
  def markActive(channel: Int): Unit = runner.markActive(channel)
  def setProcessingTime(time: Long): Unit = runner.moveClocks(TimeMove.ProcessingTime(time))

  /** The input ended: the watermark jumps to +infinity and every event-time window fires. */
  def endOfInput(): Unit = runner.moveClocks(TimeMove.EndOfInput)

  /** The inputs' watermark (the valve's), as the caller gave it. */
  def currentWatermark(): Long = runner.inputWatermark

  /** The valve's view of each channel: JSON list of {channel, watermark, idle, aligned}. */
  def channelStatus(): String = {
    val valve = runner.valve
    val items = (0 until valve.numChannels).map { i =>
      val m = new java.util.LinkedHashMap[String, Any]()
      m.put("channel", i)
      m.put("watermark", valve.channelWatermark(i))
      m.put("idle", valve.isChannelIdle(i))
      m.put("aligned", valve.isChannelAligned(i))
      m
    }
    mapper.writeValueAsString(items.asJava)
  }
  def currentProcessingTime(): Long = runner.currentProcessingTime
  def numStateEntries(): Int = runner.numStateEntries
  def numLateRecordsDropped(): Long = runner.operator.metrics.droppedLate
  def metrics(): String = mapper.writeValueAsString(runner.operator.metrics.asMap.asJava)
  def panesFired(): Long = runner.operator.metrics.panesFired

  /** Results since the last call, in emission order: JSON list of objects. For process
    * pipelines each entry is {"pane": {...}, "elements": [...]}.
    */
  def extractOutput(): String = {
    val items = out.results.toList
    out.results.clear()
    mapper.writeValueAsString(items.asJava)
  }

  /** A side output's rows since the last call: "late" (or the plan's tag) or "errors". */
  def extractSideOutput(tag: String): String = {
    val rows: Seq[java.util.Map[String, Any]] =
      if (plan.lateOutputTag.contains(tag)) {
        val r = out.late.toList.map(rec => rowMap(rec, schema)); out.late.clear(); r
      } else if (tag == "errors") {
        val r = out.errors.toList.map { case (rec, msg) =>
          val m = rowMap(rec, schema); m.put("error", msg); m
        }
        out.errors.clear(); r
      } else
        throw new IllegalArgumentException(
          s"no side output '$tag': this pipeline has ${(plan.lateOutputTag.toSeq :+ "errors").mkString(", ")}"
        )
    mapper.writeValueAsString(rows.asJava)
  }

  private def rowMap(r: Record, s: StructType): java.util.Map[String, Any] = {
    val m = new java.util.LinkedHashMap[String, Any]()
    s.fields.indices.foreach(i => m.put(s.fields(i).name, Harness.toJson(r.get(i))))
    m
  }

  private final class HarnessOutput extends Emitter {
    val results = ArrayBuffer.empty[java.util.Map[String, Any]]
    val late = ArrayBuffer.empty[Record]
    val errors = ArrayBuffer.empty[(Record, String)]

    private def head(key: Any, window: Window, pane: PaneInfo): java.util.LinkedHashMap[String, Any] = {
      val m = new java.util.LinkedHashMap[String, Any]()
      val values = new Array[Any](plan.keyFields.size)
      plan.keys.putOutput(key, values)
      plan.keyFields.zip(values).foreach { case (f, v) => m.put(f.name, Harness.toJson(v)) }
      val (start, end, time) = window match {
        case t: TimeWindow => (t.start: Any, t.end: Any, t.maxTimestamp: Any)
        case s: StormWindow => (if (s.hasStart) s.start else null, s.end: Any, s.maxTimestamp: Any)
        case GlobalWindow => (null, null, null)
      }
      m.put("window_start", start)
      m.put("window_end", end)
      m.put("window_time", time)
      m
    }

    private def paneFields(m: java.util.Map[String, Any], pane: PaneInfo): Unit = {
      m.put("pane_timing", pane.timing.name)
      m.put("pane_index", pane.index)
      m.put("pane_is_first", pane.isFirst)
      m.put("pane_is_last", pane.isLast)
    }

    def emitResult(key: Any, window: Window, pane: PaneInfo, values: Array[Any]): Unit = {
      val m = head(key, window, pane)
      plan.aggregateFields.zip(values).foreach { case (f, v) => m.put(f.name, Harness.toJson(v)) }
      if (plan.windowTimeFromAggregate) {
        val v = values(plan.aggregateFields.size)
        m.put("window_time", if (v == null) null else sparkwin.core.Values.toMillis(v))
      }
      paneFields(m, pane)
      results += m
    }

    def emitElements(key: Any, window: Window, pane: PaneInfo, elements: java.util.List[Element]): Unit =
      if (plan.spec.emitsElements) { // the result just emitted carries its pane's elements
        val rows = new java.util.ArrayList[Any]()
        elements.forEach(e => rows.add(rowMap(e.record, schema)))
        results.last.put("elements", rows)
      } else emitPane(key, window, pane, elements)

    private def emitPane(
        key: Any,
        window: Window,
        pane: PaneInfo,
        elements: java.util.List[Element]
    ): Unit = {
      val info = head(key, window, pane)
      paneFields(info, pane)
      val entry = new java.util.LinkedHashMap[String, Any]()
      entry.put("pane", info)
      val rows = new java.util.ArrayList[Any]()
      elements.forEach(e => rows.add(rowMap(e.record, schema)))
      entry.put("elements", rows)
      results += entry
    }

    def emitLate(key: Any, record: Record, timestamp: Long): Unit = late += record

    def emitError(record: Record, message: String): Unit = errors += ((record, message))

    def emitWindowError(key: Any, window: Window, message: String): Unit =
      errors += ((plan.keys.inputRecord(key, schema.size), message))
  }
}

object Harness {

  /** JSON input to the Java values a Spark Row of `schema` would hold. */
  def fromJson(node: JsonNode, schema: StructType): Array[Any] = {
    val known = schema.fieldNames.toSet
    node.fieldNames().asScala.foreach { n =>
      if (!known(n))
        throw new IllegalArgumentException(
          s"unknown column '$n'; the pipeline's input has ${schema.fieldNames.mkString(", ")}"
        )
    }
    schema.fields.map(f => value(node.get(f.name), f.dataType, f.name))
  }

  private def value(n: JsonNode, t: DataType, name: String): Any =
    if (n == null || n.isNull) null
    else
      t match {
        case TimestampType | TimestampNTZType => new java.sql.Timestamp(n.asLong)
        // Days as they are: a java.sql.Date made from a LocalDate past year 9999 or before year 1
        // reads back as another day (its calendar wraps the year), which errors would show.
        case DateType => java.time.LocalDate.ofEpochDay(n.asLong)
        case LongType => n.asLong
        case IntegerType => n.asInt
        case ShortType => n.asInt.toShort
        case ByteType => n.asInt.toByte
        case DoubleType => n.asDouble
        case FloatType => n.asDouble.toFloat
        case BooleanType => n.asBoolean
        case StringType => n.asText
        case _: DecimalType => new java.math.BigDecimal(n.asText)
        // A List, not an iterator's toSeq: on Scala 2.12 that is a lazy Stream, whose later
        // elements would be converted (and fail) only when read.
        case a: ArrayType => n.elements().asScala.map(value(_, a.elementType, name)).toList
        case s: StructType => new ArrayRecord(fromJson(n, s))
        case other =>
          throw new IllegalArgumentException(s"the harness cannot take column '$name' of type $other")
      }

  /** An engine value as plain JSON (see the class comment). */
  def toJson(v: Any): Any = v match {
    case null => null
    case t: java.sql.Timestamp => t.getTime
    case i: java.time.Instant => i.toEpochMilli
    case d: java.sql.Date => d.toLocalDate.toEpochDay
    case d: java.time.LocalDate => d.toEpochDay
    case d: java.math.BigDecimal => d.toPlainString
    case r: Record => r.toArray.map(toJson).toSeq.asJava
    case s: scala.collection.Seq[_] => s.map(toJson).asJava
    case other => other
  }
}
