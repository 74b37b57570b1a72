package sparkwin.engine

/** What a runtime drives: elements of the backend's current key, and the two clocks. Both the
  * Flink-style [[WindowOperator]] and Storm's [[StormWindowOperator]] are operators.
  */
trait Operator {
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

object Operator {

  /** The operator a spec needs: Storm's windows have their own, everything else Flink's. */
  def apply(spec: OperatorSpec, backend: KeyedBackend, output: Emitter): Operator =
    spec.assigner match {
      case s: sparkwin.window.StormWindows => new StormWindowOperator(spec, s, backend, output)
      case _ => new WindowOperator(spec, backend, output)
    }
}
