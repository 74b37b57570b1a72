package sparkwin.runtime.spark.task

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row

/** One call's rows of a key group, sorted ([[KeyGroupLoop]]): clock ticks (the latest one's time),
  * channel summaries (what they delivered, from how many source partitions, and whether one was
  * its map partition's last) and data rows, by key, keys in the order they first appear and each
  * key's rows in arrival order.
  *
  * @param tickAt where a row carries a tick's time (negative: the pipeline reads no clock)
  * @param summaryAt where a row carries a summary (negative: the group keeps no channels)
  */
final class CallRows(rows: Iterator[Row], keyOf: Row => Row, tickAt: Int, summaryAt: Int) {

  /** Each key's rows. */
  val byKey = new java.util.LinkedHashMap[Row, ArrayBuffer[Row]]()

  /** The channels' watermarks the summaries delivered. */
  val delivered = new java.util.TreeMap[String, java.lang.Long]()

  /** The batch's source partitions, as its summaries say (real-time mode). */
  var partitions = 0

  /** Whether a summary came: its counters go out, and it may write ([[WriteBehind]]). */
  var summarised = false

  /** Whether the map partition's last summary came: held writes go to the store. */
  var ending = false

  /** A clock tick's time, when the call is one (Long.MinValue: none). */
  var tick: Long = Long.MinValue

  rows.foreach { row =>
    if (tickAt >= 0 && !row.isNullAt(tickAt)) tick = math.max(tick, row.getLong(tickAt))
    else if (summaryAt >= 0 && !row.isNullAt(summaryAt)) {
      val summary = row.getStruct(summaryAt)
      ChannelSummaries.read(summary, delivered)
      partitions = math.max(partitions, ChannelSummaries.partitions(summary))
      summarised = true
      ending ||= ChannelSummaries.isLast(summary)
    } else byKey.computeIfAbsent(keyOf(row), _ => new ArrayBuffer[Row]()) += row
  }
}
