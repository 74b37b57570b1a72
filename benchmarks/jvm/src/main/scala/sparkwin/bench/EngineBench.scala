package sparkwin.bench

import sparkwin.core.agg.{Aggregate, NumericKind}
import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.algorithms.Algorithms
import sparkwin.operator.store._
import sparkwin.runtime.local.LocalBackend
import sparkwin.core.trigger.DefaultTrigger
import sparkwin.core.window._

/** The engine alone, single thread: events/s for the benchmark workloads.
  *
  * Usage: EngineBench <events> <keys> <seed> [workload...]; prints one JSON object per line.
  * Events are generated like benchmarks/run.py's: timestamps step 1 ms per event with up to
  * `bound` ms of disorder; the watermark (max - bound - 1) advances every 1000 events.
  *
  * `EngineBench file|keyed <events.bin> <boundMs> [workload...]` runs benchmarks/run.py's events:
  * `file` as the local runtime runs them (system `engine`: packed layouts over dense key ids),
  * `keyed` with the per-key layouts Spark's processor runs (system `engine-keyed`: a state
  * object per key; Spark adds loading and storing each key's state around them).
  *
  * `EngineBench nexmark <dir> <boundMs> [query...]` runs benchmarks/nexmark.py's queries
  * (EngineNexmark).
  */
object EngineBench {

  /** Counts results and fingerprints them like benchmarks/run.py does for every system:
    * (windows, sum of values, sum of window start in seconds times value), flush key excluded.
    */
  final class Counting(excluded: Any) extends Emitter {
    var results = 0L
    var checksum = 0L
    var weighted = 0L
    def emitResult(key: Any, window: Window, pane: PaneInfo, values: Array[Any]): Unit =
      if (key != excluded) {
        val v = values(0).asInstanceOf[Long]
        results += 1
        checksum += v
        weighted += (window.asInstanceOf[TimeWindow].start / 1000) * v
      }
    def emitElements(key: Any, window: Window, pane: PaneInfo, elements: java.util.List[Element]): Unit = ()
    def emitLate(key: Any, record: Record, timestamp: Long): Unit = ()
    def emitError(record: Record, message: String): Unit = throw new IllegalStateException(message)
    def emitWindowError(key: Any, window: Window, message: String): Unit =
      throw new IllegalStateException(message)
  }

  /** `tumbling`, `sliding[:slideMs]` (10 min windows) or `session[:gapMs]`. */
  def spec(workload: String): OperatorSpec = {
    def param(default: Long): Long = workload.split(':').lift(1).fold(default)(_.toLong)
    val (assigner, agg) = workload.takeWhile(_ != ':') match {
      case "tumbling" =>
        (TumblingWindows(60000, 0, isEventTime = true), Aggregate.Sum("sum", 1, NumericKind.Integral))
      case "sliding" =>
        (
          SlidingWindows(600000, param(60000), 0, isEventTime = true),
          Aggregate.Sum("sum", 1, NumericKind.Integral)
        )
      case "session" => (SessionWindows(param(30000), -1, isEventTime = true), Aggregate.Count("count", -1))
    }
    OperatorSpec(
      assigner,
      DefaultTrigger.forAssigner(assigner),
      None,
      0,
      lateOutput = false,
      WindowFunction.Aggregates(IndexedSeq(agg)),
      AccumulationMode.Accumulating
    )
  }

  def main(args: Array[String]): Unit =
    args(0) match {
      case "file" => fromFile(args(1), args(2).toLong, args.drop(3).toSeq, packable = true)
      case "keyed" => fromFile(args(1), args(2).toLong, args.drop(3).toSeq, packable = false)
      case "nexmark" => EngineNexmark.main(args(1), args(2).toLong, args.drop(3).toSeq)
      case _ => generated(args)
    }

  /** Events from benchmarks/run.py: little-endian int32 key, int64 ts, int64 amount per event. */
  private def fromFile(path: String, bound: Long, workloads: Seq[String], packable: Boolean): Unit = {
    val bytes = java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(path))
    val buf = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val n = bytes.length / 20
    val keyOf = new Array[Int](n)
    val ts = new Array[Long](n)
    val amount = new Array[Long](n)
    for (i <- 0 until n) { keyOf(i) = buf.getInt(); ts(i) = buf.getLong(); amount(i) = buf.getLong() }
    val keys = keyOf.max + 1
    val keyNames = Array.tabulate(keys)(i => s"k$i")
    measure(workloads, keyNames, keyOf, ts, amount, n, bound, keyNames(keys - 1), packable)
  }

  private def generated(args: Array[String]): Unit = {
    val n = args(0).toInt
    val keys = args(1).toInt
    val seed = args(2).toLong
    val workloads = if (args.length > 3) args.drop(3).toSeq else Seq("tumbling", "sliding", "session")
    val bound = 2000L
    val rnd = new scala.util.Random(seed)
    val keyNames = Array.tabulate(keys)(i => s"k$i")
    val keyOf = Array.fill(n)(rnd.nextInt(keys))
    val ts = Array.tabulate(n)(i => i.toLong - rnd.nextInt(bound.toInt))
    val amount = Array.tabulate(n)(i => (i % 100).toLong)
    measure(workloads, keyNames, keyOf, ts, amount, n, bound, excluded = null, packable = true)
  }

  private def measure(
      workloads: Seq[String],
      keyNames: Array[String],
      keyOf: Array[Int],
      ts: Array[Long],
      amount: Array[Long],
      n: Int,
      bound: Long,
      excluded: Any,
      packable: Boolean
  ): Unit =
    for (w <- workloads) {
      def once(events: Int) = run(spec(w), keyNames, keyOf, ts, amount, events, bound, excluded, packable)
      once(math.min(n, 500000)) // warm-up on a prefix, then the best of three runs
      val runs = (1 to 3).map(_ => once(n))
      val (seconds, out, _) = runs.minBy(_._1)
      // The thread's CPU time, best of three: on a shared machine it drifts less than the clock.
      val cpu = runs.map(_._3).min
      val system = if (packable) "engine" else "engine-keyed"
      println(
        s"""{"workload":"$w","system":"$system","events":$n,"seconds":$seconds,""" +
          s""""events_per_s":${(n / seconds).toLong},"windows":${out.results},"sum":${out.checksum},""" +
          s""""weighted":${out.weighted},"cpu_seconds":$cpu}"""
      )
    }

  private def run(
      spec: OperatorSpec,
      keyNames: Array[String],
      keyOf: Array[Int],
      ts: Array[Long],
      amount: Array[Long],
      n: Int,
      bound: Long,
      excluded: Any,
      packable: Boolean
  ): (Double, Counting, Double) = {
    val out = new Counting(excluded)
    val threads = java.lang.management.ManagementFactory.getThreadMXBean
    val cpuStart = threads.getCurrentThreadCpuTime
    val backend = new LocalBackend(packable)
    val op = Algorithms.operator(spec, backend, out)
    val start = System.nanoTime()
    var max = Long.MinValue
    var i = 0
    while (i < n) {
      // A record is built as a runtime would hand it over. Holding millions of them instead
      // would make every young collection scan them: pauses that measure the harness.
      val key = keyNames(keyOf(i))
      backend.setCurrentKey(key)
      op.processElement(new ArrayRecord(Array[Any](key, amount(i), ts(i))), ts(i))
      if (ts(i) > max) max = ts(i)
      if (i % 1000 == 999) op.moveClocks(max - bound - 1, ClockMove.Keep, ClockMove.Advance)
      i += 1
    }
    op.moveClocks(Long.MaxValue, ClockMove.Keep, ClockMove.Advance)
    ((System.nanoTime() - start) / 1e9, out, (threads.getCurrentThreadCpuTime - cpuStart) / 1e9)
  }
}
