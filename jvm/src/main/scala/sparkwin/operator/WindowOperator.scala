package sparkwin.operator

import sparkwin.core.{Element, Record}
import sparkwin.core.agg.{Accumulator, SumOverflow}
import sparkwin.core.window.{StormWindows, TimeWindow, Window}
import sparkwin.operator.general.GeneralAlgorithm
import sparkwin.operator.session.{KeyedSessions, PackedSessions}
import sparkwin.operator.slice.{KeyedSlices, PackedSlices}
import sparkwin.operator.storm.{StormAlgorithm, StormArrival}
import sparkwin.operator.store.{DenseKeyedBackend, KeyedBackend, StateKind}

/** The window operator: one shell over the algorithms.
  *
  * The shell owns what every algorithm shares: the two clocks and the watermark guard, the
  * current key's timers ([[TimerService]]), element counting, lateness (what is late, and when a
  * window's state is cleaned up) and late routing (side output or a counted drop), emitting
  * panes with their counters, and pane timing. The algorithm
  * ([[WindowAlgorithm]], chosen by [[Selection]]) owns the windows: assignment, triggers,
  * merging, eviction and its state layout. Runtimes only ever see this class.
  */
final class WindowOperator private (
    val spec: OperatorSpec,
    val choice: Selection.Choice,
    val backend: KeyedBackend,
    val output: Emitter
) extends Operator {
  val metrics = new OperatorMetrics

  /** The algorithms' one way to the current key's timers. */
  val timers = new TimerService(backend, metrics)

  private var watermark = Long.MinValue
  private var processingTime = Long.MinValue
  private val isEventTime = spec.assigner.isEventTime

  private val algorithm: WindowAlgorithm = WindowOperator.algorithmFor(this)
  algorithm.stateKind.foreach(backend.install)

  /** How the algorithm keeps a key's state in a keyed backend (null for the packed layouts). */
  def stateKind: StateKind = algorithm.stateKind.orNull

  def currentWatermark: Long = watermark
  def currentProcessingTime: Long = processingTime

  // What became of the element being processed: accepted unless the algorithm says otherwise.
  private var fate: ElementFate = ElementFate.Accepted

  def processElement(record: Record, timestamp: Long): ElementFate = {
    metrics.elementsIn += 1
    fate = ElementFate.Accepted
    algorithm.processElement(record, timestamp)
    fate
  }

  def processPartial(ts: Long, partial: Array[Accumulator], count: Long): Unit = {
    if (!spec.combinable)
      throw new IllegalStateException(s"processPartial needs a combinable pipeline, got $spec")
    metrics.elementsIn += count
    algorithm.processPartial(ts, partial, count)
  }

  def advanceWatermark(wm: Long): Unit =
    // Equal watermarks still fire what is due: on Spark every key of a batch sees the same one.
    if (wm >= watermark) {
      watermark = wm
      algorithm.onWatermark(wm)
    }

  def setProcessingTime(time: Long): Unit = if (time > processingTime) processingTime = time

  def restoreClocks(watermark: Long, processingTime: Long): Unit = {
    this.watermark = watermark
    this.processingTime = processingTime
  }

  def advanceProcessingTime(time: Long): Unit = {
    setProcessingTime(time)
    algorithm.onProcessingTime(processingTime)
  }

  // ---------------------------------------------------------------------------------------
  // What algorithms share

  /** An element whose windows are all gone: to the late side output when the pipeline has one,
    * else counted as dropped. Never lost silently.
    */
  def late(record: Record, timestamp: Long): Unit = {
    fate = if (spec.lateOutput) ElementFate.Late else ElementFate.Dropped
    metrics.late(spec.lateOutput, output, backend.currentKey, record, timestamp)
  }

  /** An element that falls in no window (sliding windows with gaps), counted. */
  def droppedNoWindow(): Unit = {
    fate = ElementFate.Dropped
    metrics.droppedNoWindow += 1
  }

  /** An element whose every window a finished trigger closed (Beam), counted. */
  def droppedClosedWindow(): Unit = {
    fate = ElementFate.Dropped
    metrics.droppedClosedWindow += 1
  }

  /** A pre-aggregated group whose windows are all gone: counted (a combinable pipeline has no
    * late side output).
    */
  def lateGroup(count: Long): Unit = metrics.droppedLate += count

  /** A fired pane of the current key, counted. */
  def emitResult(window: Window, pane: PaneInfo, values: Array[Any]): Unit = {
    metrics.panesFired += 1
    var i = 0
    while (i < values.length) {
      values(i) match {
        case o: SumOverflow => values(i) = overflowed(window, i, o)
        case _ =>
      }
      i += 1
    }
    output.emitResult(backend.currentKey, window, pane, values)
  }

  /** An overflowing sum as Spark gives it: wrapped (decimals: null) without ANSI; with ANSI,
    * where Spark fails the query, null and a row on the error output naming the window, so
    * one window cannot fail a stream on every restart.
    */
  private def overflowed(window: Window, at: Int, o: SumOverflow): Any =
    if (!spec.ansi) o.wrapped
    else {
      val alias = spec.aggregates(at).alias
      output.emitWindowError(
        backend.currentKey,
        window,
        s"$alias overflowed in window ${bounds(window)}: it is null in the result. Sum as decimal " +
          "(cast the column to decimal(38,0)) for an exact sum, or set spark.sql.ansi.enabled=false " +
          "for Spark's wrap-around"
      )
      null
    }

  private def bounds(window: Window): String = window match {
    case t: TimeWindow =>
      s"[${java.time.Instant.ofEpochMilli(t.start)}, ${java.time.Instant.ofEpochMilli(t.end)})"
    case other => other.toString
  }

  /** A fired pane of a process pipeline, counted. */
  def emitElements(window: Window, pane: PaneInfo, elements: java.util.List[Element]): Unit = {
    metrics.panesFired += 1
    output.emitElements(backend.currentKey, window, pane, elements)
  }

  /** A window's one pane, after which it is gone (sliced and session windows). */
  def emitFinal(window: Window, values: Array[Any]): Unit = {
    metrics.windowsCleaned += 1
    emitResult(window, PaneInfo.Only, values)
  }

  /** Beam's timing rule: LATE after any on-time or late pane, EARLY while `clock` is before the
    * window's end, ON_TIME for the first pane after it unless the window first appeared after its
    * end had passed (all its data was late): then LATE.
    */
  def paneTiming(window: Window, clock: Long, nonEarlyFired: Boolean, createdLate: Boolean): PaneTiming =
    if (nonEarlyFired) PaneTiming.Late
    else if (clock < window.maxTimestamp) PaneTiming.Early
    else if (createdLate) PaneTiming.Late
    else PaneTiming.OnTime

  /** When a window's state goes: `maxTimestamp + allowedLateness` in event time (never, when
    * that overflows), `maxTimestamp` in processing time.
    */
  def cleanupTime(window: Window): Long =
    if (isEventTime) eventCleanupTime(window.maxTimestamp) else window.maxTimestamp

  private def eventCleanupTime(maxTimestamp: Long): Long = {
    val t = maxTimestamp + spec.allowedLateness
    if (t >= maxTimestamp) t else Long.MaxValue
  }

  /** An event-time window whose cleanup time the watermark has reached takes no more data. */
  def isLate(window: Window): Boolean = isLateAt(window.maxTimestamp)

  /** Lateness by a largest timestamp alone, for algorithms that keep windows as bounds (the
    * last window of a slice, a session's end) or judge an element by its own time (Flink's
    * `isElementLate`): behind the watermark by more than the allowed lateness, in event time.
    */
  def isLateAt(maxTimestamp: Long): Boolean = isEventTime && eventCleanupTime(maxTimestamp) <= watermark
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

  private def algorithmFor(op: WindowOperator): WindowAlgorithm = {
    import Selection.{Algorithm, Layout}
    def dense = op.backend match {
      case d: DenseKeyedBackend => d
      case other => throw new IllegalArgumentException(s"the packed layout needs a dense backend, got $other")
    }
    (op.choice.algorithm, op.choice.layout) match {
      case (Algorithm.General, Layout.Keyed) => new GeneralAlgorithm(op)
      case (Algorithm.Sliced, Layout.Keyed) => new KeyedSlices(op)
      case (Algorithm.Sliced, Layout.Packed) => new PackedSlices(op, dense)
      case (Algorithm.Session, Layout.Keyed) => new KeyedSessions(op)
      case (Algorithm.Session, Layout.Packed) => new PackedSessions(op, dense)
      case (Algorithm.Storm, Layout.Keyed) =>
        new StormAlgorithm(op, op.spec.assigner.asInstanceOf[StormWindows])
      case (Algorithm.StormArrival, Layout.Keyed) =>
        new StormArrival(op, op.spec.assigner.asInstanceOf[StormWindows])
      case (a, l) => throw new IllegalArgumentException(s"no $a algorithm in the $l layout")
    }
  }

  /** Thrown when a session merge would produce a window that is already expired. */
  final class WindowMergeException(message: String) extends RuntimeException(message)
}

/** What an algorithm does for the shell ([[WindowOperator]]): the windows themselves. */
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

  /** The watermark moved to `wm`: fire what is due. */
  def onWatermark(wm: Long): Unit

  /** Processing time moved to `time`: fire what is due. */
  def onProcessingTime(time: Long): Unit = ()
}
