package sparkwin.runtime.spark.task

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import org.apache.spark.sql.Row

import sparkwin.core.CorruptStateException
import sparkwin.operator.ClockMove
import sparkwin.plan._
import sparkwin.runtime.{Driver, TimeMove}

/** The engine inside Spark's stateful operator, one call per key group, whatever the operator.
  *
  * Spark's grouping key is a key group (a hash of the pipeline's key, as Flink's key groups),
  * not the key itself: Spark's timers cost several state-store operations each, and one timer
  * per key group instead of one per key is what makes the runtime keep up with Spark's own
  * windows (DESIGN.md, "Streaming: `transformWithState` over key groups"). A group's entries
  * ([[GroupHost]]) are
  *   - its keys (as [[KeyBytes]]) with their engine state, a bucket of them an entry
  *     ([[KeyBuckets]]) where the host packs keys and the group's record says so (a group
  *     written before, or on Spark 3.5, has an entry a key): one read and at most one write per
  *     bucket (or key) the call touches;
  *   - the empty key with the group's [[GroupRecord]]: the number of key groups the checkpoint
  *     was written with, the group's one Spark timer (at the earliest wake-up), how many of
  *     its keys hold state, the wake-up table (each key with pending engine timers and when it
  *     must wake) and, with channels, the group's copy of the channel watermarks.
  * A call sorts its rows ([[CallRows]]), reads the group (its record, [[GroupSync]], its keys'
  * [[KeyStore]] and its [[Wakeups]]), sets the group's clocks ([[GroupClocks]]: Spark's
  * watermark, or the group's own channel watermarks moved by the batch's summaries), then per key
  * with rows, and per key whose wake-up is due, loads, runs ([[CallInput]]) and saves it, and
  * syncs the group ([[GroupSync]]): its Spark timer and its next processing-time wake-up (both as
  * the plan's [[TimePolicy]] says, the latter reported to the driver's clock source,
  * [[WakeReports]]) and its record. It puts out its rows with a metrics row ([[CallOutput]]); its
  * writes go through or are held behind ([[GroupWrites]]).
  *
  * One loop per task: it reuses its engine objects from one call to the next. `operator` is the
  * Spark operator that hosts it, as errors name it (the Spark shim's).
  */
final class KeyGroupLoop(spec: LoopSpec, operator: String = "stateful") {
  private val plan: Plan = PlanDecoder.cached(spec.planJson)

  /** How this plan's time runs (the hosts ask it which clock Spark's timers are on). */
  val policy: TimePolicy = TimePolicy.of(plan, spec.mode)
  private val keyBytes = new KeyBytes(plan.keys.schema)
  private val backend = new SparkKeyBackend(plan.spec.aggregates, keepDecoded = policy.realTime)
  private val layout = new OutputLayout(plan, spec.java8Time)
  private val collector = new RowCollector(layout)
  private val driver =
    new Driver(plan.spec, plan.keys.of, plan.timestampColumn, backend, collector, policy = policy)
  private val input = new CallInput(plan, policy, spec.combined, driver)
  private val clocks = new GroupClocks(plan, policy)
  private val record = new GroupSync(spec, policy)
  private val output = new CallOutput(collector, policy.realTime, OutputLayout.metricValues(driver.metrics))
  // This call's: the host, its group's keys with state, where they keep it, and its wake-ups.
  private var host: GroupHost = _
  private var liveKeys: Long = _
  private var store: KeyStore = _
  private var wakeups: Wakeups = _
  // Real-time mode with summaries: a call leaves its writes unwritten until the map partition's
  // last summary, a timer's call or a summary once they are old ([[WriteBehind]]); elsewhere
  // every call writes.
  private val writes: GroupWrites =
    if (policy.realTime && policy.ownWatermark) new WriteBehind(spec.holdMs) else GroupWrites.Through
  // Where writes are held, each group's buckets stay decoded from call to call ([[KeptBuckets]]).
  private val keptBuckets = if (writes.keepsObjects) new KeptBuckets else null

  /** The task's unwritten changes (null: every call writes them; for tests). */
  def deferred: WriteBehind = writes match {
    case w: WriteBehind => w
    case _ => null
  }

  /** One call for a group: its rows of this micro-batch (none when its timer fires), and whether
    * the call is its timer's. Returns the output rows; the host has every change when it ends,
    * except in real-time mode, where they wait for a partition's last summary, a timer's call, or
    * a summary once they are [[LoopSpec.holdMs]] old ([[WriteBehind]]).
    */
  def call(group: GroupHost, rows: Iterator[Row], firing: Boolean): Iterator[Row] = {
    host = writes.over(group)
    val summaryAt = if (policy.ownWatermark) input.payloadWidth + 1 else -1
    val sorted = new CallRows(rows, input.keyOf, spec.tickColumn, summaryAt)
    if (PaneTrace.on && !sorted.delivered.isEmpty)
      PaneTrace.mark(
        "call",
        s"${group.keyGroup} " + sorted.delivered.asScala.map { case (c, t) => s"$c=$t" }.mkString(" ")
      )
    val startedAt = if (PaneTrace.on) System.nanoTime() else 0L
    try {
      val out = run(sorted, firing, writes.holds(sorted.summarised, firing))
      writes.ended(group, sorted.summarised, firing, sorted.ending, output.putOut)
      // Only calls that can close windows: a line per data row's call would slow what it traces.
      if (PaneTrace.on && (sorted.summarised || firing) && out.nonEmpty)
        traceDone(group.keyGroup, out, startedAt)
      else out
    } catch { case e: CorruptStateException => throw e.in(describeGroup(group.keyGroup)) }
    finally { host = null; store = null; wakeups = null }
  }

  /** With `--trace-panes`: when a summary's or timer's call that put out rows ended, how many
    * rows and how long it took (microseconds), so a trace tells a call's own work from the sink's.
    */
  private def traceDone(keyGroup: Int, out: Iterator[Row], startedAt: Long): Iterator[Row] = {
    val rows = out.toList
    PaneTrace.mark("done", s"$keyGroup ${rows.size} ${(System.nanoTime() - startedAt) / 1000}")
    rows.iterator
  }

  /** A key group as errors name it: its label (Spark's grouping key, `KeyGroupLabels`), of how
    * many groups, and the operator.
    */
  def describeGroup(keyGroup: Int): String = {
    val label = if (keyGroup >= 0) s"the key group labelled $keyGroup" else "a key group"
    s"$label (one of ${spec.keyGroups}, sparkwin's $operator operator)"
  }

  /** A call's work: load the group, run each key (those with rows, then those due), sync the
    * group, and put out its rows ([[CallOutput]]).
    */
  private def run(rows: CallRows, firing: Boolean, holds: Boolean): Iterator[Row] = {
    val stored = record.open(host)
    liveKeys = stored.map(_.liveKeys).getOrElse(0L)
    store = KeyStore.of(host, stored.fold(1)(_.buckets), liveKeys, keptBuckets)
    wakeups = stored.fold[Wakeups](WakeupTable.empty(policy.processingTimers))(_.wakeups)
    wakeups.open()
    clocks.open(host, stored, record.reusedChannels, rows.delivered, rows.partitions, rows.tick)
    // Keys to wake: those with rows, then those whose wake-up is due.
    val withRows = new ArrayBuffer[(Row, Array[Byte], ArrayBuffer[Row])](rows.byKey.size)
    rows.byKey.forEach((k, rs) => withRows += ((k, keyBytes.encode(k), rs)))
    withRows.foreach { case (k, id, rs) => processKey(k, id, rs, null) }
    due(withRows).foreach(w => processKey(keyBytes.decode(w.key), w.key, ArrayBuffer.empty, w))
    val empty = record.close(host, wakeups, store, liveKeys, clocks, firing, rows.tick)
    clocks.close(host, empty)
    val valve = if (layout.showsValve) clocks.valve else None
    output.drain(OutputLayout.metricValues(driver.metrics), valve, holds)
  }

  /** The wake-ups due at this call's clocks, but for keys with rows (they wake with them). Most
    * calls of a group with many keys wake none: the wake-ups are looked through only when their
    * earliest is due.
    */
  private def due(withRows: ArrayBuffer[(Row, Array[Byte], ArrayBuffer[Row])]): ArrayBuffer[Wakeup] = {
    val (earliestAt, earliestProcessingAt) = wakeups.earliest()
    if (!policy.isDue(earliestAt, earliestProcessingAt, clocks.after, clocks.now)) ArrayBuffer.empty
    else {
      val ids = new java.util.HashSet[KeyId](withRows.size * 2)
      withRows.foreach(w => ids.add(new KeyId(w._2)))
      val found =
        wakeups.due(host, (at, processingAt) => policy.isDue(at, processingAt, clocks.after, clocks.now))
      found.filterNot(w => ids.contains(new KeyId(w.key)))
    }
  }

  /** One key (`due`: its wake-up when the call woke it, else null): load, set its clocks, its
    * rows, save, and note its next wake-up.
    */
  private def processKey(key: Row, id: Array[Byte], rows: ArrayBuffer[Row], due: Wakeup): Unit = {
    wakeups.enter(id, due)
    val loaded: AnyRef = if (wakeups.holdsNoState(liveKeys)) null else store.load(id)
    backend.loadState(key, loaded, new KeyId(id))
    wakeups.loaded(driver.operator)
    driver.moveClocks(TimeMove.EnterKey(clocks.now, clocks.before, clocks.settled))
    input.feed(key, rows)
    if (policy.splitsBatch)
      driver.moveClocks(TimeMove.Clocks(clocks.after, ClockMove.Keep, ClockMove.Advance))
    store.save(id, backend)
    if (loaded == null && !backend.isEmpty) liveKeys += 1
    else if (loaded != null && backend.isEmpty) liveKeys -= 1
    wakeups.left(host, id, driver.operator)
  }
}
