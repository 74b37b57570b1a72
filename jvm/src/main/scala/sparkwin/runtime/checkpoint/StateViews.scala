package sparkwin.runtime.checkpoint

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.types._

import sparkwin.core.{CorruptStateException, Record}
import sparkwin.core.time.ChannelWatermarks
import sparkwin.core.timer.Timer
import sparkwin.core.window.{GlobalWindow, StormWindow, TimeWindow, Window}
import sparkwin.operator.{Emitter, Operator, PaneInfo, PaneTiming}
import sparkwin.operator.algorithms.Algorithms
import sparkwin.operator.store.{ByteSource, Bytes}
import sparkwin.plan.{Plan, PlanDecoder}
import sparkwin.runtime.spark.task.{GroupEntries, GroupRecord, KeyBytes, OutputLayout, Rows, SparkKeyBackend}

/** What one key group of a checkpoint holds, as rows a user reads (`sparkwin.state`): per key its
  * open windows (bounds, what a pane fired now would carry, pane and trigger bookkeeping) and
  * pending timers; the group's copy of the channel watermarks; and the group itself (its keys,
  * entries, bytes, Spark timer). It decodes the entries with the codecs that wrote them and
  * changes nothing. One per task (it reuses the engine objects), built from the plan's JSON.
  *
  * The rows share one schema ([[StateViews.unionSchema]]): `view` names which of the four
  * structs is filled, as the runtime's union tells its outputs apart.
  */
final class StateViews(planJson: String, java8Time: Boolean) {
  import StateViews._

  private val plan: Plan = PlanDecoder.cached(planJson)
  private val layout = new OutputLayout(plan, java8Time)
  private val keyBytes = new KeyBytes(plan.keys.schema)
  private val backend = new SparkKeyBackend(plan.spec.aggregates)
  private val operator: Operator = Algorithms.operator(plan.spec, backend, Silent)
  private val keyCount = plan.keyFields.size
  private val aggregateCount = plan.aggregateFields.size
  private val schema = unionSchema(plan)

  private def ts(ms: Long): Any =
    if (ms == Long.MinValue || ms == Long.MaxValue) null else Rows.timestamp(ms, java8Time)

  /** The rows of the group labelled `label`, read from Spark partition `partition`, whose
    * entries are `entries` (key, value).
    */
  def rows(label: Int, partition: Int, entries: Seq[(Array[Byte], Array[Byte])]): Iterator[Row] = {
    val where = s"the key group labelled $label (partition $partition)"
    try {
      val out = scala.collection.mutable.ArrayBuffer.empty[Row]
      var record: GroupRecord.Stored = null
      var previous = Long.MinValue
      var keys = 0L
      entries.foreach { case (k, v) =>
        GroupEntries.of(k) match {
          case GroupEntries.Record => record = GroupRecord.read(v)
          case GroupEntries.PreviousWatermark => previous = Bytes.getLong(v, 0)
          case _ =>
        }
      }
      GroupEntries.keyStates(entries).foreach { case (k, v) =>
        keys += 1
        val key = keyBytes.decode(k)
        backend.load(key, v)
        operator.openWindows.foreach(w => out += windowRow(label, key, w))
        backend.eventTimers.iterator.foreach(t => out += timerRow(label, key, t, "event"))
        backend.processingTimers.iterator.foreach(t => out += timerRow(label, key, t, "processing"))
      }
      val channels = if (record == null) None else record.channels.map(channelWatermarks)
      channels.foreach { cw =>
        cw.channels.foreach { case (id, wm, idle) =>
          out += union(ChannelsView, Row(label, id, ts(wm), idle, ts(cw.watermark)))
        }
      }
      val bytes = entries.iterator.map(e => e._1.length.toLong + e._2.length).sum
      val groupWatermark =
        if (previous != Long.MinValue) previous else channels.fold(Long.MinValue)(_.watermark)
      out += union(
        GroupsView,
        Row(
          label,
          partition,
          keys,
          entries.size.toLong,
          bytes,
          if (record == null) 0 else record.buckets,
          if (record == null) 0L else if (record.index != null) -1L else record.table.size.toLong,
          if (record == null) null else ts(record.timer),
          ts(groupWatermark)
        )
      )
      out.iterator
    } catch {
      case e: CorruptStateException => throw e.in(where)
    }
  }

  private def channelWatermarks(bytes: Array[Byte]): ChannelWatermarks = {
    val strategy = plan.watermark.getOrElse(
      throw new IllegalStateException(
        "this checkpoint keeps channel watermarks and the plan has no watermark"
      )
    )
    val source = new ByteSource
    source.point(bytes)
    CorruptStateException.reading("a key group's channel watermarks", bytes.length, () => source.position) {
      ChannelWatermarks.read(
        strategy,
        new java.io.DataInputStream(source),
        plan.declaredChannels,
        holdNew = false
      )
    }
  }

  private def windowRow(label: Int, key: Row, w: sparkwin.operator.OpenWindow): Row = {
    val values = new Array[Any](1 + keyCount + 3 + aggregateCount + 5)
    values(0) = label
    putKey(key, values)
    var i = 1 + keyCount
    bounds(w.window, values, i)
    i += 3
    if (w.results != null) {
      // The values as a pane carries them (nested records as rows), through the output's layout.
      val pane = PaneInfo(PaneTiming.Early, w.panes, w.panes == 0, isLast = false)
      val result = layout.resultRow(key, w.window, pane, padded(w.results)).getStruct(1)
      var j = 0
      while (j < aggregateCount) { values(i + j) = result.get(keyCount + 3 + j); j += 1 }
    }
    i += aggregateCount
    values(i) = if (w.elements < 0) null else w.elements
    values(i + 1) = w.panes
    values(i + 2) = w.onTimeFired
    values(i + 3) = w.closed
    values(i + 4) = w.trigger.map { case (name, v) => name -> String.valueOf(v) }.toMap
    union(WindowsView, new GenericRow(values))
  }

  /** The key's output columns from index 1 (after the key group). */
  private def putKey(key: Row, values: Array[Any]): Unit = {
    val k = new Array[Any](keyCount)
    plan.keys.putOutput(key, k)
    System.arraycopy(k, 0, values, 1, keyCount)
  }

  // The hidden EARLIEST/LATEST aggregate is the spec's last: a pane's values carry it.
  private def padded(results: Array[Any]): Array[Any] =
    if (results.length >= plan.spec.aggregates.size) results
    else
      java.util.Arrays
        .copyOf(results.asInstanceOf[Array[AnyRef]], plan.spec.aggregates.size)
        .asInstanceOf[Array[Any]]

  private def timerRow(label: Int, key: Row, t: Timer, domain: String): Row = {
    val values = new Array[Any](1 + keyCount + 4)
    values(0) = label
    putKey(key, values)
    values(1 + keyCount) = domain
    values(2 + keyCount) = ts(t.timestamp)
    if (t.window != null) {
      val b = new Array[Any](3)
      bounds(t.window, b, 0)
      values(3 + keyCount) = b(0)
      values(4 + keyCount) = b(1)
    }
    union(TimersView, new GenericRow(values))
  }

  private def bounds(w: Window, out: Array[Any], at: Int): Unit = w match {
    case t: TimeWindow => out(at) = ts(t.start); out(at + 1) = ts(t.end); out(at + 2) = ts(t.maxTimestamp)
    case s: StormWindow =>
      out(at) = if (s.hasStart) ts(s.start) else null; out(at + 1) = ts(s.end);
      out(at + 2) = ts(s.maxTimestamp)
    case GlobalWindow => out(at) = null; out(at + 1) = null; out(at + 2) = null
    case _ => out(at) = null; out(at + 1) = null; out(at + 2) = null
  }

  private def union(view: String, row: Row): Row = {
    val values = new Array[Any](schema.size)
    values(0) = view
    values(1 + Views.indexOf(view)) = row
    new GenericRow(values)
  }
}

object StateViews {
  val WindowsView = "windows"
  val TimersView = "timers"
  val ChannelsView = "channels"
  val GroupsView = "keyGroups"

  /** The views, in the union's column order. */
  val Views: Seq[String] = Seq(WindowsView, TimersView, ChannelsView, GroupsView)

  /** Which view a union row is. */
  val ViewColumn = "view"

  private val KeyGroup = StructField("key_group", IntegerType, nullable = false)

  def windowsSchema(plan: Plan): StructType =
    StructType(
      (KeyGroup +: plan.keyFields) ++
        Seq("window_start", "window_end", "window_time").map(StructField(_, TimestampType)) ++
        plan.aggregateFields ++ Seq(
          StructField("elements", LongType),
          StructField("panes_fired", LongType, nullable = false),
          StructField("on_time_fired", BooleanType, nullable = false),
          StructField("closed", BooleanType, nullable = false),
          StructField("trigger_state", MapType(StringType, StringType), nullable = false)
        )
    )

  def timersSchema(plan: Plan): StructType =
    StructType(
      (KeyGroup +: plan.keyFields) ++ Seq(
        StructField("domain", StringType, nullable = false),
        StructField("time", TimestampType),
        StructField("window_start", TimestampType),
        StructField("window_end", TimestampType)
      )
    )

  val ChannelsSchema: StructType = StructType(
    Seq(
      KeyGroup,
      StructField("channel", StringType, nullable = false),
      StructField("watermark", TimestampType),
      StructField("idle", BooleanType, nullable = false),
      StructField("valve_watermark", TimestampType)
    )
  )

  val GroupsSchema: StructType = StructType(
    Seq(
      KeyGroup,
      StructField("partition", IntegerType, nullable = false),
      StructField("keys", LongType, nullable = false),
      StructField("entries", LongType, nullable = false),
      StructField("bytes", LongType, nullable = false),
      StructField("buckets", IntegerType, nullable = false),
      StructField("wakeups", LongType, nullable = false),
      StructField("spark_timer", TimestampType),
      StructField("watermark", TimestampType)
    )
  )

  def unionSchema(plan: Plan): StructType =
    StructType(
      StructField(ViewColumn, StringType, nullable = false) +: Seq(
        windowsSchema(plan),
        timersSchema(plan),
        ChannelsSchema,
        GroupsSchema
      ).zip(Views).map { case (s, name) => StructField(name, s) }
    )

  /** Output for an operator that only reads state: it never fires. */
  private object Silent extends Emitter {
    def emitResult(key: Any, window: Window, pane: PaneInfo, values: Array[Any]): Unit = ()
    def emitElements(
        key: Any,
        window: Window,
        pane: PaneInfo,
        elements: java.util.List[sparkwin.core.Element]
    ): Unit =
      ()
    def emitLate(key: Any, record: Record, timestamp: Long): Unit = ()
    def emitError(record: Record, message: String): Unit = ()
    def emitWindowError(key: Any, window: Window, message: String): Unit = ()
  }
}
