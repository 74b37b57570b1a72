package sparkwin.bench

import java.nio.channels.FileChannel
import java.nio.file.{Paths, StandardOpenOption}
import java.time.Duration

import org.apache.flink.api.common.accumulators.LongCounter
import org.apache.flink.api.common.eventtime.WatermarkStrategy
import org.apache.flink.api.common.functions.{AggregateFunction, OpenContext}
import org.apache.flink.api.common.typeinfo.{TypeInformation, Types}
import org.apache.flink.api.java.functions.KeySelector
import org.apache.flink.api.java.tuple.Tuple3
import org.apache.flink.runtime.minicluster.MiniCluster
import org.apache.flink.streaming.api.datastream.DataStream
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink
import org.apache.flink.streaming.api.functions.windowing.{ProcessAllWindowFunction, ProcessWindowFunction}
import org.apache.flink.streaming.api.windowing.assigners.{
  EventTimeSessionWindows,
  SlidingEventTimeWindows,
  TumblingEventTimeWindows
}
import org.apache.flink.streaming.api.windowing.windows.TimeWindow
import org.apache.flink.configuration.Configuration
import org.apache.flink.util.Collector

/** Nexmark's q5, q7, q8 and q11 as DataStream jobs on a local MiniCluster (benchmarks/nexmark.py's
  * `flink` system), reading each query's bids from a file in benchmarks/run.py's layout
  * (`<dir>/<query>.bin`) through FlinkJobBench's source: 8 channels, a watermark generator per
  * channel.
  *
  *   FlinkNexmarkBench <dir> <boundMs> <parallelism> q5|q7|q8|q11 ...
  *
  * The files' key and amount per query: q5 and q11 the auction or the bidder id and 1; q7 key 0
  * and `price << 22 | auction`; q8 (persons and auctions, not bids) the person's id or the
  * auction's seller and 1 << 32 for a person, 1 for an auction. The flush events (the last 8 records) have the largest key id,
  * which FlinkJobBench's reader names "flush". Prints one JSON line per query: one timed job
  * after an untimed warm-up on the first 500k events, and the fingerprint every system gives
  * (rows, sum of values, sum of window start in seconds times value, sum of keys).
  *
  *   - q5: bids per auction in sliding 10 s windows every 2 s, then per window the auctions
  *     with the most bids (a second window, keyed by the first's end; ties all counted).
  *   - q7: the bids with the highest price in each 10 s tumbling window (`windowAll` and an
  *     incremental arg-max).
  *   - q8: persons who opened an auction in the 10 s tumbling window they joined in: persons
  *     and auctions keyed by the person, summing the packed amounts (a co-group, as the Spark
  *     systems run it); windows with both.
  *   - q11: bids per bidder session, 10 s gap.
  */
object FlinkNexmarkBench {
  import FlinkWorkloads._

  type Counted = Tuple3[String, java.lang.Long, java.lang.Long] // key, count, window end
  val AuctionBits = 22

  def main(args: Array[String]): Unit = {
    val dir = args(0)
    val bound = args(1).toLong
    val parallelism = args(2).toInt
    val cluster = FlinkJobBench.startCluster(parallelism)
    try
      for (query <- args.drop(3)) {
        val path = s"$dir/$query.bin"
        val events = {
          val ch = FileChannel.open(Paths.get(path), StandardOpenOption.READ)
          try ch.size.toInt / RecordBytes
          finally ch.close()
        }
        runJob(cluster, query, path, bound, parallelism, limit = math.min(events - Channels, 500000))
        val started = System.nanoTime()
        val fp = runJob(cluster, query, path, bound, parallelism, limit = -1)
        val seconds = (System.nanoTime() - started) / 1e9
        println(
          s"""{"query":"$query","system":"flink","events":${events - Channels},"seconds":$seconds,""" +
            s""""fingerprint":[${fp.mkString(",")}]}"""
        )
      }
    finally cluster.close()
  }

  def runJob(
      cluster: MiniCluster,
      query: String,
      path: String,
      bound: Long,
      parallelism: Int,
      limit: Int
  ): Seq[Long] = {
    val env = new StreamExecutionEnvironment(new Configuration())
    env.setParallelism(parallelism)
    val inType: TypeInformation[In] = Types.TUPLE[In](Types.STRING, Types.LONG)
    val bids: DataStream[In] = env.fromSource(
      new FlinkJobBench.EventSource(path, limit, 0L),
      WatermarkStrategy.forBoundedOutOfOrderness[In](Duration.ofMillis(bound)),
      "bids",
      inType
    )
    val acc = Types.PRIMITIVE_ARRAY(Types.LONG).asInstanceOf[TypeInformation[Array[Long]]]
    val out: DataStream[java.lang.Long] = query match {
      case "q5" =>
        val countedType: TypeInformation[Counted] = Types.TUPLE[Counted](Types.STRING, Types.LONG, Types.LONG)
        bids
          .keyBy(new KeyOf, Types.STRING)
          .window(SlidingEventTimeWindows.of(Duration.ofSeconds(10), Duration.ofSeconds(2)))
          .aggregate(new Fold(true), new WithWindowEnd, acc, Types.LONG, countedType)
          .keyBy(new WindowEndOf, Types.LONG)
          .window(TumblingEventTimeWindows.of(Duration.ofSeconds(2)))
          .aggregate(new MostBids, new HottestFingerprint, acc, acc, Types.LONG)
      case "q7" =>
        bids
          .windowAll(TumblingEventTimeWindows.of(Duration.ofSeconds(10)))
          .aggregate(new HighestBid, new HighestFingerprint, acc, acc, Types.LONG)
      case "q8" =>
        bids
          .keyBy(new KeyOf, Types.STRING)
          .window(TumblingEventTimeWindows.of(Duration.ofSeconds(10)))
          .aggregate(new Fold(false), new NewUserFingerprint, acc, Types.LONG, Types.LONG)
      case "q11" =>
        bids
          .keyBy(new KeyOf, Types.STRING)
          .window(EventTimeSessionWindows.withGap(Duration.ofSeconds(10)))
          .aggregate(new Fold(true), new SessionFingerprint, acc, Types.LONG, Types.LONG)
    }
    out.sinkTo(new DiscardingSink[java.lang.Long])
    val result = cluster.executeJobBlocking(env.getStreamGraph.getJobGraph)
    Fingerprint.Names.map(n => result.getAccumulatorResult[java.lang.Long](n).longValue).toSeq
  }

  def keyId(key: String): Long = key.substring(1).toLong // "k123" -> 123

  /** The four accumulators every query folds its results into. */
  object Fingerprint {
    val Names = Array("rows", "sum", "weighted", "keys")
    def register(ctx: org.apache.flink.api.common.functions.RuntimeContext): Array[LongCounter] =
      Names.map { n =>
        val c = new LongCounter; ctx.addAccumulator(n, c); c
      }

    /** `rows` results of `value` each, in a window starting at `startMs`, whose keys sum to
      * `keys`.
      */
    def add(fp: Array[LongCounter], value: Long, rows: Long, keys: Long, startMs: Long): Unit =
      if (rows > 0) {
        fp(0).add(rows); fp(1).add(value * rows)
        fp(2).add(Math.floorDiv(startMs, 1000L) * value * rows); fp(3).add(keys)
      }
  }

  /** An arg-max that keeps ties: (largest value, how many have it, the sum of their keys). */
  object Ties {
    def empty: Array[Long] = Array(-1L, 0L, 0L)
    def offer(acc: Array[Long], value: Long, key: Long): Array[Long] = {
      if (value > acc(0)) { acc(0) = value; acc(1) = 1; acc(2) = key }
      else if (value == acc(0)) { acc(1) += 1; acc(2) += key }
      acc
    }
    def merge(a: Array[Long], b: Array[Long]): Array[Long] =
      if (b(0) > a(0)) b else if (b(0) < a(0)) a else { a(1) += b(1); a(2) += b(2); a }
  }

  /** A sliding window's count with its key and end. */
  final class WithWindowEnd extends ProcessWindowFunction[java.lang.Long, Counted, String, TimeWindow] {
    override def process(
        key: String,
        ctx: ProcessWindowFunction[java.lang.Long, Counted, String, TimeWindow]#Context,
        values: java.lang.Iterable[java.lang.Long],
        out: Collector[Counted]
    ): Unit = if (key != "flush")
      out.collect(new Counted(key, values.iterator().next(), java.lang.Long.valueOf(ctx.window.getEnd)))
  }

  final class WindowEndOf extends KeySelector[Counted, java.lang.Long] {
    def getKey(v: Counted): java.lang.Long = v.f2
  }

  /** The largest count, how many keys reach it and the sum of their ids. */
  final class MostBids extends AggregateFunction[Counted, Array[Long], Array[Long]] {
    def createAccumulator(): Array[Long] = Ties.empty
    def add(v: Counted, acc: Array[Long]): Array[Long] = Ties.offer(acc, v.f1.longValue, keyId(v.f0))
    def getResult(acc: Array[Long]): Array[Long] = acc
    def merge(a: Array[Long], b: Array[Long]): Array[Long] = Ties.merge(a, b)
  }

  final class HottestFingerprint
      extends ProcessWindowFunction[Array[Long], java.lang.Long, java.lang.Long, TimeWindow] {
    private var fp: Array[LongCounter] = _
    override def open(ctx: OpenContext): Unit = fp = Fingerprint.register(getRuntimeContext)
    override def process(
        end: java.lang.Long,
        ctx: ProcessWindowFunction[Array[Long], java.lang.Long, java.lang.Long, TimeWindow]#Context,
        values: java.lang.Iterable[Array[Long]],
        out: Collector[java.lang.Long]
    ): Unit = {
      val Array(most, rows, keys) = values.iterator().next()
      Fingerprint.add(fp, most, rows, keys, end.longValue - 10000L) // the sliding window's start
    }
  }

  /** The highest price, how many bids have it and the sum of their auctions. */
  final class HighestBid extends AggregateFunction[In, Array[Long], Array[Long]] {
    def createAccumulator(): Array[Long] = Ties.empty
    def add(v: In, acc: Array[Long]): Array[Long] =
      if (v.f0 == "flush") acc
      else Ties.offer(acc, v.f1.longValue >>> AuctionBits, v.f1.longValue & ((1L << AuctionBits) - 1))
    def getResult(acc: Array[Long]): Array[Long] = acc
    def merge(a: Array[Long], b: Array[Long]): Array[Long] = Ties.merge(a, b)
  }

  final class HighestFingerprint extends ProcessAllWindowFunction[Array[Long], java.lang.Long, TimeWindow] {
    private var fp: Array[LongCounter] = _
    override def open(ctx: OpenContext): Unit = fp = Fingerprint.register(getRuntimeContext)
    override def process(
        ctx: ProcessAllWindowFunction[Array[Long], java.lang.Long, TimeWindow]#Context,
        values: java.lang.Iterable[Array[Long]],
        out: Collector[java.lang.Long]
    ): Unit = {
      val Array(highest, rows, auctions) = values.iterator().next()
      Fingerprint.add(fp, highest, rows, auctions, ctx.window.getStart)
    }
  }

  /** A window function over one value per (key, window) that adds it to the fingerprint, but
    * never for the flush events' key: `add` says what of the value counts.
    */
  abstract class KeyedFingerprint
      extends ProcessWindowFunction[java.lang.Long, java.lang.Long, String, TimeWindow] {
    private var fp: Array[LongCounter] = _
    override def open(ctx: OpenContext): Unit = fp = Fingerprint.register(getRuntimeContext)
    protected def add(fp: Array[LongCounter], value: Long, key: Long, start: Long): Unit
    override def process(
        key: String,
        ctx: ProcessWindowFunction[java.lang.Long, java.lang.Long, String, TimeWindow]#Context,
        values: java.lang.Iterable[java.lang.Long],
        out: Collector[java.lang.Long]
    ): Unit = if (key != "flush") add(fp, values.iterator().next().longValue, keyId(key), ctx.window.getStart)
  }

  /** A window's persons (the high half of the sum) and auctions (the low half): one row, the
    * auctions, where it has both.
    */
  final class NewUserFingerprint extends KeyedFingerprint {
    protected def add(fp: Array[LongCounter], both: Long, key: Long, start: Long): Unit = {
      val auctions = both & 0xffffffffL
      if ((both >>> 32) > 0 && auctions > 0) Fingerprint.add(fp, auctions, 1L, key, start)
    }
  }

  final class SessionFingerprint extends KeyedFingerprint {
    protected def add(fp: Array[LongCounter], count: Long, key: Long, start: Long): Unit =
      Fingerprint.add(fp, count, 1L, key, start)
  }
}
