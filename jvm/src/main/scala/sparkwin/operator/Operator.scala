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

  /** The one door for time: every runtime moves the operator's clocks through it, as `move` says
    * ([[ClockMove]]). A clock given as [[ClockMove.Keep]] stays where it is. With
    * [[ClockMove.Advance]] processing time moves first, then event time, and the due timers of
    * each fire, each with its key current.
    */
  def moveClocks(watermark: Long, processingTime: Long, move: ClockMove): Unit

  def currentWatermark: Long
  def currentProcessingTime: Long

  /** When the next event-time timer is due (any key's, in the backend); Long.MaxValue: none. */
  def nextEventTimer: Long

  /** When the next processing-time timer is due; Long.MaxValue: none. */
  def nextProcessingTimer: Long

  /** When the last queued processing-time timer is due; Long.MinValue: none. */
  def lastProcessingTimer: Long

  /** The windows the backend's current key holds, as a reader of a checkpoint sees them. */
  def openWindows: Seq[OpenWindow]
  def metrics: OperatorMetrics
}

/** How [[Operator.moveClocks]] moves the clocks. */
sealed abstract class ClockMove

object ClockMove {

  /** A clock left where it is (no watermark can be this low). */
  final val Keep = Long.MinValue

  /** Forward only, firing: processing time moves to the given time when later and its due
    * timers fire; then event time moves to the watermark unless it is earlier, and every due
    * event-time timer fires (an equal watermark still fires what is due: on Spark every key of a
    * batch sees the same one).
    */
  case object Advance extends ClockMove

  /** Processing time moves forward without firing (the clock of the next element); the
    * watermark is not moved.
    */
  case object Set extends ClockMove

  /** Both clocks become exactly these, even backwards, firing nothing: for runtimes that keep
    * each key's timers apart and load one key at a time (Spark), where the clocks are those of
    * the moment the loaded key lives in, not of the key before it.
    */
  case object Restore extends ClockMove
}
