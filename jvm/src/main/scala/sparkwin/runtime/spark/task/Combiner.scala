package sparkwin.runtime.spark.task

import sparkwin.plan._

import java.io.{DataInputStream, DataOutputStream}

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.types._

import sparkwin.runtime.BadRecords
import sparkwin.core.agg.Accumulator
import sparkwin.operator.{OperatorSpec, Selection}
import sparkwin.core.agg.PackedAggregates
import sparkwin.core.Record
import sparkwin.operator.store.{ByteSink, ByteSource, Bytes, ValueCodec}
import sparkwin.core.window.{AlignedWindows, WindowAssigner, WindowGrid}

/** Map-side pre-aggregation, the counterpart of Spark's partial aggregation, for pipelines
  * where single elements are never seen ([[OperatorSpec.combinable]]).
  *
  * Within a partition, rows fold into one partial per (key, set of windows): every element of
  * a group has the same windows, so the operator treats the group as one. Rows without a
  * timestamp pass through unchanged, to reach the error output.
  *
  * The per-row work is one hash lookup on the key's own value and a walk of the key's window
  * sets, newest first, that stops at the row's own or an older one (in mostly-ordered time,
  * the first): no tuple keys, no window objects, no per-row boxing of the grouping id.
  * Grouping cost what it saved before it was written this way.
  */
object Combiner {
  val Ts = "__sw_ts"
  val Count = "__sw_count"
  val Accumulators = "__sw_accumulators"
  val Raw = "__sw_raw"
  val Millis = "__sw_millis"

  /** The partial rows: the key's grouping fields (windowAll's stand-in), then the group. */
  def partialSchema(plan: Plan): StructType =
    StructType(
      plan.keys.fields ++ Seq(
        StructField(Ts, LongType),
        StructField(Count, LongType, nullable = false),
        StructField(Accumulators, BinaryType),
        StructField(Raw, plan.inputSchema)
      )
    )

  /** An element's set of windows as two numbers: elements with the same (last start, count)
    * have the same windows ([[WindowGrid]]). Only aligned event-time assigners are combinable.
    */
  private def gridOf(assigner: WindowAssigner): WindowGrid =
    AlignedWindows
      .grid(assigner)
      .getOrElse(throw new IllegalArgumentException(s"not a combinable assigner: $assigner"))

  /** Several key columns' values as one hash key. */
  private final class MultiKey(val values: Array[AnyRef]) {
    private var hash = 0
    def fill(row: Row, columns: Array[Int]): MultiKey = {
      var i = 0
      while (i < columns.length) { values(i) = row.get(columns(i)).asInstanceOf[AnyRef]; i += 1 }
      hash = java.util.Arrays.hashCode(values)
      this
    }
    def copy(): MultiKey = { val c = new MultiKey(values.clone()); c.hash = hash; c }
    override def hashCode: Int = hash
    override def equals(other: Any): Boolean = other match {
      case m: MultiKey => java.util.Arrays.equals(values, m.values)
      case _ => false
    }
  }

  /** One (key, window set) group. A key's groups form a chain ordered newest window set first
    * (by last window start, then window count, both descending). Its elements fold into `slots`
    * when the aggregates pack into longs, else into `accumulators` (see [[PartialCodec]]).
    */
  private final class Group(
      val key: Seq[Any],
      val ts: Long,
      val lastStart: Long,
      val windows: Int,
      val accumulators: Array[Accumulator],
      val slots: Array[Long],
      var next: Group
  ) {
    var count = 0L

    /** Whether this group's window set sorts before (is newer than) `(last, windowCount)`. */
    def newerThan(last: Long, windowCount: Int): Boolean =
      lastStart > last || (lastStart == last && windows > windowCount)
  }

  /** The row being folded, as an engine record: one view for all rows, since groups keep
    * values, never records.
    */
  private final class RowView extends Record {
    var row: Row = _
    def length: Int = row.length
    def get(i: Int): AnyRef = row.get(i).asInstanceOf[AnyRef]
    override def isNullAt(i: Int): Boolean = row.isNullAt(i)
    override def stored(i: Int): Any = Rows.engineValue(row.get(i))
    override def unheld: sparkwin.core.UnheldValue = Rows.unheld(row)
  }

  /** One partition's rows (read by `SessionForms.reader`) as partial rows, grouped by key
    * (`plan.keys`) and window set, in order of first appearance. Each row's values are first put
    * in the session's forms ([[SessionForms]]): the keys and aggregates see what they would see
    * element by element, and a row with a value that has none passes through as it came.
    * With `millisColumn` (see `SparkRuntime.combinerColumns`), rows carry their event time in
    * epoch milliseconds after the input columns, null where the timestamp column must be read.
    * With `channels` (the channel id's column, the key group labels), rows carry their channel's
    * id after that: a row without one passes through whole (the error output), the others are
    * summed up per channel, every output row gets the two columns of [[ChannelSummaries]], and
    * the partition's summary rows follow.
    */
  def combine(
      plan: Plan,
      rows: Iterator[Row],
      millisColumn: Int = -1,
      channels: Option[(Int, Array[Int])] = None
  ): Iterator[Row] = {
    val channelAt = channels.fold(-1)(_._1)
    val tap = new ChannelSummaries.Tap
    val extra = if (channels.isDefined) 2 else 0
    val sets = gridOf(plan.spec.assigner)
    val ts = plan.timestampColumn
    val keys = plan.keys.columns.toArray
    val single = keys.length == 1
    val constant = Keys.All.toSeq
    // Hash lookups go by the key column's own value when there is one column, and by a probe
    // refilled per row when there are several (copied only for a new key).
    val probe = if (keys.length > 1) new MultiKey(new Array[AnyRef](keys.length)) else null
    val codec = new PartialCodec(plan.spec)
    val view = new RowView
    val chains = new java.util.HashMap[Any, Group]()
    val order = new java.util.ArrayList[Group]()
    val passThrough = new java.util.ArrayList[Row]()
    val forms = new SessionForms(plan.inputSchema)
    def keyValues(row: Row): Seq[Any] =
      if (keys.isEmpty) constant else if (single) row.get(keys(0)) :: Nil else keys.toSeq.map(row.get)
    while (rows.hasNext) {
      val row = forms(rows.next())
      val hasMillis = millisColumn >= 0 && !row.isNullAt(millisColumn)
      view.row = row
      // A row the engine cannot take ([[BadRecords]]) travels whole to the stateful side, whose
      // driver sends it to the error output with the reason.
      val channelMissing = channelAt >= 0 && row.isNullAt(channelAt)
      if (BadRecords.reason(view, if (hasMillis) millisColumn else ts, false, channelMissing) != null) {
        val inputWidth =
          if (millisColumn >= 0) millisColumn else if (channelAt >= 0) channelAt else row.length
        val raw = if (inputWidth < row.length) Row.fromSeq(row.toSeq.take(inputWidth)) else row
        passThrough.add(Row.fromSeq(keyValues(row) ++ Seq(null, 0L, null, raw) ++ Seq.fill(extra)(null)))
      } else {
        val t = if (hasMillis) row.getLong(millisColumn) else Rows.millis(row.get(ts))
        if (channelAt >= 0) tap.see(row.getString(channelAt), t)
        val windows = sets.windowsHolding(t)
        // Elements in no window (the gaps of windows sliding further than their size) are one group.
        val last = if (windows == 0) Long.MinValue else sets.lastStart(t)
        val lookup: Any = if (keys.isEmpty) 0 else if (single) row.get(keys(0)) else probe.fill(row, keys)
        val head = chains.get(lookup)
        // Mostly-ordered time makes a row's group, or the place of a new one, the head: the
        // walk stops at the first older set, where an unordered chain walked every set the
        // key had in the partition before each new window (3.4 steps a row at 500k rows).
        var before: Group = null
        var g = head
        while (g != null && g.newerThan(last, windows)) { before = g; g = g.next }
        if (g == null || g.lastStart != last || g.windows != windows) {
          val key = if (head != null) head.key else keyValues(row)
          g = new Group(key, t, last, windows, codec.newAccumulators(), codec.newSlots(), g)
          if (before != null) before.next = g
          // A known key keeps its own hash key (put replaces only the value): the probe is reused.
          else chains.put(if (probe != null && head == null) probe.copy() else lookup, g)
          order.add(g)
        }
        view.row = row
        codec.add(g.accumulators, g.slots, view, t)
        g.count += 1
      }
    }
    val out = new java.util.ArrayList[Row](passThrough.size + order.size)
    out.addAll(passThrough)
    val width = plan.keys.fields.length
    order.forEach { g =>
      val values = new Array[Any](width + 4 + extra)
      g.key.copyToArray(values)
      values(width) = g.ts
      values(width + 1) = g.count
      values(width + 2) = codec.encode(g.accumulators, g.slots)
      out.add(new GenericRow(values))
    }
    import scala.jdk.CollectionConverters._
    channels match {
      case Some((_, labels)) => out.iterator.asScala ++ tap.summaryRows(labels, width + 4)
      case None => out.iterator.asScala
    }
  }

  /** A group's aggregates in a partial row, and how its elements fold into them. The binary
    * form lives only between the combiner and the operator (never in a checkpoint). Count, sum
    * and avg fold into long slots and travel as those longs; other aggregates fold into their
    * accumulators and travel as their saved fields. One codec per task reuses its buffers, and
    * `decode` returns the same accumulators for packed aggregates each time: an operator reads
    * a partial only while it processes it.
    */
  final class PartialCodec(spec: OperatorSpec) {
    private val aggs = spec.aggregates.toArray
    private val packed = if (Selection.packs(spec)) new PackedAggregates(aggs) else null
    private val written = new ByteSink(64)
    private val out = new DataOutputStream(written)
    private val source = new ByteSource
    private val in = new DataInputStream(source)
    private val slots = if (packed != null) new Array[Long](packed.slots) else null
    private val decoded = if (packed != null) Accumulator.fresh(aggs) else null

    /** A new group's long slots, or null when the aggregates do not pack. */
    def newSlots(): Array[Long] = if (packed != null) new Array[Long](packed.slots) else null

    /** A new group's accumulators, or null when the aggregates pack. */
    def newAccumulators(): Array[Accumulator] = if (packed == null) Accumulator.fresh(aggs) else null

    /** Folds one element into a group's slots or accumulators. */
    def add(accumulators: Array[Accumulator], slots: Array[Long], record: Record, ts: Long): Unit =
      if (slots != null) packed.add(slots, 0, record)
      else {
        var i = 0
        while (i < accumulators.length) { accumulators(i).add(record, ts); i += 1 }
      }

    def encode(accumulators: Array[Accumulator], slots: Array[Long]): Array[Byte] =
      if (slots != null) {
        val bytes = new Array[Byte](slots.length * 8)
        var i = 0
        while (i < slots.length) { Bytes.putLong(bytes, i * 8, slots(i)); i += 1 }
        bytes
      } else {
        written.reset()
        ValueCodec.writeAccumulators(out, accumulators)
        out.flush()
        written.toByteArray
      }

    def decode(bytes: Array[Byte]): Array[Accumulator] =
      if (packed != null) {
        if (bytes.length != slots.length * 8)
          throw new IllegalStateException(
            s"a packed partial of ${bytes.length} bytes, not ${slots.length} longs"
          )
        var i = 0
        while (i < slots.length) { slots(i) = Bytes.getLong(bytes, i * 8); i += 1 }
        packed.load(decoded, slots, 0)
        decoded
      } else {
        source.point(bytes)
        ValueCodec.readAccumulators(in, aggs)
      }
  }
}
