package sparkwin.operator

import sparkwin.core._
import sparkwin.operator.store._

/** What a runtime drives: elements of the backend's current key, and the two clocks. Both the
  * Flink-style [[WindowOperator]] and Storm's [[StormWindowOperator]] are operators.
  */
trait Operator {

  /** The pipeline it runs. */
  def spec: OperatorSpec

  def processElement(record: Record, timestamp: Long): Unit

  /** Event time moves to `wm`: every due event-time timer fires, each with its key current. */
  def advanceWatermark(wm: Long): Unit

  /** Processing time moves to `time`, firing due processing-time timers. */
  def advanceProcessingTime(time: Long): Unit

  /** Sets processing time without firing timers (the clock of the next element). */
  def setProcessingTime(time: Long): Unit

  def currentWatermark: Long
  def currentProcessingTime: Long
  def metrics: OperatorMetrics
}

/** An operator that also takes pre-aggregated groups of elements (Spark's map-side combine). */
trait PartialOperator extends Operator {

  /** `count` elements whose windows are those of `ts`, folded into `partial`. The operator
    * only reads `partial` during the call: the caller may reuse it for the next group.
    */
  def processPartial(ts: Long, partial: Array[sparkwin.core.agg.Accumulator], count: Long): Unit
}

object Operator {

  /** The operator a spec needs: Storm's windows have their own; aligned windows with the
    * default trigger and aggregates are sliced; event-time sessions with the default trigger
    * and order-blind aggregates have their own; everything else runs on Flink's.
    */
  def apply(spec: OperatorSpec, backend: KeyedBackend, output: Emitter): Operator =
    spec.assigner match {
      case s: sparkwin.core.window.StormWindows => new StormWindowOperator(spec, s, backend, output)
      case _ if spec.sliceable => new SlicingWindowOperator(spec, backend, output)
      case _ if spec.sessionFastPath => new SessionWindowOperator(spec, backend, output)
      case _ => new WindowOperator(spec, backend, output)
    }

  /** The operator for a backend that holds every key in one process (the local runtime): as
    * [[apply]], but sliced windows and sessions with count/sum/avg keep their state in
    * primitive arrays by key id ([[PackedSlicingOperator]], [[PackedSessionOperator]]).
    */
  def local(spec: OperatorSpec, backend: DenseKeyedBackend, output: Emitter): Operator =
    if (PackedSlicingOperator.packs(spec)) new PackedSlicingOperator(spec, backend, output)
    else if (PackedSessionOperator.packs(spec)) new PackedSessionOperator(spec, backend, output)
    else apply(spec, backend, output)
}

/** The clocks of an operator whose timers are all event-time ones: processing time is kept
  * for the runtime to read, and moving it fires nothing.
  */
trait EventTimeClocks { this: Operator =>
  protected var watermark: Long = Long.MinValue
  private var processingTime = Long.MinValue

  def currentWatermark: Long = watermark
  def currentProcessingTime: Long = processingTime
  def setProcessingTime(time: Long): Unit = if (time > processingTime) processingTime = time
  def advanceProcessingTime(time: Long): Unit = setProcessingTime(time)
}
