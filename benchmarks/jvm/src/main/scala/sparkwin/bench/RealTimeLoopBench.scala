package sparkwin.bench

import org.apache.spark.sql.Row

import sparkwin.runtime.spark.task._

/** The key-group loop alone as Spark's real-time mode calls it: one call per row, a summary to
  * every key group every 100 ms of event time, over a task's state store kept in a map (no
  * RocksDB, no Spark). What `latency.py --systems sparkwin-rt` measures end to end mixes the
  * stateful task's cost per row with Kafka, the map side and the start's backlog; this is that
  * cost alone, single thread, so two builds compare in a few seconds.
  *
  * Usage: RealTimeLoopBench <events> <keys> [groups] [rounds]; events as latency.py's producer
  * makes them at 100k a second (keys in turn, 0-199 ms of disorder), 1 s tumbling windows, count
  * and sum, a 200 ms bound; prints one JSON object per round (the first warms the JIT up).
  */
object RealTimeLoopBench {

  private val Plan =
    """{"planVersion": 1, "inputSchema": {"type": "struct", "fields": [
      |{"name": "user", "type": "string", "nullable": true, "metadata": {}},
      |{"name": "amount", "type": "long", "nullable": true, "metadata": {}},
      |{"name": "ts", "type": "long", "nullable": true, "metadata": {}}]},
      |"timestamp": "ts", "keys": ["user"],
      |"watermark": {"kind": "boundedOutOfOrderness", "boundMs": 200, "idleTimeoutMs": null, "intervalMs": 200},
      |"arrival": null, "channel": null, "channels": null,
      |"assigner": {"kind": "tumbling", "sizeMs": 1000, "offsetMs": 0, "eventTime": true},
      |"trigger": null, "evictor": null, "allowedLatenessMs": 0, "lateOutputTag": null,
      |"accumulationMode": "accumulating", "ansi": true,
      |"function": {"kind": "aggregate", "aggregates": [{"fn": "count", "alias": "n"},
      |{"fn": "sum", "column": "amount", "alias": "sum_amount"}]}}""".stripMargin

  private val RatePerMs = 100
  private val SummaryEveryMs = 100

  /** A task's state store: every group's entries by (label, key bytes). */
  private final class Store {
    val entries = new java.util.HashMap[(Int, KeyId), Array[Byte]]()
    def host(group: Int): GroupHost = new GroupHost {
      override val keyGroup: Int = group
      def get(key: Array[Byte]): Array[Byte] = entries.get((group, new KeyId(key)))
      def put(key: Array[Byte], value: Array[Byte]): Unit = entries.put((group, new KeyId(key)), value)
      def remove(key: Array[Byte]): Unit = entries.remove((group, new KeyId(key)))
      def packsKeys: Boolean = true
      def watermark: Long = Long.MinValue // fixed for a real-time batch; the groups keep their own
      def batchTime: Long = 0L
      def timer(current: Long, wanted: Long, firing: Boolean): Unit = ()
    }
  }

  def main(args: Array[String]): Unit = {
    val events = args(0).toInt
    val keys = args(1).toInt
    val groups = args.lift(2).fold(4)(_.toInt)
    val rounds = args.lift(3).fold(3)(_.toInt)
    val random = new scala.util.Random(42)
    val users = Array.tabulate(keys)(k => s"user-$k")
    val times = Array.tabulate(events)(i => 1000000L + i / RatePerMs - random.nextInt(200))
    (1 to rounds).foreach { round =>
      val (seconds, panes, counted) = once(events, users, times, groups)
      if (counted != events) throw new IllegalStateException(s"panes counted $counted events of $events")
      println(
        s"""{"system": "loop-rt", "round": $round, "events": $events, "keys": $keys, "groups": $groups, """ +
          f""""seconds": $seconds%.3f, "usPerEvent": ${seconds * 1e6 / events}%.3f, "panes": $panes}"""
      )
    }
  }

  /** One run on a new loop and store: (seconds, panes, events the panes counted). */
  private def once(events: Int, users: Array[String], times: Array[Long], groups: Int): (Double, Long, Long) = {
    val spec = LoopSpec(
      Plan,
      java8Time = false,
      combined = false,
      groups,
      None,
      -1,
      mode = sparkwin.plan.RunMode.RealTime
    )
    val loop = new KeyGroupLoop(spec)
    val store = new Store
    val hosts = Array.tabulate(groups)(store.host)
    var panes = 0L
    var counted = 0L
    def call(group: Int, row: Row): Unit =
      loop.call(hosts(group), Iterator(row), firing = false).foreach { out =>
        if (out.getInt(0) == OutputLayout.ResultKind) {
          panes += 1
          counted += out.getStruct(1).getLong(4) // n: after the key and the bounds
        }
      }
    def summaries(max: Long, last: Boolean): Unit =
      (0 until groups).foreach(g => call(g, Row(null, null, null, null, Row(g, Seq("0"), Seq(max), last, 1))))
    val started = System.nanoTime()
    var max = Long.MinValue
    var nextSummary = times(0) + SummaryEveryMs
    var i = 0
    while (i < events) {
      val k = i % users.length
      max = math.max(max, times(i))
      call(k % groups, Row(users(k), 1L, times(i), "0", null))
      if (max >= nextSummary) { summaries(max, last = false); nextSummary = max + SummaryEveryMs }
      i += 1
    }
    summaries(max + 10000L, last = true)
    ((System.nanoTime() - started) / 1e9, panes, counted)
  }
}
