package sparkwin.runtime.spark.task

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow

import sparkwin.core.CorruptStateException
import sparkwin.core.time.ChannelWatermarks
import sparkwin.operator.ClockMove
import sparkwin.operator.store.Bytes
import sparkwin.plan._
import sparkwin.runtime.{Driver, TimeMove}

/** What a key group's stateful operator offers the loop during one call: the group's stored
  * entries (its record, and each key's state, under their bytes), the group's one event-time
  * timer and Spark's clocks. Each Spark line's operator is one small adapter of this
  * (`transformWithState` on 4.x, `flatMapGroupsWithState` on 3.5).
  */
trait GroupHost {

  /** The value stored under `key`, or null. */
  def get(key: Array[Byte]): Array[Byte]
  def put(key: Array[Byte], value: Array[Byte]): Unit
  def remove(key: Array[Byte]): Unit

  /** The object [[keep]] left under `key`, not yet written (null: none; read [[get]]). */
  def kept(key: Array[Byte]): Encodable = null

  /** Puts `value` under `key`. A host that holds its writes ([[WriteBehind]]) holds the object
    * itself and encodes it when it writes, so rows that change one entry one after another
    * encode it once, and the next call takes the object back ([[kept]]) instead of decoding.
    */
  def keep(key: Array[Byte], value: Encodable): Unit = put(key, value.encode())

  /** Whether the group's keys go into buckets ([[KeyBuckets]]): where each entry is its own
    * state-store operation (Spark 4's map state), not where the group is one value (3.5's).
    */
  def packsKeys: Boolean

  /** Spark's event-time watermark (0 or less: none yet). */
  def watermark: Long

  /** The micro-batch's time (negative: unknown). */
  def batchTime: Long

  /** The group's event-time timer goes from `current` to `wanted` (Long.MinValue: none), said at
    * the end of every call; `firing` when the call is the timer's own.
    */
  def timer(current: Long, wanted: Long, firing: Boolean): Unit

  /** The key group's label (its Spark grouping key), to name it in errors; -1: unknown. */
  def keyGroup: Int = -1
}

/** An entry's value as an object that says its bytes ([[GroupHost.keep]]). */
trait Encodable {
  def encode(): Array[Byte]
}

/** What a key group's loop is built from, sent to the executors with the operator's function. It
  * holds the plan as JSON, decoded on the executor, so nothing of the engine needs to be
  * serialisable.
  *
  * @param tickColumn where a row carries a clock tick's time (negative: the pipeline reads no clock)
  * @param realTime whether the query runs in Spark's real-time mode ([[TimePolicy]])
  * @param holdMs how long a real-time group's changes wait at most before a summary writes them
  */
final case class LoopSpec(
    planJson: String,
    java8Time: Boolean,
    combined: Boolean,
    keyGroups: Int,
    wakes: Option[WakeReports],
    tickColumn: Int,
    realTime: Boolean = false,
    holdMs: Long = WriteBehind.HoldMs
)

/** The engine inside Spark's stateful operator, one call per key group, whatever the operator.
  *
  * Spark's grouping key is a key group (a hash of the pipeline's key, as Flink's key groups),
  * not the key itself: Spark's timers cost several state-store operations each, and one timer
  * per key group instead of one per key is what makes the runtime keep up with Spark's own
  * windows (DESIGN.md, "Key groups"). A group's entries ([[GroupHost]]) are
  *   - its keys (as [[KeyBytes]]) with their engine state, a bucket of them an entry
  *     ([[KeyBuckets]]) where the host packs keys and the group's record says so (a group
  *     written before, or on Spark 3.5, has an entry a key): one read and at most one write per
  *     bucket (or key) the call touches;
  *   - the empty key with the group's [[GroupRecord]]: the number of key groups the checkpoint
  *     was written with, the group's one Spark timer (at the earliest wake-up), how many of
  *     its keys hold state, the wake-up table (each key with pending engine timers and when it
  *     must wake) and, with channels, the group's copy of the channel watermarks.
  * A call processes every key with rows, and every key whose wake-up is due. When a key wakes is
  * the plan's [[TimePolicy]]'s to say: Spark's event-time timer for the group, and the clock
  * source's ticks ([[ClockSource]]) for processing time, to which every call reports the group's
  * next processing-time wake-up ([[WakeReports]]).
  *
  * Event time comes from Spark's watermark, or, for pipelines with channels (`channel=`), from
  * the group's own [[ChannelWatermarks]]: every micro-batch brings every group the same
  * per-channel summaries ([[ChannelSummaries]]), so every group moves its copy alike. A key's
  * rows meet the watermark of the batch before; the batch's own watermark follows them, and
  * windows it closes fire in the same batch (DESIGN.md, "Channels on a live stream").
  *
  * One loop per task: it reuses its engine objects from one call to the next. `operator` is the
  * Spark operator that hosts it, as errors name it (the Spark shim's).
  */
final class KeyGroupLoop(spec: LoopSpec, operator: String = "stateful") {
  import KeyGroupLoop._

  private val plan: Plan = PlanDecoder.cached(spec.planJson)

  /** How this plan's time runs (the hosts ask it which clock Spark's timers are on). */
  val policy: TimePolicy = TimePolicy.of(plan, spec.realTime)
  private val combined = spec.combined
  private val keySchema = plan.keys.schema
  private val keyBytes = new KeyBytes(keySchema)
  private val backend = new SparkKeyBackend(plan.spec.aggregates, keepDecoded = spec.realTime)
  private val layout = new OutputLayout(plan, spec.java8Time)
  private val collector = new RowCollector(layout)
  private val driver =
    new Driver(plan.spec, plan.keys.of, plan.timestampColumn, backend, collector, policy = policy)
  private val keyWidth = keySchema.size // key columns; a pre-aggregated row leads with them
  private val payloadWidth = if (combined) keyWidth + 4 else plan.inputSchema.size
  private val keyOf: Row => Row = keyExtractor()
  private val partialCodec = new Combiner.PartialCodec(plan.spec)
  private var reported: Array[Long] = OutputLayout.metricValues(driver.metrics)
  private var reportedValve: Option[(Long, Seq[(String, Long, Boolean)])] = None
  // This call's: the host, keys with state, and the wake-up table (read in place: only the
  // keys a call touches or wakes are looked up, [[WakeupTable]]).
  private var host: GroupHost = _
  private var liveKeys: Long = _
  private var wakeups: WakeupTable = _
  private var buckets: KeyBuckets = _ // null: the group's keys are entries of their own
  // Non-null: the group's wake-ups are indexed by time instead of the table ([[WakeupIndex]]),
  // and `taken` holds what this call took out of it for the keys it wakes.
  private var index: WakeupIndex = _
  private var taken: java.util.LinkedHashMap[KeyId, Wakeup] = _
  // The group record as the last call left it (null: none). In real-time mode a call is one row
  // of the same few groups, and a call whose group still holds these bytes skips reading them
  // (the record, its table and the channel watermarks were a fifth of the loop's time at 10k rows
  // a second). What is read is a function of the bytes, so another group with the same bytes may
  // use it too. Set only when a call ends well.
  private var kept: KeptRecord = _
  // Whether this call puts out rows other than a metrics row (panes, late or error rows).
  private var putOut = false
  // Real-time mode with summaries: a call leaves its writes unwritten until the map partition's
  // last summary, a timer's call or a summary once they are old ([[WriteBehind]]); null
  // elsewhere (every call writes).
  private val writeBehind: WriteBehind =
    if (spec.realTime && policy.ownWatermark) new WriteBehind(spec.holdMs) else null

  /** The task's unwritten changes (null: every call writes them; for tests). */
  def deferred: WriteBehind = writeBehind

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
      row => keys.of(new RowRecord(row, payloadWidth))
    }

  /** One call for a group: its rows of this micro-batch (none when its timer fires), and whether
    * the call is its timer's. Returns the output rows; the host has every change when it ends,
    * except in real-time mode, where they wait for a partition's last summary, a timer's call, or
    * a summary once they are [[LoopSpec.holdMs]] old ([[WriteBehind]]).
    */
  def call(group: GroupHost, rows: Iterator[Row], firing: Boolean): Iterator[Row] = {
    host = if (writeBehind == null) group else writeBehind.over(group)
    var summarised = false // a summary row: its counters go out, and it may write ([[WriteBehind]])
    var ending = false // the map partition's last summary: held writes go to the store
    // A key's rows in arrival order; keys in the order they first appear.
    val byKey = new java.util.LinkedHashMap[Row, ArrayBuffer[Row]]()
    val delivered = new java.util.TreeMap[String, java.lang.Long]()
    var partitions = 0 // the batch's source partitions, as its summaries say (real-time mode)
    val summaryAt = payloadWidth + 1
    val tickAt = spec.tickColumn
    var tick = Long.MinValue // a clock tick's time, when this call is one (SparkRuntime.withTicks)
    rows.foreach { row =>
      if (tickAt >= 0 && !row.isNullAt(tickAt)) tick = math.max(tick, row.getLong(tickAt))
      else if (policy.ownWatermark && !row.isNullAt(summaryAt)) {
        val summary = row.getStruct(summaryAt)
        ChannelSummaries.read(summary, delivered)
        partitions = math.max(partitions, ChannelSummaries.partitions(summary))
        summarised = true
        ending ||= ChannelSummaries.isLast(summary)
      } else byKey.computeIfAbsent(keyOf(row), _ => new ArrayBuffer[Row]()) += row
    }
    if (PaneTrace.on && !delivered.isEmpty)
      PaneTrace.mark(
        "call",
        s"${group.keyGroup} " + delivered.asScala.map { case (c, t) => s"$c=$t" }.mkString(" ")
      )
    val startedAt = if (PaneTrace.on) System.nanoTime() else 0L
    try {
      val holds = writeBehind != null && !(summarised || firing)
      val out = run(byKey, delivered, partitions, firing, tick, holds)
      // A summary that fires panes leaves a due write to the group's next one: its panes wait for
      // their own call only (a second's writes are several ms at 100k keys).
      val writes = writeBehind != null &&
        (ending || firing || (summarised && !putOut && writeBehind.due(group.keyGroup)))
      if (writes) writeBehind.flush(group)
      // Only calls that can close windows: a line per data row's call would slow what it traces.
      if (PaneTrace.on && (summarised || firing) && out.nonEmpty) traceDone(group.keyGroup, out, startedAt)
      else out
    } catch { case e: CorruptStateException => throw e.in(describeGroup(group.keyGroup)) }
    finally { host = null; buckets = null; index = null; taken = null }
  }

  /** With `--trace-panes`: when a summary's or timer's call that put out rows ended, how many
    * rows and how long it took (microseconds), so a trace tells a call's own work from the sink's.
    */
  private def traceDone(keyGroup: Int, out: Iterator[Row], startedAt: Long): Iterator[Row] = {
    val rows = out.toList
    PaneTrace.mark("done", s"$keyGroup ${rows.size} ${(System.nanoTime() - startedAt) / 1000}")
    rows.iterator
  }

  /** A key group as errors name it: its label (Spark's grouping key, [[KeyGroupLabels]]), of how
    * many groups, and the operator.
    */
  def describeGroup(keyGroup: Int): String = {
    val label = if (keyGroup >= 0) s"the key group labelled $keyGroup" else "a key group"
    s"$label (one of ${spec.keyGroups}, sparkwin's $operator operator)"
  }

  /** Processing time in this call: the tick's when it is one, else the micro-batch's. */
  private def processingTime(tick: Long): Long = {
    val batch = host.batchTime
    math.max(tick, if (batch >= 0) batch else System.currentTimeMillis())
  }

  private def run(
      byKey: java.util.LinkedHashMap[Row, ArrayBuffer[Row]],
      delivered: java.util.TreeMap[String, java.lang.Long],
      partitions: Int,
      firing: Boolean,
      tick: Long,
      holds: Boolean
  ): Iterator[Row] = {
    val sparkWatermark = host.watermark
    val storedBytes = host.get(GroupRecordKey)
    val reused =
      if (storedBytes != null && kept != null && java.util.Arrays.equals(storedBytes, kept.bytes)) kept
      else null
    kept = null // until this call ends well: its objects change as it runs
    val stored =
      if (storedBytes == null) None
      else if (reused != null && reused.record != null) Some(reused.record)
      else Some(GroupRecord.read(storedBytes))
    stored.foreach { g =>
      val groups = g.keyGroups
      if (groups != spec.keyGroups)
        throw new IllegalStateException(
          s"this checkpoint was written with $groups key groups, and this query runs " +
            s"${spec.keyGroups}: set spark.sparkwin.keyGroups to $groups to resume the query (the " +
            "number of key groups is fixed for the life of a checkpoint)"
        )
    }
    liveKeys = stored.map(_.liveKeys).getOrElse(0L)
    // A group keeps the layout it was written with; one with nothing stored starts in buckets
    // (so a checkpoint of an older sparkwin moves over a group at a time, as groups empty).
    val bucketCount = stored.fold(1)(_.buckets)
    buckets = if (host.packsKeys && bucketCount > 0) new KeyBuckets(host, bucketCount, liveKeys) else null
    wakeups = stored.fold(WakeupTable.empty(policy.processingTimers))(_.table)
    index = stored.map(_.index).orNull
    val now = processingTime(tick)
    // The group keeps its own channel watermarks, moved by summary rows (channel=, real-time mode).
    val watermarks =
      if (!policy.ownWatermark) None
      else Some(if (reused != null) reused.channels else channelWatermarks(stored))
    val (before, after) = policy.groupWatermarks(
      {
        val cw = watermarks.get
        val was = cw.watermark
        import scala.jdk.CollectionConverters._
        val moves = delivered.asScala.map { case (c, t) => (c, t.longValue) }
        // Every source partition the batch reads holds the watermark back before it delivers.
        (was, cw.boundary(now, moves, ChannelSummaries.partitionChannels(partitions)))
      },
      sparkWatermark,
      previousWatermark()
    )
    val clocks = Clocks(now, before, after)
    // Keys to wake: those with rows, then those whose wake-up is due.
    val withRows = new ArrayBuffer[(Row, Array[Byte], ArrayBuffer[Row])](byKey.size)
    byKey.forEach((k, rows) => withRows += ((k, keyBytes.encode(k), rows)))
    // Most calls of a group with many keys wake none of them: the table is scanned only when
    // its earliest wake-up is due, and a due key with rows wakes with them.
    val (earliestAt, earliestProcessingAt) = if (index != null) index.earliest() else wakeups.earliest()
    val due =
      if (!policy.isDue(earliestAt, earliestProcessingAt, clocks.after, now))
        ArrayBuffer.empty[Wakeup]
      else {
        val ids = new java.util.HashSet[KeyId](withRows.size * 2)
        withRows.foreach(w => ids.add(new KeyId(w._2)))
        val isDue = (at: Long, processingAt: Long) => policy.isDue(at, processingAt, clocks.after, now)
        val found =
          if (index == null) wakeups.due(isDue)
          else {
            taken = index.takeDue(host, isDue)
            val all = new ArrayBuffer[Wakeup](taken.size)
            taken.values.forEach(w => all += w)
            all
          }
        found.filterNot(w => ids.contains(new KeyId(w.key)))
      }
    withRows.foreach { case (k, id, rows) =>
      val keyId = new KeyId(id)
      // A key with rows may have had its index entry taken too (it wakes with its rows).
      val took = if (taken == null) null else taken.get(keyId)
      processKey(k, keyId, rows, clocks, wakeups.get(id), took)
    }
    // A due key's wake-up is what the call took for it (from the index, or the table's).
    due.foreach(w => processKey(keyBytes.decode(w.key), new KeyId(w.key), ArrayBuffer.empty, clocks, w, w))
    syncGroup(stored, storedBytes, sparkWatermark, now, watermarks, firing, tick)
    if (policy.inheritsWatermark && clocks.after != clocks.before)
      host.put(PreviousWatermarkKey, { val b = new Array[Byte](8); Bytes.putLong(b, 0, clocks.after); b })
    // Counters that no output row shows travel as a metrics row (observed, then dropped).
    val counters = OutputLayout.metricValues(driver.metrics)
    // The channels once any is known (a tick may come before the first data: nothing to say),
    // shown with declared channels only (OutputLayout): a source partition's is Spark's business.
    val valve =
      if (!layout.showsValve) None
      else watermarks.map(cw => (cw.watermark, cw.channels)).filter(_._2.nonEmpty)
    // A real-time call is one row: the valve goes out only when it moved since this loop last
    // said it (a task's loop is new each batch, so every batch still reports it); else a row
    // per input row, saying nothing new, would go through the output and its observe().
    val valveNews = if (spec.realTime) valve.filter(v => !reportedValve.contains(v)) else valve
    // A call that holds its writes holds a counters-only row too: the group's next summary or
    // timer call says it (before the batch commits, as the writes). At many keys nearly every
    // row opens a window, and a metrics row per input row went through the output's projection
    // and observe(). Counters ride on a row going out anyway.
    val says = !holds || valveNews.isDefined || collector.rows.nonEmpty
    if (says && (!java.util.Arrays.equals(counters, reported) || valveNews.isDefined)) {
      val delta = counters.indices.map(i => counters(i) - reported(i)).toArray
      collector.addMetrics(delta, valveNews)
      reported = counters
      if (valveNews.isDefined) reportedValve = valveNews
    }
    putOut = collector.rows.exists(_.getInt(0) != OutputLayout.MetricsKind)
    collector.drain()
  }

  private def channelWatermarks(stored: Option[GroupRecord.Stored]): ChannelWatermarks = {
    val strategy = plan.watermark.getOrElse(
      throw new PlanException("channel= on a live stream needs a watermark strategy")
    )
    stored.flatMap(_.channels) match {
      case Some(bytes) =>
        val source = new sparkwin.operator.store.ByteSource
        source.point(bytes)
        val in = new java.io.DataInputStream(source)
        CorruptStateException.reading(
          "a key group's channel watermarks",
          bytes.length,
          () => source.position
        ) {
          ChannelWatermarks.read(strategy, in, plan.declaredChannels, policy.partitionChannels)
        }
      case None =>
        if (stored.isDefined)
          throw new IllegalStateException(
            "this checkpoint was written by a pipeline whose watermark was Spark's (micro-batch " +
              "mode without channel=): start the query from a new checkpoint to read watermarks " +
              "per channel or to run it in real-time mode"
          )
        ChannelWatermarks(strategy, plan.declaredChannels, policy.partitionChannels)
    }
  }

  /** The watermark this group last saw (a pipeline that inherits its watermark keeps it). */
  private def previousWatermark(): Long =
    Option(host.get(PreviousWatermarkKey)).fold(Long.MinValue)(Bytes.getLong(_, 0))

  /** One key (`before`: its wake-up in the table, or null; `took`: what this call took out of
    * the index for it, or null): load, set its clocks, its rows, save, and note its next wake-up.
    */
  private def processKey(
      key: Row,
      keyId: KeyId,
      rows: ArrayBuffer[Row],
      clocks: Clocks,
      before: Wakeup,
      took: Wakeup
  ): Unit = {
    val id = keyId.bytes
    // Where writes are held (real-time mode), a key's state stays an object in its bucket
    // until the bucket is written ([[KeyBuckets.putState]]).
    val unencoded = buckets != null && writeBehind != null
    val loaded: AnyRef =
      if (holdsNoState(before)) null
      else if (unencoded) buckets.getState(id)
      else if (buckets != null) buckets.get(id)
      else host.get(id)
    backend.loadState(key, loaded, keyId)
    val held = if (index != null) wakeup() else null // the index keeps no key's current wake-up
    driver.moveClocks(TimeMove.EnterKey(clocks.now, clocks.before))
    if (combined) rows.foreach(partial(key, _))
    else rows.foreach(element)
    if (policy.splitsBatch)
      driver.moveClocks(TimeMove.Clocks(clocks.after, ClockMove.Keep, ClockMove.Advance))
    if (unencoded) backend.saveState(state => buckets.putState(id, state), () => buckets.remove(id))
    else if (buckets != null) backend.save(bytes => buckets.put(id, bytes), () => buckets.remove(id))
    else backend.save(bytes => host.put(id, bytes), () => host.remove(id))
    if (loaded == null && !backend.isEmpty) liveKeys += 1
    else if (loaded != null && backend.isEmpty) liveKeys -= 1
    val next = wakeup()
    if (index != null)
      index.moved(host, id, held, next, took)
    else if (next == null) { if (before != null) wakeups.remove(id) }
    else if (before == null || before.at != next.at || before.processingAt != next.processingAt)
      wakeups.put(id, next)
  }

  /** Whether a key surely has no stored state, so its read (a miss) can be skipped: every key
    * the group stores has a wake-up (as many keys with state as the table has entries, as with
    * every assigner but global windows) and the table does not list this one (`before`: its
    * wake-up there, or null). A key of its own for nearly every event made these misses a fifth
    * of the state updates.
    */
  private def holdsNoState(before: Wakeup): Boolean =
    if (index != null) liveKeys == 0 // the index lists no key for sure: only an empty group tells
    else before == null && liveKeys == wakeups.size

  private def element(row: Row): Unit = {
    val record = new RowRecord(row, payloadWidth)
    driver.processRecord(record, channelMissing = policy.checksChannel && row.isNullAt(payloadWidth))
  }

  /** When the current key must next be woken, on each clock (null: never). */
  private def wakeup(): Wakeup = {
    val at = driver.operator.nextEventTimer
    val processingAt = driver.operator.nextProcessingTimer
    if (at == Long.MaxValue && processingAt == Long.MaxValue) null else Wakeup(null, at, processingAt)
  }

  /** A pre-aggregated row from [[Combiner]]: a group of elements, or a row without timestamp
    * or channel (passed through whole, to the error output).
    */
  private def partial(key: Row, row: Row): Unit = {
    val k = keyWidth
    if (!row.isNullAt(k + 3)) {
      val raw = row.getStruct(k + 3)
      val channelMissing = policy.checksChannel && raw.isNullAt(plan.channelColumn.get)
      driver.processRecord(new RowRecord(raw), channelMissing = channelMissing)
    } else
      driver.processPartial(
        key,
        row.getLong(k),
        partialCodec.decode(row.getAs[Array[Byte]](k + 2)),
        row.getLong(k + 1)
      )
  }

  /** The group's wake-ups, as its [[TimePolicy]] says: Spark's event-time timer at its keys'
    * earliest event-time wake-up (one timer per group), and its earliest processing-time wake-up
    * reported to the clock. The group's record goes once no key of it holds state or waits (with
    * channels it stays: it holds the group's copy of the channel watermarks).
    */
  private def syncGroup(
      stored: Option[GroupRecord.Stored],
      storedBytes: Array[Byte],
      sparkWatermark: Long,
      now: Long,
      watermarks: Option[ChannelWatermarks],
      firing: Boolean,
      tick: Long
  ): Unit = {
    // A group whose table grew past a few hundred keys (or an older sparkwin's) moves to the index.
    if (index == null && host.packsKeys && wakeups.size > WakeupIndex.From)
      index = WakeupIndex.of(host, wakeups.entries)
    val (earliestEvent, earliestProcessing) = if (index != null) index.earliest() else wakeups.earliest()
    val current = stored.map(_.timer).getOrElse(Long.MinValue)
    val wake = policy.processingWake(
      earliestProcessing,
      earliestEvent != Long.MaxValue,
      watermarks.fold(Long.MaxValue)(_.nextIdleDeadline)
    )
    val wanted = policy.sparkTimer(earliestEvent, sparkWatermark, wake, now)
    host.timer(current, wanted, firing)
    spec.wakes.foreach(_.report(wake, tick != Long.MinValue))
    val bucketCount = if (buckets == null) 0 else { buckets.flush(); buckets.count }
    if (index != null) index.flush(host)
    val noWakeups = if (index != null) index.isEmpty else wakeups.size == 0
    val wakeupsChanged =
      if (index != null) index.changed || stored.forall(_.index == null) else wakeups.changed
    val channelBytes = watermarks.map { cw =>
      stored.flatMap(_.channels) match {
        case Some(bytes) if !cw.isChanged => bytes // a row's call: only a summary moves them
        case _ =>
          val bytes = new java.io.ByteArrayOutputStream()
          val out = new java.io.DataOutputStream(bytes)
          cw.write(out)
          out.flush()
          bytes.toByteArray
      }
    }
    if (liveKeys == 0 && wanted == Long.MinValue && noWakeups && channelBytes.isEmpty) {
      if (stored.isDefined) host.remove(GroupRecordKey)
    } else if (
      stored.isEmpty || wakeupsChanged || wanted != current || liveKeys != stored.get.liveKeys ||
      bucketCount != stored.get.buckets || !sameBytes(stored.flatMap(_.channels), channelBytes)
    ) {
      val bytes = GroupRecord.write(
        spec.keyGroups,
        wanted,
        liveKeys,
        wakeups,
        channelBytes,
        policy.processingTimers,
        bucketCount,
        index
      )
      host.put(GroupRecordKey, bytes)
      kept = KeptRecord(bytes, settled(wanted, channelBytes, bucketCount), watermarks.orNull)
    } else
      kept = KeptRecord(
        storedBytes,
        settled(current, channelBytes, bucketCount),
        watermarks.orNull
      )
  }

  /** The record as just written, over this call's table, or null when the table says it is
    * better read afresh ([[WakeupTable.settle]]).
    */
  private def settled(
      timer: Long,
      channelBytes: Option[Array[Byte]],
      bucketCount: Int
  ): GroupRecord.Stored =
    if (index == null && !wakeups.settle()) null
    else {
      if (index != null) index.settle()
      new GroupRecord.Stored(
        spec.keyGroups,
        timer,
        liveKeys,
        wakeups,
        channelBytes,
        policy.processingTimers,
        bucketCount,
        index
      )
    }

  private def sameBytes(a: Option[Array[Byte]], b: Option[Array[Byte]]): Boolean = (a, b) match {
    case (Some(x), Some(y)) => java.util.Arrays.equals(x, y)
    case (None, None) => true
    case _ => false
  }
}

object KeyGroupLoop {

  /** A group record's bytes and what they read as: the record (null: to be read again) and the
    * channel watermarks (null without).
    */
  private final case class KeptRecord(
      bytes: Array[Byte],
      record: GroupRecord.Stored,
      channels: ChannelWatermarks
  )

  /** The watermarks of one call: what a key's rows meet, and what follows them. */
  private final case class Clocks(now: Long, before: Long, after: Long)

  /** Where the group's record lives: no key's bytes are empty (a key row has at least one
    * field, so its `UnsafeRow` at least a null bitmap and a word).
    */
  val GroupRecordKey: Array[Byte] = Array.emptyByteArray

  /** Where a group of a chained pipeline keeps the watermark of its last call (one byte: no
    * key's bytes are that short either).
    */
  val PreviousWatermarkKey: Array[Byte] = Array[Byte](0)
}
