package sparkwin.operator

import sparkwin.core.{Element, Record}
import sparkwin.core.agg.SumOverflow
import sparkwin.core.window.{TimeWindow, Window}
import sparkwin.operator.store.{DenseKeyedBackend, HeldState, KeyState, KeyedBackend}

/** What an algorithm sees of its operator, the way Flink SQL's window processors see a small
  * context: the current key's state, its timer service, the output, the two clocks and lateness.
  * The shell ([[WindowOperator]]) makes one per operator and hands it to its algorithm once; it
  * moves the clocks, fires due timers with their key current and calls the algorithm's
  * [[WindowAlgorithm.onTimer]], so an algorithm never sees the backend or its timer queues.
  */
final class WindowContext private[operator] (
    val spec: OperatorSpec,
    backend: KeyedBackend,
    output: Emitter,
    val metrics: OperatorMetrics
) {

  /** The current key's timers: register and delete (the shell fires them). */
  val timers = new TimerService(backend, metrics)

  private val isEventTime = spec.assigner.isEventTime

  // The clocks, moved only by the shell.
  private[operator] var watermark = Long.MinValue
  private[operator] var processingTime = Long.MinValue

  // What became of the element being processed: accepted unless the algorithm says otherwise.
  private[operator] var fate: ElementFate = ElementFate.Accepted

  def currentWatermark: Long = watermark
  def currentProcessingTime: Long = processingTime

  // ---------------------------------------------------------------------------------------
  // State

  /** The current key's state, created on first use. */
  def state: KeyState = backend.state

  /** The current key's state changed (it is dropped once empty). */
  def stateTouched(): Unit = backend.stateTouched()

  /** A record kept beyond the current call (element buffers). */
  def retain(record: Record): Record = backend.retain(record)

  /** The current key's id: dense (0, 1, 2...) in the packed layouts. */
  def currentKeyId: Long = backend.currentKeyId

  /** Counts state a packed layout keeps in arrays of its own with the backend's; the packed
    * layouts need a backend that holds every key by dense id.
    */
  def hold(state: HeldState): Unit = backend match {
    case d: DenseKeyedBackend => d.hold(state)
    case other => throw new IllegalArgumentException(s"the packed layout needs a dense backend, got $other")
  }

  // ---------------------------------------------------------------------------------------
  // Output

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

  /** The one pane of key `keyId`'s window, for the packed slices, which fire a window for all its
    * keys at once (the key becomes current).
    */
  def emitFinalOf(keyId: Long, window: Window, values: Array[Any]): Unit = {
    backend.switchTo(keyId)
    emitFinal(window, values)
  }

  // ---------------------------------------------------------------------------------------
  // Lateness and panes

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
