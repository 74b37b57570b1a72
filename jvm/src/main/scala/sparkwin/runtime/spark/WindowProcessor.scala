package sparkwin.runtime.spark

import sparkwin.plan._
import sparkwin.runtime.spark._

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.{Encoders, Row}
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.streaming._
import org.apache.spark.sql.types._

import sparkwin.runtime.Driver

/** How a pipeline uses Spark's one timer domain per processor (see DESIGN.md, "Timers on
  * Spark"): event-time timers only, processing-time timers only, or both, in which case
  * processing time drives Spark's timers and keys with pending event-time timers are polled
  * every micro-batch.
  */
sealed trait TimerDomains extends Serializable
object TimerDomains {
  case object EventOnly extends TimerDomains
  case object ProcessingOnly extends TimerDomains
  case object Both extends TimerDomains
  case object Neither extends TimerDomains
}

/** The engine inside Spark's `transformWithState`, one call per key group.
  *
  * Spark's grouping key is a key group (a hash of the pipeline's key, as Flink's key groups),
  * not the key itself: Spark's timers cost several state-store operations each, and one timer
  * per key group instead of one per key is what makes the runtime keep up with Spark's own
  * windows (DESIGN.md, "Key groups"). Within a group, the one state variable `sparkwin` maps
  *   - each key (as [[KeyBytes]]) to its engine state: one read and at most one write per key
  *     the call touches;
  *   - the empty key to the group's [[GroupRecord]]: the number of key groups the checkpoint
  *     was written with, the group's one Spark timer (at the earliest wake-up), how many of
  *     its keys hold state, and the wake-up table (each key with pending engine timers and
  *     when it must wake). One read and at most one write per call, where a map of wake-ups
  *     cost a scan and a write per key.
  * A call processes every key with rows, and every key whose wake-up is due, as the per-key
  * design did: due timers fire before the key's rows, as when a watermark precedes the
  * elements that follow it.
  *
  * It holds the plan as JSON and decodes it on the executor, so nothing of the engine needs to
  * be serialisable.
  */
final class WindowProcessor(
    planJson: String,
    java8Time: Boolean,
    domains: TimerDomains,
    combined: Boolean,
    keyGroups: Int
) extends StatefulProcessor[Int, Row, Row] {

  @transient private var keyStates: MapState[Array[Byte], Array[Byte]] = _
  @transient private var keyBytes: KeyBytes = _
  @transient private var liveKeys: Long = _
  @transient private var wakeups: java.util.LinkedHashMap[Row, java.lang.Long] = _ // this call's table
  @transient private var encoded: java.util.HashMap[Row, Array[Byte]] = _ // this call's keys as bytes
  @transient private var wakeupsChanged: Boolean = _
  @transient private var backend: SparkKeyBackend = _
  @transient private var driver: Driver = _
  @transient private var collector: RowCollector = _
  @transient private var plan: Plan = _
  @transient private var keyWidth: Int = _ // key columns; a pre-aggregated row leads with them
  @transient private var keyOf: Row => Row = _
  @transient private var reported: Array[Long] = _
  @transient private var partialCodec: Combiner.PartialCodec = _

  override def init(outputMode: OutputMode, timeMode: TimeMode): Unit = {
    plan = PlanDecoder.cached(planJson)
    val keySchema = plan.keys.schema
    val handle = getHandle
    // One variable, bytes on both sides: Spark builds every state variable's encoders in
    // every task (KeyBytes).
    keyStates = handle.getMapState[Array[Byte], Array[Byte]](
      "sparkwin",
      Encoders.BINARY,
      Encoders.BINARY,
      TTLConfig.NONE
    )
    keyBytes = new KeyBytes(keySchema)
    backend = new SparkKeyBackend(plan.spec.aggregates)
    collector = new RowCollector(new OutputLayout(plan, java8Time))
    driver = new Driver(plan.spec, plan.keys.of, plan.timestampColumn, backend, collector)
    keyWidth = keySchema.size
    keyOf = keyExtractor()
    partialCodec = new Combiner.PartialCodec(plan.spec)
    reported = OutputLayout.metricValues(driver.metrics)
  }

  /** The pipeline's key of an input row ([[Keys]]); a pre-aggregated row from [[Combiner]]
    * leads with it.
    */
  private def keyExtractor(): Row => Row =
    if (combined) row => {
      val values = new Array[Any](keyWidth)
      var i = 0
      while (i < keyWidth) { values(i) = row.get(i); i += 1 }
      new GenericRow(values)
    }
    else {
      val keys = plan.keys
      row => keys.of(new RowRecord(row))
    }

  override def handleInputRows(key: Int, rows: Iterator[Row], timers: TimerValues): Iterator[Row] = {
    // A key's rows in arrival order; keys in the order they first appear.
    val byKey = new java.util.LinkedHashMap[Row, ArrayBuffer[Row]]()
    rows.foreach(row => byKey.computeIfAbsent(keyOf(row), _ => new ArrayBuffer[Row]()) += row)
    run(timers, byKey, firing = false)
  }

  override def handleExpiredTimer(key: Int, timers: TimerValues, info: ExpiredTimerInfo): Iterator[Row] =
    run(timers, new java.util.LinkedHashMap[Row, ArrayBuffer[Row]](), firing = true)

  /** The clock Spark's timers run on, for this pipeline. */
  private def timerClock(timers: TimerValues): Long = domains match {
    case TimerDomains.EventOnly => timers.getCurrentWatermarkInMs()
    case TimerDomains.ProcessingOnly | TimerDomains.Both => timers.getCurrentProcessingTimeInMs()
    case TimerDomains.Neither => Long.MinValue
  }

  private def run(
      timers: TimerValues,
      byKey: java.util.LinkedHashMap[Row, ArrayBuffer[Row]],
      firing: Boolean
  ): Iterator[Row] = {
    val clock = timerClock(timers)
    val stored = Option(keyStates.getValue(WindowProcessor.GroupRecordKey)).map(GroupRecord.decode)
    stored.foreach { g =>
      val groups = g.keyGroups
      if (groups != keyGroups)
        throw new IllegalStateException(
          s"this checkpoint was written with $groups key groups, but spark.sparkwin.keyGroups is " +
            s"$keyGroups: set it back to $groups to resume the query (the number of key groups is " +
            "fixed for the life of a checkpoint)"
        )
    }
    liveKeys = stored.map(_.liveKeys).getOrElse(0L)
    wakeups = new java.util.LinkedHashMap[Row, java.lang.Long]()
    encoded = new java.util.HashMap[Row, Array[Byte]]()
    wakeupsChanged = false
    stored.foreach(_.wakeups.foreach { case (bytes, at) =>
      val key = keyBytes.decode(bytes)
      wakeups.put(key, at)
      encoded.put(key, bytes)
    })
    // Keys to wake: those with rows, then those whose wake-up is due.
    val due = new ArrayBuffer[Row]()
    var earliest = Long.MaxValue // among keys this call does not touch
    wakeups.forEach { (k, at) =>
      if (!byKey.containsKey(k)) {
        if (at <= clock) due += k else earliest = math.min(earliest, at)
      }
    }
    byKey.forEach { (k, rows) => earliest = math.min(earliest, processKey(k, rows, timers)) }
    due.foreach(k => earliest = math.min(earliest, processKey(k, ArrayBuffer.empty, timers)))
    syncGroup(stored, earliest, clock, firing)
    // Counters that no output row shows travel as a metrics row (observed, then dropped).
    val now = OutputLayout.metricValues(driver.metrics)
    if (!java.util.Arrays.equals(now, reported)) {
      collector.addMetrics(now.indices.map(i => now(i) - reported(i)).toArray)
      reported = now
    }
    collector.drain()
  }

  /** One key: load, catch its clocks up, its rows, save; returns its next wake-up. */
  private def processKey(
      key: Row,
      rows: ArrayBuffer[Row],
      timers: TimerValues
  ): Long = {
    val id = encoded.computeIfAbsent(key, k => keyBytes.encode(k))
    val loaded = keyStates.getValue(id)
    backend.load(key, loaded)
    val now = timers.getCurrentProcessingTimeInMs()
    val wm = timers.getCurrentWatermarkInMs()
    // Spark's watermark starts at 0 before any data; the engine's "no watermark yet" is -inf.
    driver.catchUp(
      now,
      if (wm > 0) wm else Long.MinValue,
      pollProcessingTime = domains != TimerDomains.EventOnly
    )
    if (combined) rows.foreach(partial(key, _))
    else rows.foreach(row => driver.processRecord(new RowRecord(row)))
    backend.save(bytes => keyStates.updateValue(id, bytes), () => keyStates.removeKey(id))
    if (loaded == null && !backend.isEmpty) liveKeys += 1
    else if (loaded != null && backend.isEmpty) liveKeys -= 1
    val next = wakeup(now)
    val before = wakeups.get(key)
    if (next == Long.MaxValue) { if (before != null) { wakeups.remove(key); wakeupsChanged = true } }
    else if (before == null || before.longValue != next) { wakeups.put(key, next); wakeupsChanged = true }
    next
  }

  /** When the current key must next be woken, on Spark's timer clock (MaxValue: never). */
  private def wakeup(processingTime: Long): Long = domains match {
    case TimerDomains.EventOnly =>
      backend.eventTimers.nextTime
    case TimerDomains.ProcessingOnly | TimerDomains.Both =>
      val proc = backend.processingTimers.nextTime
      // Event-time timers cannot wake a key in processing-time mode: poll next batch.
      val poll =
        if (domains == TimerDomains.Both && !backend.eventTimers.isEmpty) processingTime + 1
        else Long.MaxValue
      math.min(proc, poll)
    case TimerDomains.Neither => Long.MaxValue
  }

  /** A pre-aggregated row from [[Combiner]]: a group of elements, or a row without timestamp
    * (passed through whole, for the driver to route to the error output).
    */
  private def partial(key: Row, row: Row): Unit = {
    val k = keyWidth
    if (!row.isNullAt(k + 3)) driver.processRecord(new RowRecord(row.getStruct(k + 3)))
    else
      driver.processPartial(
        key,
        row.getLong(k),
        partialCodec.decode(row.getAs[Array[Byte]](k + 2)),
        row.getLong(k + 1)
      )
  }

  /** One Spark timer per key group, at its earliest wake-up and always strictly in the future:
    * a timer due now would fire at the end of this batch in Spark but at the next advance in
    * the engine's semantics. The group's record goes once no key of it holds state or waits.
    */
  private def syncGroup(stored: Option[GroupRecord], earliest: Long, clock: Long, firing: Boolean): Unit = {
    val current = stored.map(_.timer).getOrElse(Long.MinValue)
    val wanted = if (earliest == Long.MaxValue) Long.MinValue else math.max(earliest, clock + 1)
    if (wanted != current) {
      val handle = getHandle
      // A timer already due is deleted too when the group's rows got here first (the engine
      // has fired what it stood for), sparing a second handler call; never the one firing now.
      if (current != Long.MinValue && (current > clock || !firing)) handle.deleteTimer(current)
      if (wanted != Long.MinValue) handle.registerTimer(wanted)
    }
    if (liveKeys == 0 && wanted == Long.MinValue && wakeups.isEmpty) {
      if (stored.isDefined) keyStates.removeKey(WindowProcessor.GroupRecordKey)
    } else if (stored.isEmpty || wakeupsChanged || wanted != current || liveKeys != stored.get.liveKeys) {
      val table = new ArrayBuffer[(Array[Byte], Long)](wakeups.size)
      wakeups.forEach((k, at) => table += (encoded.get(k) -> at.longValue))
      keyStates.updateValue(
        WindowProcessor.GroupRecordKey,
        GroupRecord.encode(GroupRecord(keyGroups, wanted, liveKeys, table.toSeq))
      )
    }
  }
}

object WindowProcessor {

  /** Where the group's record lives in `sparkwin`: no key's bytes are empty (a key row has at
    * least one field, so its `UnsafeRow` at least a null bitmap and a word).
    */
  val GroupRecordKey: Array[Byte] = Array.emptyByteArray
}
