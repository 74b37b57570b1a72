package sparkwin.operator

import sparkwin.core.Record
import sparkwin.core.agg.Accumulator
import sparkwin.core.window.{StormWindows, Window}
import sparkwin.operator.general.GeneralAlgorithm
import sparkwin.operator.session.{KeyedSessions, PackedSessions}
import sparkwin.operator.slice.{KeyedSlices, PackedSlices}
import sparkwin.operator.storm.{StormAlgorithm, StormArrival}
import sparkwin.core.timer.TimerQueue
import sparkwin.operator.store.{KeyState, KeyedBackend, StateKind}

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
final class WindowOperator private (
    val spec: OperatorSpec,
    val choice: Selection.Choice,
    val backend: KeyedBackend,
    val output: Emitter
) extends Operator {
  val metrics = new OperatorMetrics

  /** All the algorithm sees: state, timers, output, clocks and lateness. One per operator. */
  private val context = new WindowContext(spec, backend, output, metrics)

  /** The operator's timers: the algorithm registers them, the shell fires them. */
  def timers: TimerService = context.timers

  private val algorithm: WindowAlgorithm = WindowOperator.algorithmFor(context, choice)
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

  /** The operator for `spec` over `backend`, running what [[Selection]] chooses. */
  def apply(spec: OperatorSpec, backend: KeyedBackend, output: Emitter): WindowOperator =
    new WindowOperator(spec, Selection.choose(spec, backend.packable), backend, output)

  /** The operator with a given algorithm and layout, for tests that hold one to another; the
    * choice must be one the spec can run.
    */
  def withChoice(
      spec: OperatorSpec,
      choice: Selection.Choice,
      backend: KeyedBackend,
      output: Emitter
  ): WindowOperator = new WindowOperator(spec, choice, backend, output)

  private def algorithmFor(context: WindowContext, choice: Selection.Choice): WindowAlgorithm = {
    import Selection.{Algorithm, Layout}
    val assigner = context.spec.assigner
    (choice.algorithm, choice.layout) match {
      case (Algorithm.General, Layout.Keyed) => new GeneralAlgorithm(context)
      case (Algorithm.Sliced, Layout.Keyed) => new KeyedSlices(context)
      case (Algorithm.Sliced, Layout.Packed) => new PackedSlices(context)
      case (Algorithm.Session, Layout.Keyed) => new KeyedSessions(context)
      case (Algorithm.Session, Layout.Packed) => new PackedSessions(context)
      case (Algorithm.Storm, Layout.Keyed) => new StormAlgorithm(context, assigner.asInstanceOf[StormWindows])
      case (Algorithm.StormArrival, Layout.Keyed) =>
        new StormArrival(context, assigner.asInstanceOf[StormWindows])
      case (a, l) => throw new IllegalArgumentException(s"no $a algorithm in the $l layout")
    }
  }

  /** Thrown when a session merge would produce a window that is already expired. */
  final class WindowMergeException(message: String) extends RuntimeException(message)
}

/** What an algorithm does for the shell ([[WindowOperator]]): the windows themselves. It is
  * built over the operator's [[WindowContext]] and sees nothing else: the shell moves the clocks
  * and fires due timers into [[onTimer]] with their key current.
  */
abstract class WindowAlgorithm {

  /** How it keeps a key's state in the runtime's backend; None for layouts that keep every key
    * in arrays of their own (they hold no per-key state).
    */
  def stateKind: Option[StateKind]

  /** An element of the backend's current key, already counted. */
  def processElement(record: Record, timestamp: Long): Unit

  /** A pre-aggregated group of the current key (combinable specs only), already counted. */
  def processPartial(ts: Long, partial: Array[Accumulator], count: Long): Unit =
    throw new UnsupportedOperationException(s"${getClass.getSimpleName} takes no pre-aggregated groups")

  /** A timer of the current key is due: the shell took it from the [[TimerService]] and made its
    * key current. `window` is the one it was registered for (null for a key timer of the packed
    * layouts); `eventTime` says its clock.
    */
  def onTimer(time: Long, window: Window, eventTime: Boolean): Unit

  /** The watermark moved to `wm` and its due timers fired: for layouts that fire by the watermark
    * itself rather than by timers (the packed slices fire a window for all its keys at once).
    */
  def onWatermark(wm: Long): Unit = ()

  /** The windows a key's `state` holds, with `eventTimers` its pending event-time timers, as a
    * reader of a checkpoint sees them ([[OpenWindow]]), in order of their bounds. Only the keyed
    * layouts keep a state per key.
    */
  def openWindows(state: KeyState, eventTimers: TimerQueue): Seq[OpenWindow] =
    throw new UnsupportedOperationException(s"${getClass.getSimpleName} keeps no state per key")
}
