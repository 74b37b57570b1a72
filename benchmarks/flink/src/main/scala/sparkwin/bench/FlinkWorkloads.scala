package sparkwin.bench

import java.time.Duration

import org.apache.flink.api.common.functions.AggregateFunction
import org.apache.flink.api.java.functions.KeySelector
import org.apache.flink.api.java.tuple.Tuple2
import org.apache.flink.streaming.api.windowing.assigners.{
  EventTimeSessionWindows,
  SlidingEventTimeWindows,
  TumblingEventTimeWindows,
  WindowAssigner
}
import org.apache.flink.streaming.api.windowing.windows.TimeWindow

/** What both Flink peers share: the benchmark's workloads as Flink assigners, the record type
  * and the aggregate, and the events file's layout.
  */
object FlinkWorkloads {
  type In = Tuple2[String, java.lang.Long] // key, amount

  /** Sums or counts amounts: an AggregateFunction over a long accumulator. */
  final class Fold(count: Boolean) extends AggregateFunction[In, Array[Long], java.lang.Long] {
    def createAccumulator(): Array[Long] = Array(0L)
    def add(v: In, acc: Array[Long]): Array[Long] = { acc(0) += (if (count) 1L else v.f1.longValue); acc }
    def getResult(acc: Array[Long]): java.lang.Long = acc(0)
    def merge(a: Array[Long], b: Array[Long]): Array[Long] = { a(0) += b(0); a }
  }

  final class KeyOf extends KeySelector[In, String] { def getKey(v: In): String = v.f0 }

  /** `tumbling` (1 min), `sliding[:slideMs]` (10 min), `session[:gapMs]` or `channels[:lagMs]`
    * (tumbling 1 min): the assigner, and whether the workload counts instead of summing.
    */
  def assigner(workload: String): (WindowAssigner[In, TimeWindow], Boolean) = {
    def param(default: Long): Long = workload.split(':').lift(1).fold(default)(_.toLong)
    val a = workload.takeWhile(_ != ':') match {
      case "tumbling" | "channels" => TumblingEventTimeWindows.of(Duration.ofMinutes(1))
      case "sliding" => SlidingEventTimeWindows.of(Duration.ofMinutes(10), Duration.ofMillis(param(60000)))
      case "session" => EventTimeSessionWindows.withGap(Duration.ofMillis(param(30000)))
    }
    (a.asInstanceOf[WindowAssigner[In, TimeWindow]], workload.startsWith("session"))
  }

  /** benchmarks/run.py's events file: little-endian int32 key id, int64 ts, int64 amount, 20
    * bytes an event; the last `Channels` events are the flush events, one per channel.
    */
  val RecordBytes = 20
  val Channels = 8

  /** How many key ids the file holds; the last one is the flush key, whose windows no
    * fingerprint counts.
    */
  def keyCount(buf: java.nio.ByteBuffer): Int = {
    var max = 0
    var i = 0
    while (i < buf.limit() / RecordBytes) { max = math.max(max, buf.getInt(i * RecordBytes)); i += 1 }
    max + 1
  }
}
