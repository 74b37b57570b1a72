package sparkwin.operator

import sparkwin.core.Record
import sparkwin.core.agg.Accumulator
import sparkwin.core.window.Window
import sparkwin.operator.store.{KeyedBackend, StateKind}

/** The window operator: one shell over the algorithms.
  *
  * The shell owns what every algorithm shares: the two clocks and the watermark guard, the
  * timers ([[TimerService]]: the algorithm registers them, the shell fires them when a clock
  * moves, with the timer's key current, into [[WindowAlgorithm.onTimer]]), element counting,
  * lateness (what is late, and when a window's state is cleaned up) and late routing (side output
  * or a counted drop), emitting panes with their counters, and pane timing; the algorithm reaches
  * them through one [[WindowContext]]. The algorithm ([[WindowAlgorithm]], chosen by
  * [[Selection]]) owns the windows: assignment, triggers, merging, eviction and its state layout.
  * Runtimes only ever see this class.
  */
final class WindowOperator private[operator] (
    val spec: OperatorSpec,
    val choice: Selection.Choice,
    val backend: KeyedBackend,
    val output: Emitter,
    algorithmOf: WindowContext => WindowAlgorithm
) extends Operator {
  val metrics = new OperatorMetrics

  /** All the algorithm sees: state, timers, output, clocks and lateness. One per operator. */
  private val context = new WindowContext(spec, backend, output, metrics)

  /** The operator's timers: the algorithm registers them, the shell fires them. */
  def timers: TimerService = context.timers

  private val algorithm: WindowAlgorithm = algorithmOf(context)
  algorithm.stateKind.foreach(backend.install)

  /** How the algorithm keeps a key's state in a keyed backend (null for the packed layouts). */
  def stateKind: StateKind = algorithm.stateKind.orNull

  def currentWatermark: Long = context.watermark
  def currentProcessingTime: Long = context.processingTime
  def nextEventTimer: Long = context.timers.nextEventTime
  def nextProcessingTimer: Long = context.timers.nextProcessingTime
  def lastProcessingTimer: Long = context.timers.lastProcessingTime

  def processElement(record: Record, timestamp: Long): ElementFate = {
    metrics.elementsIn += 1
    context.fate = ElementFate.Accepted
    algorithm.processElement(record, timestamp)
    context.fate
  }

  def processPartial(ts: Long, partial: Array[Accumulator], count: Long): Unit = {
    if (!spec.combinable)
      throw new IllegalStateException(s"processPartial needs a combinable pipeline, got $spec")
    metrics.elementsIn += count
    algorithm.processPartial(ts, partial, count)
  }

  def moveClocks(watermark: Long, processingTime: Long, move: ClockMove): Unit =
    if (move eq ClockMove.Advance) {
      if (processingTime != ClockMove.Keep) {
        if (processingTime > context.processingTime) context.processingTime = processingTime
        context.timers.fireDue(eventTime = false, context.processingTime, algorithm)
      }
      if (watermark != ClockMove.Keep && watermark >= context.watermark) {
        context.watermark = watermark
        context.timers.fireDue(eventTime = true, watermark, algorithm)
        algorithm.onWatermark(watermark)
      }
    } else if (move eq ClockMove.Set) {
      if (processingTime > context.processingTime) context.processingTime = processingTime
    } else {
      context.watermark = watermark
      context.processingTime = processingTime
    }

  /** The windows the backend's current key holds ([[OpenWindow]]), for readers of a checkpoint. */
  def openWindows: Seq[OpenWindow] = algorithm.openWindows(backend.state, backend.eventTimers)

  /** Lateness as the algorithms judge it ([[WindowContext.isLate]]). */
  def isLate(window: Window): Boolean = context.isLate(window)
  def isLateAt(maxTimestamp: Long): Boolean = context.isLateAt(maxTimestamp)
}

object WindowOperator {

  /** Thrown when a session merge would produce a window that is already expired. */
  final class WindowMergeException(message: String) extends RuntimeException(message)
}
