package sparkwin.runtime.spark.task

import org.apache.spark.sql.Row

/** The map side's summaries in real-time mode: sent right after the row that moved a channel's
  * largest time (at most every interval), and once more at the partition's end: what moved, or
  * a marker naming no channel (every group's flush point, [[WriteBehind]]).
  */
class ChannelSummariesSuite extends munit.FunSuite {
  private val labels = Array(7, 9)

  /** The tapped stream as "r<ts>" for data rows, "s<group>:<max>" for summaries and "m<group>"
    * for a summary naming no channel, with "!" when the summary is the partition's last.
    */
  private def run(times: Seq[Long], everyMs: Long, closings: Closings = null): List[String] = {
    val tap = new ChannelSummaries.Tap(closings)
    val rows = times.iterator.map { t => tap.see("0", t); Row(t) }
    tap.interleaved(rows, labels, width = 1, everyMs).toList.map { row =>
      if (!row.isNullAt(0)) s"r${row.getLong(0)}"
      else {
        val s = row.getStruct(2)
        val last = if (ChannelSummaries.isLast(s)) "!" else ""
        if (s.getSeq[Long](2).isEmpty) s"m${s.getInt(0)}$last"
        else s"s${s.getInt(0)}:${s.getSeq[Long](2).head}$last"
      }
    }
  }

  test("every row that moves the largest time is followed by a summary for every key group") {
    assertEquals(
      run(Seq(5L, 3L, 8L), everyMs = 0),
      List("r5", "s7:5", "s9:5", "r3", "r8", "s7:8", "s9:8", "m7!", "m9!")
    )
  }

  test("with an interval, what moved in between is sent at the partition's end") {
    // The first move is sent at once; the next ones fall within the hour and wait for the end.
    assertEquals(
      run(Seq(5L, 8L, 9L), everyMs = 3600000),
      List("r5", "s7:5", "s9:5", "r8", "r9", "s7:9!", "s9:9!")
    )
  }

  test("a partition's end reaches every group even when nothing moved, or with no row at all") {
    // Without it, a group's deferred writes would have no call left to flush them in before
    // Spark commits the store.
    assertEquals(run(Seq.empty, everyMs = 0), List("m7!", "m9!"))
    assertEquals(run(Seq(5L, 5L), everyMs = 0), List("r5", "s7:5", "s9:5", "r5", "m7!", "m9!"))
  }

  test("a move that closes a window is summarised at once, whatever the interval") {
    // Tumbling 10 ms, delay 1: 11 closes [0, 10), 21 closes [10, 20); 15 closes nothing new.
    val closings = new Closings(sparkwin.core.window.WindowGrid(10, 10, 0), 1)
    assertEquals(
      run(Seq(5L, 11L, 15L, 21L), everyMs = 3600000, closings),
      List("r5", "s7:5", "s9:5", "r11", "s7:11", "s9:11", "r15", "r21", "s7:21", "s9:21", "m7!", "m9!")
    )
  }

  test("every summary, the last marker too, says how many source partitions the batch reads") {
    val tap = new ChannelSummaries.Tap(partitions = 4)
    val rows = Iterator(5L, 8L).map { t => tap.see("2", t); Row(t) }
    val summaries = tap.interleaved(rows, labels, width = 1, everyMs = 0).toList.filter(_.isNullAt(0))
    assertEquals(summaries.map(r => ChannelSummaries.partitions(r.getStruct(2))).distinct, List(4))
    assertEquals(ChannelSummaries.partitionChannels(4), Seq("0", "1", "2", "3"))
    val empty = new ChannelSummaries.Tap(partitions = 4).interleaved(Iterator.empty, labels, 1, 0).toList
    assertEquals(empty.map(r => ChannelSummaries.partitions(r.getStruct(2))), List(4, 4))
  }
}
