package sparkwin.runtime.spark.task

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.types._

/** What a micro-batch tells every key group about the input channels (pipelines with
  * `channel=` on a live stream): each partition sums up, per channel, the largest event time it
  * saw, and sends that summary to every key group, so each group moves its own copy of the
  * channel watermarks (`core.time.ChannelWatermarks`) exactly as every other group does.
  *
  * Rows after the map side carry two columns of their own after the payload: the channel's id
  * (its value as a string; null on summary rows) and the summary (null on data rows).
  */
object ChannelSummaries {
  val ChannelColumn = "__sw_channel"
  val SummaryColumn = "__sw_channels"

  /** A summary for one key group (`group`, its label): channel ids and their largest times,
    * whether it is the map partition's last row to the group (`last`: a real-time group writes
    * what it holds there, [[WriteBehind]]), and how many source partitions the batch reads
    * (`partitions`: a real-time pipeline's channels are its source partitions, `0` to `n - 1`,
    * each known to hold the watermark back before it delivers; 0 where channels are the user's).
    */
  val SummarySchema: StructType = StructType(
    Seq(
      StructField("group", IntegerType, nullable = false),
      StructField("ids", ArrayType(StringType, containsNull = false), nullable = false),
      StructField("maxTs", ArrayType(LongType, containsNull = false), nullable = false),
      StructField("last", BooleanType, nullable = false),
      StructField("partitions", IntegerType, nullable = false)
    )
  )

  /** Watches a partition's rows go by and remembers each channel's largest event time; with
    * `closings` (real-time mode, [[Closings]]) also whether the last move closed a window.
    * `partitions`: what its summaries say of the batch's source partitions ([[SummarySchema]]).
    */
  final class Tap(closings: Closings = null, partitions: Int = 0) {
    private val max = new java.util.TreeMap[String, java.lang.Long]()
    private var moved = false // since the last summary
    private var urgent = false // a move since the last summary closed a window

    def see(channel: String, ts: Long): Unit = {
      val before = max.get(channel)
      if (before == null || ts > before) {
        max.put(channel, ts)
        moved = true
        if (closings != null && closings.moved(before, ts)) urgent = true
        if (PaneTrace.on && (before == null || ts / 100 > before / 100))
          PaneTrace.mark("tap", s"$channel $ts")
      }
    }

    /** `rows`, each followed by a summary for every key group when it moved a channel's largest
      * time and the last summary is at least `everyMs` old (processing time) or the move closed
      * a window (then at once: the interval bounds how stale a watermark gets, not how long a
      * closed window waits), and a last summary at the end: a real-time batch's partition ends
      * only with the batch, and its groups must learn of the watermark while it runs. A row
      * reaches its group before the summary it caused, as in a micro-batch, where rows meet the
      * watermark the batch before left.
      *
      * The last one goes to every group even when nothing moved (then naming no channel), marked
      * as the last: it is each group's flush point before Spark commits the store
      * ([[WriteBehind]]), so a group's last call of a batch always carries one.
      */
    def interleaved(rows: Iterator[Row], labels: Array[Int], width: Int, everyMs: Long): Iterator[Row] = {
      var last = Long.MinValue
      def due(): Boolean = moved && {
        val now = System.currentTimeMillis()
        val go = urgent || everyMs <= 0 || last == Long.MinValue || now - last >= everyMs
        if (go) last = now
        go
      }
      rows.flatMap { row =>
        if (due()) Iterator.single(row) ++ summaryRows(labels, width, last = false)
        else Iterator.single(row)
      } ++ (if (moved) summaryRows(labels, width) else markerRows(labels, width))
    }

    /** A last summary for every key group naming no channel: it moves no watermark and marks no
      * channel active, and only ends the partition's rows to each group.
      */
    def markerRows(labels: Array[Int], width: Int): Iterator[Row] =
      labels.iterator.map(label => summaryRow(label, width, Seq.empty, Seq.empty, last = true, partitions))

    def isEmpty: Boolean = max.isEmpty

    /** One row per key group label of `width` fields: nulls, then no channel and the summary;
      * `last` unless more rows of the partition follow.
      */
    def summaryRows(labels: Array[Int], width: Int, last: Boolean = true): Iterator[Row] =
      if (max.isEmpty) Iterator.empty
      else {
        moved = false
        urgent = false
        val ids = new Array[Any](max.size)
        val times = new Array[Any](max.size)
        var i = 0
        max.forEach { (id, ts) => ids(i) = id; times(i) = ts.longValue; i += 1 }
        if (PaneTrace.on)
          PaneTrace.mark("summary", ids.indices.map(j => s"${ids(j)}=${times(j)}").mkString(" "))
        labels.iterator.map(label => summaryRow(label, width, ids.toSeq, times.toSeq, last, partitions))
      }
  }

  private def summaryRow(
      label: Int,
      width: Int,
      ids: Seq[Any],
      times: Seq[Any],
      last: Boolean,
      partitions: Int
  ): Row = {
    val values = new Array[Any](width + 2)
    values(width + 1) = new GenericRow(Array[Any](label, ids, times, last, partitions))
    new GenericRow(values)
  }

  /** Whether a summary struct is its map partition's last row to the group. */
  def isLast(summary: Row): Boolean = summary.getBoolean(3)

  /** How many source partitions a summary struct says its batch reads (0: it does not say). */
  def partitions(summary: Row): Int = summary.getInt(4)

  /** The channels of a batch's `n` source partitions: their ids, as `spark_partition_id()` gives
    * them to the rows.
    */
  def partitionChannels(n: Int): Seq[String] = (0 until n).map(_.toString)

  /** The channels' largest times in a summary row's summary struct. */
  def read(summary: Row, into: java.util.TreeMap[String, java.lang.Long]): Unit = {
    val ids = summary.getSeq[String](1)
    val times = summary.getSeq[Long](2)
    var i = 0
    while (i < ids.length) {
      val before = into.get(ids(i))
      if (before == null || times(i) > before) into.put(ids(i), times(i))
      i += 1
    }
  }
}
