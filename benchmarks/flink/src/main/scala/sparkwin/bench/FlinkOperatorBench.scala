package sparkwin.bench

import org.apache.flink.api.common.ExecutionConfig
import org.apache.flink.api.common.typeinfo.{TypeInformation, Types}
import org.apache.flink.api.java.tuple.Tuple2
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction
import org.apache.flink.streaming.api.watermark.Watermark
import org.apache.flink.streaming.api.windowing.windows.TimeWindow
import org.apache.flink.streaming.runtime.operators.windowing.WindowOperatorBuilder
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness
import org.apache.flink.util.Collector

/** Flink's own `WindowOperator`, as `keyBy().window().aggregate()` builds it, driven in one
  * thread through Flink's keyed operator test harness with the records and watermarks
  * `EngineBench` gives sparkwin's engine: the like-for-like comparison of the two cores.
  *
  *   FlinkOperatorBench <events.bin> <boundMs> tumbling|sliding[:slideMs]|session[:gapMs] ...
  *
  * Prints one JSON line per workload, as EngineBench does (system `flink-operator`): best of
  * three after a warm-up, and the results' fingerprint (windows, sum of values, sum of start
  * in seconds times value), the flush key left out.
  */
object FlinkOperatorBench {
  import FlinkWorkloads._

  /** Folds each fired window into the fingerprint, as EngineBench's `Counting` does. */
  final class Fingerprint(excluded: String)
      extends ProcessWindowFunction[java.lang.Long, java.lang.Long, String, TimeWindow] {
    override def process(
        key: String,
        ctx: ProcessWindowFunction[java.lang.Long, java.lang.Long, String, TimeWindow]#Context,
        values: java.lang.Iterable[java.lang.Long],
        out: Collector[java.lang.Long]
    ): Unit = if (key != excluded) {
      val v = values.iterator().next().longValue
      Fingerprint.windows += 1
      Fingerprint.sum += v
      Fingerprint.weighted += (ctx.window.getStart / 1000) * v
    }
  }
  object Fingerprint {
    var windows = 0L
    var sum = 0L
    var weighted = 0L
    def reset(): Unit = { windows = 0L; sum = 0L; weighted = 0L }
  }

  def main(args: Array[String]): Unit = {
    val bytes = java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(args(0)))
    val bound = args(1).toLong
    val buf = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val n = bytes.length / 20
    val keyOf = new Array[Int](n)
    val ts = new Array[Long](n)
    val amount = new Array[Long](n)
    for (i <- 0 until n) { keyOf(i) = buf.getInt(); ts(i) = buf.getLong(); amount(i) = buf.getLong() }
    val keyNames = Array.tabulate(keyOf.max + 1)(i => s"k$i")
    for (w <- args.drop(2)) {
      run(w, keyNames, keyOf, ts, amount, math.min(n, 500000), bound) // warm-up
      val (seconds, windows, sum, weighted) =
        (1 to 3).map(_ => run(w, keyNames, keyOf, ts, amount, n, bound)).minBy(_._1)
      println(
        s"""{"workload":"$w","system":"flink-operator","events":$n,"seconds":$seconds,""" +
          s""""events_per_s":${(n / seconds).toLong},"windows":$windows,"sum":$sum,"weighted":$weighted}"""
      )
    }
  }

  /** One pass over the first `n` events; returns seconds and the fingerprint. */
  def run(
      workload: String,
      keyNames: Array[String],
      keyOf: Array[Int],
      ts: Array[Long],
      amount: Array[Long],
      n: Int,
      bound: Long
  ): (Double, Long, Long, Long) = {
    val (windows, count) = assigner(workload)
    val inType: TypeInformation[In] = Types.TUPLE[In](Types.STRING, Types.LONG)
    val builder = new WindowOperatorBuilder[In, String, TimeWindow](
      windows,
      windows.getDefaultTrigger
        .asInstanceOf[org.apache.flink.streaming.api.windowing.triggers.Trigger[In, TimeWindow]],
      new ExecutionConfig,
      inType,
      new KeyOf,
      Types.STRING
    )
    val operator = builder.aggregate(
      new Fold(count),
      new Fingerprint(keyNames.last),
      Types.PRIMITIVE_ARRAY(Types.LONG).asInstanceOf[TypeInformation[Array[Long]]]
    )
    val harness = new KeyedOneInputStreamOperatorTestHarness[String, In, java.lang.Long](
      operator,
      new KeyOf,
      Types.STRING
    )
    harness.open()
    Fingerprint.reset()
    val start = System.nanoTime()
    var max = Long.MinValue
    var i = 0
    while (i < n) {
      harness.processElement(new StreamRecord[In](Tuple2.of(keyNames(keyOf(i)), amount(i)), ts(i)))
      if (ts(i) > max) max = ts(i)
      if (i % 1000 == 999) harness.processWatermark(new Watermark(max - bound - 1))
      i += 1
    }
    harness.processWatermark(new Watermark(Long.MaxValue))
    val seconds = (System.nanoTime() - start) / 1e9
    harness.close()
    (seconds, Fingerprint.windows, Fingerprint.sum, Fingerprint.weighted)
  }
}
