package sparkwin.bench

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.channels.FileChannel
import java.nio.file.{Paths, StandardOpenOption}
import java.time.Duration
import java.util.concurrent.CompletableFuture

import scala.jdk.CollectionConverters._

import org.apache.flink.api.common.accumulators.LongCounter
import org.apache.flink.api.common.eventtime.WatermarkStrategy
import org.apache.flink.api.common.functions.OpenContext
import org.apache.flink.api.common.typeinfo.{TypeInformation, Types}
import org.apache.flink.api.connector.source._
import org.apache.flink.configuration.{Configuration, TaskManagerOptions}
import org.apache.flink.core.io.{InputStatus, SimpleVersionedSerializer}
import org.apache.flink.runtime.minicluster.{MiniCluster, MiniClusterConfiguration}
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction
import org.apache.flink.streaming.api.windowing.windows.TimeWindow
import org.apache.flink.util.Collector

/** Flink end to end: a DataStream job, `keyBy().window().aggregate()` with bounded
  * out-of-orderness watermarks, on a local MiniCluster in this JVM at the given parallelism,
  * reading benchmarks/run.py's events file.
  *
  *   FlinkJobBench <events.bin> <boundMs> <parallelism> tumbling|sliding[:slideMs]|session[:gapMs]|channels[:lagMs] ...
  *
  * The events arrive as the Spark systems see them: in 8 input channels, event i in channel
  * i % 8 (the flush events one per channel), each channel a split of a FLIP-27 source, as a
  * Kafka partition is, so the watermark strategy runs per split and the source emits their
  * minimum. `channels:lagMs` is the tumbling workload on the lagging input: channel 7's events
  * `lagMs` older than their arrival.
  *
  * Prints one JSON line per workload (system `flink`): one timed job after an untimed warm-up
  * job on the first 500k events, as the Spark systems run; the time is the job's, from
  * submission to its end, on a cluster already started. The fingerprint (windows, sum of
  * values, sum of start in seconds times value, flush key left out) comes back through
  * Flink's accumulators.
  */
object FlinkJobBench {
  import FlinkWorkloads._

  def main(args: Array[String]): Unit = {
    val path = args(0)
    val bound = args(1).toLong
    val parallelism = args(2).toInt
    val events = {
      val ch = FileChannel.open(Paths.get(path), StandardOpenOption.READ)
      try ch.size.toInt / RecordBytes
      finally ch.close()
    }
    val cluster = startCluster(parallelism)
    try
      for (w <- args.drop(3)) {
        runJob(cluster, w, path, bound, parallelism, limit = math.min(events - Channels, 500000))
        val started = System.nanoTime()
        val (windows, sum, weighted) = runJob(cluster, w, path, bound, parallelism, limit = -1)
        val seconds = (System.nanoTime() - started) / 1e9
        println(
          s"""{"workload":"$w","system":"flink","events":${events - Channels},"seconds":$seconds,""" +
            s""""windows":$windows,"sum":$sum,"weighted":$weighted}"""
        )
      }
    finally cluster.close()
  }

  /** A MiniCluster of one task manager with a slot per subtask, started. */
  def startCluster(parallelism: Int): MiniCluster = {
    val conf = new Configuration()
    conf.set(TaskManagerOptions.NUM_TASK_SLOTS, Int.box(parallelism))
    val cluster = new MiniCluster(
      new MiniClusterConfiguration.Builder()
        .setConfiguration(conf)
        .setNumTaskManagers(1)
        .setNumSlotsPerTaskManager(parallelism)
        .build()
    )
    cluster.start()
    cluster
  }

  /** Runs one job to its end; `limit` >= 0: only the first `limit` events, no flush events.
    * Returns the fingerprint: windows, sum of values, sum of start in seconds times value.
    */
  def runJob(
      cluster: MiniCluster,
      workload: String,
      path: String,
      bound: Long,
      parallelism: Int,
      limit: Int
  ): (Long, Long, Long) = {
    val (windows, count) = assigner(workload)
    val lag = if (workload.startsWith("channels")) workload.split(':').lift(1).fold(600000L)(_.toLong) else 0L
    val env = new StreamExecutionEnvironment(new Configuration())
    env.setParallelism(parallelism)
    val inType: TypeInformation[In] = Types.TUPLE[In](Types.STRING, Types.LONG)
    env
      .fromSource(
        new EventSource(path, limit, lag),
        WatermarkStrategy.forBoundedOutOfOrderness[In](Duration.ofMillis(bound)),
        "events",
        inType
      )
      .keyBy(new KeyOf, Types.STRING)
      .window(windows)
      .aggregate(
        new Fold(count),
        new Fingerprint,
        Types.PRIMITIVE_ARRAY(Types.LONG).asInstanceOf[TypeInformation[Array[Long]]],
        Types.LONG,
        Types.LONG
      )
      .sinkTo(new DiscardingSink[java.lang.Long])
    val result = cluster.executeJobBlocking(env.getStreamGraph.getJobGraph)
    def total(name: String): Long = result.getAccumulatorResult[java.lang.Long](name).longValue
    (total("windows"), total("sum"), total("weighted"))
  }

  /** Folds each fired window into accumulators (windows, sum, weighted), flush key left out. */
  final class Fingerprint extends ProcessWindowFunction[java.lang.Long, java.lang.Long, String, TimeWindow] {
    private val windows = new LongCounter
    private val sum = new LongCounter
    private val weighted = new LongCounter

    override def open(ctx: OpenContext): Unit = {
      getRuntimeContext.addAccumulator("windows", windows)
      getRuntimeContext.addAccumulator("sum", sum)
      getRuntimeContext.addAccumulator("weighted", weighted)
    }

    override def process(
        key: String,
        ctx: ProcessWindowFunction[java.lang.Long, java.lang.Long, String, TimeWindow]#Context,
        values: java.lang.Iterable[java.lang.Long],
        out: Collector[java.lang.Long]
    ): Unit = if (!key.startsWith("flush")) {
      val v = values.iterator().next().longValue
      windows.add(1L)
      sum.add(v)
      weighted.add((ctx.window.getStart / 1000) * v)
    }
  }

  // ---------------------------------------------------------------------------------------
  // The source: one split per input channel, read from the memory-mapped events file.

  /** Channel `channel`'s events from event index `next` on. */
  final case class ChannelSplit(channel: Int, next: Int) extends SourceSplit {
    def splitId: String = channel.toString
  }

  object SplitSerializer extends SimpleVersionedSerializer[ChannelSplit] {
    def getVersion: Int = 1
    def serialize(s: ChannelSplit): Array[Byte] =
      ByteBuffer.allocate(8).putInt(s.channel).putInt(s.next).array
    def deserialize(version: Int, bytes: Array[Byte]): ChannelSplit = {
      val b = ByteBuffer.wrap(bytes)
      ChannelSplit(b.getInt, b.getInt)
    }
  }

  object PendingSerializer extends SimpleVersionedSerializer[java.util.List[ChannelSplit]] {
    def getVersion: Int = 1
    def serialize(splits: java.util.List[ChannelSplit]): Array[Byte] = {
      val b = ByteBuffer.allocate(4 + 8 * splits.size).putInt(splits.size)
      splits.asScala.foreach(s => b.putInt(s.channel).putInt(s.next))
      b.array
    }
    def deserialize(version: Int, bytes: Array[Byte]): java.util.List[ChannelSplit] = {
      val b = ByteBuffer.wrap(bytes)
      Seq.fill(b.getInt)(ChannelSplit(b.getInt, b.getInt)).asJava
    }
  }

  /** Hands channel c to reader c % parallelism when it registers, then says no more. */
  final class ChannelEnumerator(
      ctx: SplitEnumeratorContext[ChannelSplit],
      pending: java.util.List[ChannelSplit]
  ) extends SplitEnumerator[ChannelSplit, java.util.List[ChannelSplit]] {
    private val left = new java.util.ArrayList[ChannelSplit](pending)
    def start(): Unit = ()
    def handleSplitRequest(subtask: Int, host: String): Unit = ()
    def addSplitsBack(splits: java.util.List[ChannelSplit], subtask: Int): Unit = left.addAll(splits)
    def addReader(subtask: Int): Unit = {
      val mine = left.asScala.filter(_.channel % ctx.currentParallelism == subtask)
      mine.foreach(s => ctx.assignSplit(s, subtask))
      left.removeAll(mine.asJava)
      ctx.signalNoMoreSplits(subtask)
    }
    def snapshotState(checkpoint: Long): java.util.List[ChannelSplit] = new java.util.ArrayList(left)
    def close(): Unit = ()
  }

  final class EventSource(path: String, limit: Int, lag: Long)
      extends Source[In, ChannelSplit, java.util.List[ChannelSplit]] {
    def getBoundedness: Boundedness = Boundedness.BOUNDED
    def createEnumerator(ctx: SplitEnumeratorContext[ChannelSplit]) =
      new ChannelEnumerator(ctx, (0 until Channels).map(c => ChannelSplit(c, c)).asJava)
    def restoreEnumerator(ctx: SplitEnumeratorContext[ChannelSplit], pending: java.util.List[ChannelSplit]) =
      new ChannelEnumerator(ctx, pending)
    def getSplitSerializer: SimpleVersionedSerializer[ChannelSplit] = SplitSerializer
    def getEnumeratorCheckpointSerializer: SimpleVersionedSerializer[java.util.List[ChannelSplit]] =
      PendingSerializer
    def createReader(ctx: SourceReaderContext): SourceReader[In, ChannelSplit] =
      new EventReader(path, limit, lag)
  }

  /** Reads its channels in turns of `Turn` events, each through its split's own output (so
    * each gets its own watermark generator), as Kafka's reader does with its partitions.
    */
  final class EventReader(path: String, limit: Int, lag: Long) extends SourceReader[In, ChannelSplit] {
    private val Turn = 256
    private var buf: ByteBuffer = _
    private var real = 0 // events before the flush events
    private var end = 0 // events this job reads
    private var keyNames: Array[String] = _
    private val splits = new java.util.ArrayList[ChannelSplit]()
    private val outputs = new java.util.HashMap[String, SourceOutput[In]]()
    private var turn = 0
    private var noMore = false
    private var available = new CompletableFuture[Void]()

    def start(): Unit = {
      val ch = FileChannel.open(Paths.get(path), StandardOpenOption.READ)
      try buf = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size).order(ByteOrder.LITTLE_ENDIAN)
      finally ch.close()
      real = buf.limit() / RecordBytes - Channels
      end = if (limit >= 0) limit else real + Channels
      val keys = keyCount(buf)
      // The flush key is named apart so the fingerprint can leave it out by its name.
      keyNames = Array.tabulate(keys)(i => if (i == keys - 1) "flush" else s"k$i")
    }

    def pollNext(output: ReaderOutput[In]): InputStatus = {
      if (splits.isEmpty) {
        if (noMore) return InputStatus.END_OF_INPUT
        available = new CompletableFuture[Void]()
        return InputStatus.NOTHING_AVAILABLE
      }
      turn %= splits.size
      val split = splits.get(turn)
      val out = outputs.computeIfAbsent(split.splitId, id => output.createOutputForSplit(id))
      var i = split.next
      var n = 0
      while (n < Turn && i < end) {
        val at = i * RecordBytes
        val key = buf.getInt(at)
        val ts =
          buf.getLong(at + 4) - (if (lag != 0 && i < real && split.channel == Channels - 1) lag else 0L)
        out.collect(new In(keyNames(key), java.lang.Long.valueOf(buf.getLong(at + 12))), ts)
        // Channel c holds events c, c + 8, ... before the flush events, then flush event c.
        i = if (i + Channels < real) i + Channels else if (i < real) real + split.channel else Int.MaxValue
        n += 1
      }
      if (i >= end) {
        output.releaseOutputForSplit(split.splitId)
        splits.remove(turn)
      } else {
        splits.set(turn, split.copy(next = i))
        turn += 1
      }
      InputStatus.MORE_AVAILABLE
    }

    def snapshotState(checkpoint: Long): java.util.List[ChannelSplit] = new java.util.ArrayList(splits)
    def isAvailable: CompletableFuture[Void] = available
    def addSplits(added: java.util.List[ChannelSplit]): Unit = {
      splits.addAll(added); available.complete(null)
    }
    def notifyNoMoreSplits(): Unit = { noMore = true; available.complete(null) }
    def close(): Unit = ()
  }
}
