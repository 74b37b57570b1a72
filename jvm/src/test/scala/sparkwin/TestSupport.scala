package sparkwin

import scala.collection.mutable.ArrayBuffer

import sparkwin.core.agg.{Aggregate, NumericKind}
import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._
import sparkwin.core.evictor.Evictor
import sparkwin.runtime.TimeMove
import sparkwin.runtime.local.LocalRunner
import sparkwin.core.time.WatermarkStrategy
import sparkwin.core.trigger.{DefaultTrigger, Trigger}
import sparkwin.core.window.{GlobalWindow, TimeWindow, Window, WindowAssigner}

/** Records are (key: String, value: Long, ts: Long); helpers build runners and read results. */
object TestSupport {

  /** `tests/scenarios`, the engine transcripts both test suites run (sbt may run the tests from
    * the repository's root or from jvm/).
    */
  lazy val scenarioDirectory: java.io.File = {
    val start = new java.io.File(".").getAbsoluteFile
    Iterator
      .iterate(start)(_.getParentFile)
      .takeWhile(_ != null)
      .map(new java.io.File(_, "tests/scenarios"))
      .find(_.isDirectory)
      .getOrElse(throw new IllegalStateException(s"no tests/scenarios above $start"))
  }
  def rec(key: String, value: Long, ts: Long): ArrayRecord = new ArrayRecord(Array(key, value, ts))

  /** One aggregate of every kind [[PackedAggregates]] folds into longs: sum and avg of the
    * long column, count(*), count of the nullable column and sum of the double column.
    */
  def packableAggregates(long: Int, nullable: Int, double: Int): Seq[Aggregate] = Seq(
    Aggregate.Sum("s", long, NumericKind.Integral),
    Aggregate.Count("n", -1),
    Aggregate.Count("nv", nullable),
    Aggregate.Sum("d", double, NumericKind.Fractional),
    Aggregate.Avg("avg", long)
  )

  /** Aggregates over `assigner` with the default event-time trigger and no lateness. */
  def aggregateSpec(assigner: WindowAssigner, aggs: Seq[Aggregate], lateOutput: Boolean): OperatorSpec =
    OperatorSpec(
      assigner,
      sparkwin.core.trigger.EventTimeTrigger,
      None,
      0,
      lateOutput,
      WindowFunction.Aggregates(aggs.toIndexedSeq),
      AccumulationMode.Accumulating
    )

  val sumValue: Aggregate = Aggregate.Sum("sum", 1, NumericKind.Integral)
  val countAll: Aggregate = Aggregate.Count("count", -1)
  val collectValues: Aggregate = Aggregate.CollectList("values", 1)

  final case class Out(key: Any, window: Window, pane: PaneInfo, values: Seq[Any]) {
    def start: Long = window match { case t: TimeWindow => t.start; case _ => Long.MinValue }
    def end: Long = window match { case t: TimeWindow => t.end; case _ => Long.MaxValue }
    def value: Any = values.head
    def short: (Any, Long, Long, Any) = (key, start, end, value)
  }

  final class Collect extends Emitter {
    val results = ArrayBuffer.empty[Out]
    val late = ArrayBuffer.empty[(Record, Long)]
    def emitResult(key: Any, window: Window, pane: PaneInfo, values: Array[Any]): Unit =
      results += Out(key, window, pane, values.toSeq)
    def emitElements(key: Any, window: Window, pane: PaneInfo, elements: java.util.List[Element]): Unit = {
      val vs = ArrayBuffer.empty[Any]
      elements.forEach(e => vs += e.record.get(1))
      results += Out(key, window, pane, Seq(vs.toList))
    }
    def emitLate(key: Any, record: Record, ts: Long): Unit = late += ((record, ts))
    val errors = ArrayBuffer.empty[(Record, String)]
    def emitError(record: Record, message: String): Unit = errors += ((record, message))
    val windowErrors = ArrayBuffer.empty[(Any, Window, String)]
    def emitWindowError(key: Any, window: Window, message: String): Unit =
      windowErrors += ((key, window, message))
    def take(): List[Out] = { val r = results.toList; results.clear(); r }
  }

  final class Harness(val runner: LocalRunner, val out: Collect) {
    def add(key: String, value: Long, ts: Long, channel: Int = 0): Harness = {
      runner.processElement(rec(key, value, ts), ts, channel); this
    }
    def watermark(wm: Long, channel: Int = 0): Harness = {
      runner.moveClocks(TimeMove.Watermark(wm, channel)); this
    }
    def procTime(t: Long): Harness = { runner.moveClocks(TimeMove.ProcessingTime(t)); this }
    def take(): List[Out] = out.take()
    def short(): List[(Any, Long, Long, Any)] = take().map(_.short)
    def lateValues: List[Long] = out.late.map(_._1.get(1).asInstanceOf[Long]).toList
    def metrics: OperatorMetrics = runner.operator.metrics
    def stateEntries: Int = runner.numStateEntries
  }

  def harness(
      assigner: WindowAssigner,
      trigger: Trigger = null,
      evictor: Option[Evictor] = None,
      lateness: Long = 0,
      lateOutput: Boolean = true,
      aggregates: Seq[Aggregate] = Seq(sumValue),
      process: Boolean = false,
      mode: AccumulationMode = AccumulationMode.Accumulating,
      channels: Int = 1,
      strategy: Option[WatermarkStrategy] = None,
      emitsElements: Boolean = false
  ): Harness = {
    val spec = OperatorSpec(
      assigner,
      Option(trigger).getOrElse(DefaultTrigger.forAssigner(assigner)),
      evictor,
      lateness,
      lateOutput,
      if (process) WindowFunction.ProcessElements else WindowFunction.Aggregates(aggregates.toIndexedSeq),
      mode,
      emitsElements = emitsElements
    )
    val out = new Collect
    new Harness(new LocalRunner(spec, r => r.get(0), channels, strategy, out), out)
  }

  val global: Window = GlobalWindow
}
