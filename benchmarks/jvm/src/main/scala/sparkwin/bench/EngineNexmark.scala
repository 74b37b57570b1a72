package sparkwin.bench

import sparkwin.core.agg.Aggregate
import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.algorithms.Algorithms
import sparkwin.runtime.local.LocalBackend
import sparkwin.core.trigger.DefaultTrigger
import sparkwin.core.window._

/** Nexmark's windowed queries on the engine alone, in one thread (benchmarks/nexmark.py's
  * `engine` system): the windowing sparkwin's pipelines run on Spark, without Spark.
  *
  *   EngineBench nexmark <dir> <boundMs> q5|q7|q8|q11 ...
  *
  * Reads `<dir>/<query>.bin`, the files the Flink job reads (run.py's layout: int32 key, int64
  * ts, int64 amount; the last 8 records flush every window on a key of their own):
  *   - q5: bids per auction in sliding 10 s windows every 2 s, then per window the auctions
  *     with the most bids (ties kept), in plain Scala (the pipeline's second, `windowAll` stage).
  *   - q7: the bids at the highest price of each 10 s tumbling window over all bids (amount
  *     `price << 22 | auction`), ties kept: `maxByAll` of the auction by the price, as the
  *     pipeline does it.
  *   - q8: persons (amount 1 << 32) and auctions (amount 1) keyed by the person in 10 s tumbling
  *     windows, counting each kind; windows with both.
  *   - q11: bids per bidder session, 10 s gap.
  * Each query's results are folded into the fingerprint every system gives (rows, sum of values,
  * sum of window start in seconds times value, sum of keys). The watermark trails the largest
  * time by the bound, advanced every 1000 events; prints one JSON line per query, the best of
  * three runs after a warm-up on the first 500k events.
  */
object EngineNexmark {
  val AuctionBits = 22

  /** A query's events: key id, time and the query's amount, in arrival order. */
  final class Events(val keyOf: Array[Int], val ts: Array[Long], val amount: Array[Long]) {
    def size: Int = ts.length
  }

  def read(path: String): Events = {
    val bytes = java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(path))
    val buf = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val n = bytes.length / 20
    val e = new Events(new Array[Int](n), new Array[Long](n), new Array[Long](n))
    for (i <- 0 until n) { e.keyOf(i) = buf.getInt(); e.ts(i) = buf.getLong(); e.amount(i) = buf.getLong() }
    e
  }

  /** (rows, sum, weighted, keys), as FlinkNexmarkBench and nexmark.py fold them. */
  final class Fingerprint {
    val totals = new Array[Long](4)
    def add(value: Long, rows: Long, keys: Long, startMs: Long): Unit =
      if (rows > 0) {
        totals(0) += rows; totals(1) += value * rows
        totals(2) += Math.floorDiv(startMs, 1000L) * value * rows; totals(3) += keys
      }
  }

  /** Hands each result that is not the flush key's to `f(key id, window start, values)`. */
  final class Results(flush: Long)(f: (Long, Long, Array[Any]) => Unit) extends Emitter {
    def emitResult(key: Any, window: Window, pane: PaneInfo, values: Array[Any]): Unit = {
      val k = key.asInstanceOf[java.lang.Long].longValue
      if (k != flush) f(k, window.asInstanceOf[TimeWindow].start, values)
    }
    def emitElements(key: Any, window: Window, pane: PaneInfo, elements: java.util.List[Element]): Unit = ()
    def emitLate(key: Any, record: Record, timestamp: Long): Unit =
      throw new IllegalStateException(s"late event at $timestamp: the results would differ")
    def emitError(record: Record, message: String): Unit = throw new IllegalStateException(message)
    def emitWindowError(key: Any, window: Window, message: String): Unit =
      throw new IllegalStateException(message)
  }

  private def spec(assigner: WindowAssigner, aggs: Aggregate*): OperatorSpec =
    OperatorSpec(
      assigner,
      DefaultTrigger.forAssigner(assigner),
      None,
      0,
      lateOutput = false,
      WindowFunction.Aggregates(aggs.toIndexedSeq),
      AccumulationMode.Accumulating
    )

  /** Runs the query on the first `n` events; its fingerprint. */
  def run(query: String, e: Events, n: Int, bound: Long): Seq[Long] = {
    val fp = new Fingerprint
    val flush = e.keyOf.max.toLong
    val keys = Array.tabulate(flush.toInt + 1)(i => java.lang.Long.valueOf(i.toLong))
    // Per window start: (largest value, how many keys have it, the sum of their ids).
    val ties = new java.util.TreeMap[java.lang.Long, Array[Long]]()
    def offer(start: Long, value: Long, key: Long): Unit = {
      val t = ties.computeIfAbsent(start, _ => Array(-1L, 0L, 0L))
      if (value > t(0)) { t(0) = value; t(1) = 1; t(2) = key }
      else if (value == t(0)) { t(1) += 1; t(2) += key }
    }
    val (opSpec, record, emitter): (OperatorSpec, Int => Array[Any], Emitter) = query match {
      case "q5" =>
        (
          spec(SlidingWindows(10000, 2000, 0, isEventTime = true), Aggregate.Count("num", -1)),
          i => Array[Any](keys(e.keyOf(i))),
          new Results(flush)((k, start, v) => offer(start, v(0).asInstanceOf[Long], k))
        )
      case "q7" =>
        (
          spec(
            TumblingWindows(10000, 0, isEventTime = true),
            Aggregate.ExtremeByAll("bids", 2, 1, wantMax = true, tieByValue = true),
            Aggregate.Max("price", 1)
          ),
          i =>
            Array[Any](
              keys(e.keyOf(i)),
              java.lang.Long.valueOf(e.amount(i) >>> AuctionBits),
              java.lang.Long.valueOf(e.amount(i) & ((1L << AuctionBits) - 1))
            ),
          new Results(flush)((_, start, v) => {
            val price = v(1).asInstanceOf[Long]
            v(0).asInstanceOf[Seq[Any]].foreach(a => fp.add(price, 1, a.asInstanceOf[Long], start))
          })
        )
      case "q8" =>
        (
          spec(
            TumblingWindows(10000, 0, isEventTime = true),
            Aggregate.Count("joined", 1),
            Aggregate.Count("auctions", 2)
          ),
          i => {
            val person = e.amount(i) >= (1L << 32)
            Array[Any](keys(e.keyOf(i)), if (person) "" else null, if (person) null else "")
          },
          new Results(flush)((k, start, v) => {
            val auctions = v(1).asInstanceOf[Long]
            if (v(0).asInstanceOf[Long] > 0 && auctions > 0) fp.add(auctions, 1, k, start)
          })
        )
      case "q11" =>
        (
          spec(SessionWindows(10000, -1, isEventTime = true), Aggregate.Count("bid_count", -1)),
          i => Array[Any](keys(e.keyOf(i))),
          new Results(flush)((k, start, v) => fp.add(v(0).asInstanceOf[Long], 1, k, start))
        )
    }
    val backend = new LocalBackend(true)
    val op = Algorithms.operator(opSpec, backend, emitter)
    var max = Long.MinValue
    var i = 0
    while (i < n) {
      val values = record(i)
      backend.setCurrentKey(values(0))
      op.processElement(new ArrayRecord(values), e.ts(i))
      if (e.ts(i) > max) max = e.ts(i)
      if (i % 1000 == 999) op.moveClocks(max - bound - 1, ClockMove.Keep, ClockMove.Advance)
      i += 1
    }
    op.moveClocks(Long.MaxValue, ClockMove.Keep, ClockMove.Advance)
    query match {
      case "q5" => ties.forEach((start, t) => fp.add(t(0), t(1), t(2), start))
      case _ =>
    }
    fp.totals.toSeq
  }

  def main(dir: String, bound: Long, queries: Seq[String]): Unit =
    for (query <- queries) {
      val e = read(s"$dir/$query.bin")
      val threads = java.lang.management.ManagementFactory.getThreadMXBean
      run(query, e, math.min(e.size, 500000), bound) // warm-up on a prefix
      val runs = (1 to 3).map { _ =>
        val cpu = threads.getCurrentThreadCpuTime
        val started = System.nanoTime()
        val fp = run(query, e, e.size, bound)
        ((System.nanoTime() - started) / 1e9, (threads.getCurrentThreadCpuTime - cpu) / 1e9, fp)
      }
      val (seconds, _, fp) = runs.minBy(_._1)
      val events = e.size - 8 // the flush records are not events
      println(
        s"""{"query":"$query","system":"engine","events":$events,"seconds":$seconds,""" +
          s""""cpu_seconds":${runs.map(_._2).min},"fingerprint":[${fp.mkString(",")}]}"""
      )
    }
}
