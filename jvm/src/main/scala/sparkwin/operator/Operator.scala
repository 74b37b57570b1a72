package sparkwin.operator

import sparkwin.core.Record
import sparkwin.core.agg.Accumulator
import sparkwin.operator.store.KeyedBackend

/** What a runtime drives: elements of the backend's current key, pre-aggregated groups, and the
  * two clocks. [[WindowOperator]] is the one implementation.
  */
trait Operator {

  /** The pipeline it runs. */
  def spec: OperatorSpec

  /** Which algorithm and state layout run it ([[Selection]]). */
  def choice: Selection.Choice

  /** An element of the current key; what became of it. */
  def processElement(record: Record, timestamp: Long): ElementFate

  /** `count` elements whose windows are those of `ts`, folded into `partial` (Spark's map-side
    * combine; only for [[Selection.combinable]] specs). The operator only reads `partial` during
    * the call: the caller may reuse it for the next group.
    */
  def processPartial(ts: Long, partial: Array[Accumulator], count: Long): Unit

  /** Event time moves to `wm`: every due event-time timer fires, each with its key current. */
  def advanceWatermark(wm: Long): Unit

  /** Processing time moves to `time`, firing due processing-time timers. */
  def advanceProcessingTime(time: Long): Unit

  /** Sets processing time without firing timers (the clock of the next element). */
  def setProcessingTime(time: Long): Unit

  /** Sets both clocks without firing anything, even backwards: for runtimes that keep each
    * key's timers apart and load one key at a time (Spark), where the clocks are those of the
    * moment the loaded key lives in, not of the key before it.
    */
  def restoreClocks(watermark: Long, processingTime: Long): Unit

  def currentWatermark: Long
  def currentProcessingTime: Long

  /** When the next event-time timer is due (any key's, in the backend); Long.MaxValue: none. */
  def nextEventTimer: Long

  /** When the next processing-time timer is due; Long.MaxValue: none. */
  def nextProcessingTimer: Long
  def metrics: OperatorMetrics
}

object Operator {

  /** The operator for `spec` over `backend`: [[Selection]] picks algorithm and layout. */
  def apply(spec: OperatorSpec, backend: KeyedBackend, output: Emitter): Operator =
    WindowOperator(spec, backend, output)
}
