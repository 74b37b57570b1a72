package sparkwin.operator

import sparkwin.core._
import sparkwin.operator.store._

import java.util.{ArrayList => JList}

import sparkwin.core.agg.Accumulator
import sparkwin.core.evictor.EvictorContext
import sparkwin.operator.store.{KeyState, WindowContents, WindowMeta}
import sparkwin.core.timer.Timer
import sparkwin.core.trigger.{OnMergeContext, TriggerResult}
import sparkwin.core.window._

/** Flink's window operator, for any runtime: assigns elements to windows, merges sessions,
  * runs the trigger, evicts, aggregates, applies allowed lateness, routes late elements and
  * cleans up expired windows.
  *
  * It works on one key at a time, the backend's current key; timers of other keys fire
  * through `advanceWatermark`/`advanceProcessingTime`, which switch the backend's key. It knows
  * nothing of Spark: runtimes adapt their rows to [[Record]] and their state to [[KeyedBackend]].
  */
final class WindowOperator(val spec: OperatorSpec, backend: KeyedBackend, output: Emitter)
    extends PartialOperator {
  import WindowOperator._

  private val assigner = spec.assigner
  private val trigger = spec.trigger
  private val isEventTime = assigner.isEventTime
  private val merging: MergingWindowAssigner = assigner match {
    case m: MergingWindowAssigner => m
    case _ => null
  }
  private val aggregates = spec.aggregates.toArray
  private val discarding = spec.accumulation == AccumulationMode.Discarding
  private val beam = trigger.beamPanes

  val metrics = new OperatorMetrics

  private var watermark = Long.MinValue
  private var processingTime = Long.MinValue
  private var keyState: KeyState = _
  private val ctx = new Context
  // The time a pane's timing is judged by: the watermark (or processing time, for
  // processing-time windows) when an element fires, the timer's own time when a timer fires,
  // so a watermark that jumps past several timers still yields EARLY panes for the early ones.
  private val usesWatermark = isEventTime || assigner == GlobalWindows
  private var paneClock = Long.MinValue

  def currentWatermark: Long = watermark
  def currentProcessingTime: Long = processingTime

  def setProcessingTime(time: Long): Unit = if (time > processingTime) processingTime = time

  // ---------------------------------------------------------------------------------------
  // Elements

  def processElement(record: Record, timestamp: Long): Unit = {
    keyState = backend.state
    paneClock = if (usesWatermark) watermark else processingTime
    metrics.elementsIn += 1
    val windows = assigner.assignWindows(record, timestamp, ctx)
    if (windows.isEmpty) { metrics.droppedNoWindow += 1; return }
    var accepted = false
    var closed = false
    val it = windows.iterator
    while (it.hasNext) {
      val w = it.next()
      var actual = w
      var stateWindow = w
      var late = false
      if (merging != null) {
        val set = keyState.mergingSet
        actual = set.addWindow(w.asInstanceOf[TimeWindow], merging, mergeWindows, checkMerge)
        if (isWindowLate(actual)) { set.retireWindow(actual.asInstanceOf[TimeWindow]); late = true }
        else stateWindow = set.stateWindow(actual.asInstanceOf[TimeWindow])
      } else late = isWindowLate(w)
      if (!late) {
        val meta = metaOf(actual)
        if (meta.closed) {
          // A session equal to one its trigger closed: it stays closed until it expires.
          closed = true
          if (merging != null) keyState.mergingSet.retireWindow(actual.asInstanceOf[TimeWindow])
        } else {
          accepted = true
          add(stateWindow, record, timestamp)
          meta.sinceLastPane += 1
          ctx.bind(actual, meta)
          val result = trigger.onElement(record, timestamp, actual, ctx)
          act(result, actual, stateWindow, meta, cleanup = false)
          registerCleanupTimer(actual, meta)
        }
      }
    }
    if (!accepted) {
      if (closed) metrics.droppedClosedWindow += 1
      else metrics.late(spec.lateOutput, output, backend.currentKey, record, timestamp)
    }
    backend.stateTouched()
  }

  /** Many elements at once, pre-aggregated: `count` elements whose windows are those of `ts`
    * (every element of the group has the same windows), folded into `partial`. Only for
    * pipelines where individual elements are indistinguishable to the trigger and to lateness:
    * see [[OperatorSpec.combinable]].
    */
  def processPartial(ts: Long, partial: Array[Accumulator], count: Long): Unit = {
    require(spec.combinable, s"processPartial needs a combinable pipeline, got $spec")
    keyState = backend.state
    paneClock = watermark
    metrics.elementsIn += count
    val windows = assigner.assignWindows(null, ts, ctx)
    var accepted = false
    val it = windows.iterator
    while (it.hasNext) {
      val w = it.next()
      if (!isWindowLate(w)) {
        accepted = true
        val meta = metaOf(w)
        var c = keyState.contents.get(w)
        if (c == null) {
          c = new WindowContents(partial.map(_.copy()), null)
          keyState.contents.put(w, c)
        } else Accumulator.mergeAll(c.accumulators, partial)
        meta.sinceLastPane += count
        ctx.bind(w, meta)
        act(trigger.onElement(null, ts, w, ctx), w, w, meta, cleanup = false)
        registerCleanupTimer(w, meta)
      }
    }
    if (!accepted) metrics.droppedLate += count
    backend.stateTouched()
  }

  private def add(stateWindow: Window, record: Record, ts: Long): Unit = {
    var c = keyState.contents.get(stateWindow)
    if (c == null) {
      c = newContents()
      keyState.contents.put(stateWindow, c)
    }
    if (spec.keepsElements) c.elements.add(Element(ts, backend.retain(record)))
    else {
      val accs = c.accumulators
      var i = 0
      while (i < accs.length) { accs(i).add(record, ts); i += 1 }
    }
  }

  private def newContents(): WindowContents =
    if (spec.keepsElements) new WindowContents(null, new JList[Element]())
    else new WindowContents(Accumulator.fresh(aggregates), null)

  private def metaOf(window: Window): WindowMeta = {
    var m = keyState.meta.get(window)
    if (m == null) {
      m = new WindowMeta(new Array[Any](spec.triggerSlots))
      m.createdLate = usesWatermark && window.maxTimestamp <= watermark
      keyState.meta.put(window, m)
      metrics.windowsOpened += 1
    }
    m
  }

  // ---------------------------------------------------------------------------------------
  // Time

  def advanceWatermark(wm: Long): Unit = {
    // Equal watermarks still poll: on Spark every key of a batch sees the same watermark.
    if (wm < watermark) return
    watermark = wm
    backend.fireDue(backend.eventTimers, wm)(onTimer(_, eventTime = true))
  }

  def advanceProcessingTime(time: Long): Unit = {
    if (time > processingTime) processingTime = time
    backend.fireDue(backend.processingTimers, processingTime)(onTimer(_, eventTime = false))
  }

  private def onTimer(timer: Timer, eventTime: Boolean): Unit = {
    keyState = backend.state
    val window = timer.window
    val cleanup = eventTime == isEventTime && timer.timestamp == cleanupTime(window)
    val meta = keyState.meta.get(window)
    var stateWindow = window
    if (merging != null) {
      stateWindow = keyState.mergingSet.stateWindow(window.asInstanceOf[TimeWindow])
      if (stateWindow == null) {
        // Merged away (its timers are stale), or closed by its trigger and now expiring.
        if (meta != null && meta.closed && cleanup) keyState.meta.remove(window)
        backend.stateTouched()
        return
      }
    }
    if (meta != null) {
      // This timer left the queue: the caches must not claim it is still there.
      if (eventTime && meta.queuedEventTimer == timer.timestamp) meta.queuedEventTimer = Long.MinValue
      if (cleanup) meta.queuedCleanupTimer = false
      paneClock =
        if (eventTime == usesWatermark) timer.timestamp
        else if (usesWatermark) watermark
        else processingTime
      if (meta.closed) {
        if (cleanup) clearAllState(window, stateWindow, meta)
      } else if (cleanup && beam) {
        // Beam's garbage collection: a last pane flushes what never fired; the trigger is
        // not asked (with no lateness this is also the on-time pane).
        fire(window, stateWindow, meta, isLast = true)
        clearAllState(window, stateWindow, meta)
      } else {
        ctx.bind(window, meta)
        val result =
          if (eventTime) trigger.onEventTime(timer.timestamp, window, ctx)
          else trigger.onProcessingTime(timer.timestamp, window, ctx)
        act(result, window, stateWindow, meta, cleanup)
        if (cleanup && (keyState.meta.get(window) eq meta)) {
          metrics.unfiredAtCleanup += meta.sinceLastPane
          clearAllState(window, stateWindow, meta)
        }
      }
    }
    backend.stateTouched()
  }

  // ---------------------------------------------------------------------------------------
  // Firing

  /** Applies a trigger decision. `cleanup`: the window is cleaned up right after. */
  private def act(
      result: TriggerResult,
      window: Window,
      stateWindow: Window,
      meta: WindowMeta,
      cleanup: Boolean
  ): Unit = {
    if (result.fire) fire(window, stateWindow, meta, isLast = cleanup || result.finish)
    if (result.purge) keyState.contents.remove(stateWindow)
    if (result.finish) closeWindow(window, stateWindow, meta)
  }

  /** A firing: decides whether a pane goes out, emits it, and resets what a pane resets.
    * Flink emits whenever the window has contents; Beam emits a pane with new elements, and
    * the on-time pane even without (it tells consumers the window is complete).
    */
  private def fire(window: Window, stateWindow: Window, meta: WindowMeta, isLast: Boolean): Unit = {
    val contents = keyState.contents.get(stateWindow)
    val timing = paneTiming(window, meta)
    val emitIt =
      if (beam) meta.sinceLastPane > 0 || timing == PaneTiming.OnTime
      else contents != null && !contents.isEmpty
    if (emitIt) {
      val pane = PaneInfo(timing, meta.paneIndex, meta.paneIndex == 0, isLast)
      meta.paneIndex += 1
      if (timing != PaneTiming.Early) meta.nonEarlyFired = true
      metrics.panesFired += 1
      emit(window, stateWindow, if (contents == null) newContents() else contents, pane)
    }
    meta.sinceLastPane = 0
    if (discarding) keyState.contents.remove(stateWindow)
  }

  private def emit(window: Window, stateWindow: Window, contents: WindowContents, pane: PaneInfo): Unit =
    spec.evictor match {
      case None if !spec.keepsElements =>
        output.emitResult(backend.currentKey, window, pane, Accumulator.results(contents.accumulators))
      case None =>
        output.emitElements(backend.currentKey, window, pane, contents.elements)
      case Some(evictor) =>
        val view = new JList[Element](contents.elements)
        evictor.evictBefore(view, window, ctx)
        spec.function match {
          case WindowFunction.Aggregates(_) =>
            val accs = Accumulator.fresh(aggregates)
            view.forEach { e =>
              var i = 0
              while (i < accs.length) { accs(i).add(e.record, e.timestamp); i += 1 }
            }
            output.emitResult(backend.currentKey, window, pane, Accumulator.results(accs))
          case WindowFunction.ProcessElements =>
            output.emitElements(backend.currentKey, window, pane, view)
        }
        evictor.evictAfter(view, window, ctx)
        // Evictions are permanent: the window keeps what survived.
        if (keyState.contents.get(stateWindow) eq contents) {
          if (view.isEmpty) keyState.contents.remove(stateWindow)
          else contents.elements = view
        }
    }

  /** Beam's timing rule: LATE after any on-time or late pane, EARLY before the window's end,
    * ON_TIME for the first pane after it, unless the window first appeared after its end had
    * passed (all its data was late): then LATE.
    */
  private def paneTiming(window: Window, meta: WindowMeta): PaneTiming =
    if (meta.nonEarlyFired) PaneTiming.Late
    else if (paneClock < window.maxTimestamp) PaneTiming.Early
    else if (meta.createdLate) PaneTiming.Late
    else PaneTiming.OnTime

  /** The trigger finished: the window is closed; its contents and trigger state go, and a
    * marker stays until cleanup so later elements for it are dropped (and counted).
    */
  private def closeWindow(window: Window, stateWindow: Window, meta: WindowMeta): Unit = {
    keyState.contents.remove(stateWindow)
    ctx.bind(window, meta)
    trigger.clear(window, ctx)
    java.util.Arrays.fill(meta.triggerState.asInstanceOf[Array[AnyRef]], null)
    meta.closed = true
    // A closed session takes no part in merging any more.
    if (merging != null) keyState.mergingSet.retireWindow(window.asInstanceOf[TimeWindow])
    // A window that never expires (the global window) stays closed for good.
  }

  private def clearAllState(window: Window, stateWindow: Window, meta: WindowMeta): Unit = {
    keyState.contents.remove(stateWindow)
    if (!meta.closed) {
      ctx.bind(window, meta)
      ctx.clearing = true
      try trigger.clear(window, ctx)
      finally ctx.clearing = false
      if (merging != null) keyState.mergingSet.retireWindow(window.asInstanceOf[TimeWindow])
    }
    keyState.meta.remove(window)
    metrics.windowsCleaned += 1
  }

  // ---------------------------------------------------------------------------------------
  // Lateness and cleanup

  private def cleanupTime(window: Window): Long =
    if (isEventTime) {
      val t = window.maxTimestamp + spec.allowedLateness
      if (t >= window.maxTimestamp) t else Long.MaxValue
    } else window.maxTimestamp

  private def isWindowLate(window: Window): Boolean =
    isEventTime && cleanupTime(window) <= watermark

  private def cleanupTimer(window: Window): Timer = {
    val t = cleanupTime(window)
    if (t == Long.MaxValue) null else Timer(t, backend.currentKeyId, window)
  }

  private def registerCleanupTimer(window: Window, meta: WindowMeta): Unit =
    if (!meta.queuedCleanupTimer) {
      val timer = cleanupTimer(window)
      if (timer != null) {
        if (isEventTime) backend.eventTimers.add(timer) else backend.processingTimers.add(timer)
      }
      meta.queuedCleanupTimer = true
    }

  private def deleteCleanupTimer(window: Window): Unit = {
    val timer = cleanupTimer(window)
    if (timer != null) {
      if (isEventTime) backend.eventTimers.remove(timer) else backend.processingTimers.remove(timer)
    }
  }

  // ---------------------------------------------------------------------------------------
  // Merging

  private val checkMerge: TimeWindow => Unit = merged =>
    if (isEventTime && merged.maxTimestamp + spec.allowedLateness <= watermark)
      throw new WindowMergeException(
        s"merging into $merged would move an event-time window's end behind the watermark " +
          s"$watermark (allowed lateness ${spec.allowedLateness} ms)"
      )
    else if (!isEventTime && merged.maxTimestamp <= processingTime)
      throw new WindowMergeException(
        s"merging into $merged would end a processing-time window before the current " +
          s"processing time $processingTime"
      )

  /** Sessions merged: the merged window is a new window (its pane numbering starts afresh,
    * as in Beam); the trigger merges its predecessors' state, their timers and cleanup go,
    * and their contents fold into the kept state window.
    */
  private val mergeWindows: (TimeWindow, Seq[TimeWindow], TimeWindow, Seq[TimeWindow]) => Unit =
    (merged, mergedWindows, stateWindow, mergedStateWindows) => {
      metrics.windowsMerged += mergedWindows.size
      val sources = mergedWindows.flatMap(w => Option(keyState.meta.get(w)))
      val target = metaOf(merged)
      target.sinceLastPane += sources.map(_.sinceLastPane).sum
      if (sources.nonEmpty) target.createdLate = sources.forall(_.createdLate)
      ctx.bindMerge(merged, target, sources)
      trigger.onMerge(merged, ctx)
      for (m <- mergedWindows) {
        val meta = keyState.meta.remove(m)
        if (meta != null) {
          metrics.windowsCleaned += 1 // its state is gone: merged into `merged`
          ctx.bind(m, meta)
          ctx.clearing = true
          try trigger.clear(m, ctx)
          finally ctx.clearing = false
        }
        deleteCleanupTimer(m)
      }
      for (sw <- mergedStateWindows) {
        val from = keyState.contents.remove(sw)
        if (from != null) {
          if (keyState.contents.get(stateWindow) == null) keyState.contents.put(stateWindow, from)
          else mergeContents(keyState.contents.get(stateWindow), from)
        }
      }
    }

  private def mergeContents(into: WindowContents, from: WindowContents): Unit =
    if (spec.keepsElements) into.elements.addAll(from.elements)
    else Accumulator.mergeAll(into.accumulators, from.accumulators)

  // ---------------------------------------------------------------------------------------
  // The one context object handed to assigners, triggers and evictors.

  private final class Context extends OnMergeContext with EvictorContext with WindowAssignerContext {
    private var w: Window = _
    private var meta: WindowMeta = _
    private var mergeSources: Seq[WindowMeta] = Nil
    var clearing = false

    def bind(window: Window, m: WindowMeta): Unit = { w = window; meta = m; mergeSources = Nil }

    def bindMerge(window: Window, m: WindowMeta, sources: Seq[WindowMeta]): Unit = {
      w = window; meta = m; mergeSources = sources
    }

    def window: Window = w
    def currentWatermark: Long = watermark
    def currentProcessingTime: Long = processingTime

    def registerEventTimeTimer(time: Long): Unit =
      if (meta == null || meta.queuedEventTimer != time) {
        metrics.timersRegistered += 1
        backend.eventTimers.add(Timer(time, backend.currentKeyId, w))
        if (meta != null) meta.queuedEventTimer = time
      }

    // The window's cleanup timer is the operator's: a trigger clearing its own timer at the
    // same instant must not cancel the cleanup while the window lives.
    def deleteEventTimeTimer(time: Long): Unit =
      if (clearing || !(isEventTime && time == cleanupTime(w))) {
        backend.eventTimers.remove(Timer(time, backend.currentKeyId, w))
        if (meta != null && meta.queuedEventTimer == time) meta.queuedEventTimer = Long.MinValue
        if (meta != null && isEventTime && time == cleanupTime(w)) meta.queuedCleanupTimer = false
      }

    def registerProcessingTimeTimer(time: Long): Unit = {
      metrics.timersRegistered += 1
      backend.processingTimers.add(Timer(time, backend.currentKeyId, w))
    }

    def deleteProcessingTimeTimer(time: Long): Unit =
      if (clearing || !(!isEventTime && time == cleanupTime(w))) {
        backend.processingTimers.remove(Timer(time, backend.currentKeyId, w))
        if (meta != null && !isEventTime && time == cleanupTime(w)) meta.queuedCleanupTimer = false
      }

    def getState(slot: Int): Any = meta.triggerState(slot)
    def setState(slot: Int, value: Any): Unit = meta.triggerState(slot) = value
    def mergedStates(slot: Int): Seq[Any] = mergeSources.map(_.triggerState(slot))
  }
}

object WindowOperator {

  /** Thrown when a session merge would produce a window that is already expired. */
  final class WindowMergeException(message: String) extends RuntimeException(message)
}
