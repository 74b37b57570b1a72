package sparkwin.operator.general

import java.util.{ArrayList => JList}

import sparkwin.core.{Element, Record}
import sparkwin.core.agg.Accumulator
import sparkwin.core.evictor.EvictorContext
import sparkwin.core.timer.TimerQueue
import sparkwin.core.trigger.{OnMergeContext, StateDescriptor, TriggerResult}
import sparkwin.core.window._
import sparkwin.operator._
import sparkwin.operator.WindowOperator.WindowMergeException
import sparkwin.operator.store.{KeyState, StateKind, WindowContents}

/** Flink's window operator as an algorithm: assigns elements to windows, merges sessions, runs
  * the trigger, evicts and aggregates, on any assigner and trigger. Lateness, late routing,
  * pane timing and counting are the shell's ([[WindowOperator]]).
  *
  * It works on one key at a time, the current key; the shell fires timers into [[onTimer]] with
  * their key current. Its state per key is a [[GeneralState]].
  */
final class GeneralAlgorithm(context: WindowContext) extends WindowAlgorithm {
  private val spec = context.spec
  private val metrics = context.metrics
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

  val stateKind: Option[StateKind] = Some(new GeneralStateKind(spec.aggregates, spec.triggerLayout))

  private var keyState: GeneralState = _
  private val binding = new Binding
  private val ctx = new Context(spec.triggerLayout.tree)
  // The time a pane's timing is judged by: the watermark (or processing time, for
  // processing-time windows) when an element fires, the timer's own time when a timer fires,
  // so a watermark that jumps past several timers still yields EARLY panes for the early ones.
  private val usesWatermark = assigner.panesByWatermark
  private var paneClock = Long.MinValue

  private def watermark = context.currentWatermark
  private def processingTime = context.currentProcessingTime

  private def load(): Unit = keyState = context.state.asInstanceOf[GeneralState]

  // ---------------------------------------------------------------------------------------
  // Reading a state

  /** Every window with metadata (the live ones, closed ones until cleanup), each with the
    * contents its state window holds: what its next pane would carry before any eviction.
    */
  override def openWindows(state: KeyState, eventTimers: TimerQueue): Seq[OpenWindow] = {
    val st = state.asInstanceOf[GeneralState]
    val layout = spec.triggerLayout
    val out = Seq.newBuilder[OpenWindow]
    st.meta.forEach { (w, meta) =>
      val stateWindow =
        if (st.merging == null) w
        else Option(st.merging.stateWindow(w.asInstanceOf[TimeWindow])).getOrElse(w)
      val contents = st.contents.get(stateWindow)
      val elements = if (contents == null || contents.elements == null) -1L else contents.elements.size.toLong
      val results =
        if (spec.function == WindowFunction.ProcessElements) null
        else if (contents == null) OpenWindow.resultsOf(Accumulator.fresh(aggregates), spec.ansi)
        else if (contents.accumulators != null) OpenWindow.resultsOf(contents.accumulators, spec.ansi)
        else OpenWindow.resultsOver(aggregates, contents.elements, spec.ansi)
      val slots = layout.names.indices.collect {
        case i if meta.triggerState(i) != null => layout.names(i) -> meta.triggerState(i)
      }
      out += OpenWindow(w, results, elements, meta.paneIndex, meta.nonEarlyFired, meta.closed, slots)
    }
    out.result().sortBy(o => (o.window.maxTimestamp, o.window.toString))
  }

  // ---------------------------------------------------------------------------------------
  // Elements

  def processElement(record: Record, timestamp: Long): Unit = {
    load()
    paneClock = if (usesWatermark) watermark else processingTime
    val windows = assigner.assignWindows(record, timestamp, ctx)
    if (windows.isEmpty) {
      // As in Flink: an element in no window (a gap of sliding windows) that is late by its own
      // time goes where late elements go; otherwise it is counted as in no window.
      if (lateByItsTime(timestamp)) context.late(record, timestamp) else context.droppedNoWindow()
      return
    }
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
        if (context.isLate(actual)) { set.retireWindow(actual.asInstanceOf[TimeWindow]); late = true }
        else stateWindow = set.stateWindow(actual.asInstanceOf[TimeWindow])
      } else late = context.isLate(w)
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
      if (closed) context.droppedClosedWindow()
      else context.late(record, timestamp)
    }
    context.stateTouched()
  }

  /** Many elements at once, pre-aggregated: `count` elements whose windows are those of `ts`
    * (every element of the group has the same windows). Only for pipelines where individual
    * elements are indistinguishable to the trigger and to lateness ([[Selection.combinable]]).
    */
  override def processPartial(ts: Long, partial: Array[Accumulator], count: Long): Unit = {
    load()
    paneClock = watermark
    val windows = assigner.assignWindows(null, ts, ctx)
    var accepted = false
    val it = windows.iterator
    while (it.hasNext) {
      val w = it.next()
      if (!context.isLate(w)) {
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
    if (!accepted) {
      if (windows.isEmpty && !lateByItsTime(ts)) metrics.droppedNoWindow += count
      else context.lateGroup(count)
    }
    context.stateTouched()
  }

  /** Flink's `isElementLate`: event time, and `ts + allowedLateness` at or behind the watermark. */
  private def lateByItsTime(ts: Long): Boolean = context.isLateAt(ts)

  private def add(stateWindow: Window, record: Record, ts: Long): Unit = {
    var c = keyState.contents.get(stateWindow)
    if (c == null) {
      c = newContents()
      keyState.contents.put(stateWindow, c)
    }
    if (spec.keepsElements) c.elements.add(Element(ts, context.retain(record)))
    else Accumulator.addAll(c.accumulators, record, ts)
  }

  private def newContents(): WindowContents =
    if (spec.keepsElements) new WindowContents(null, new JList[Element]())
    else new WindowContents(Accumulator.fresh(aggregates), null)

  private def metaOf(window: Window): WindowMeta = {
    var m = keyState.meta.get(window)
    if (m == null) {
      m = new WindowMeta(new Array[Any](spec.triggerLayout.slots))
      m.createdLate = usesWatermark && window.maxTimestamp <= watermark
      keyState.meta.put(window, m)
      metrics.windowsOpened += 1
    }
    m
  }

  // ---------------------------------------------------------------------------------------
  // Time

  def onTimer(time: Long, window: Window, eventTime: Boolean): Unit = {
    load()
    val cleanup = eventTime == isEventTime && time == context.cleanupTime(window)
    val meta = keyState.meta.get(window)
    var stateWindow = window
    if (merging != null) {
      stateWindow = keyState.mergingSet.stateWindow(window.asInstanceOf[TimeWindow])
      if (stateWindow == null) {
        // Merged away (its timers are stale), or closed by its trigger and now expiring.
        if (meta != null && meta.closed && cleanup) keyState.meta.remove(window)
        context.stateTouched()
        return
      }
    }
    if (meta != null) {
      // This timer left the queue: the caches must not claim it is still there.
      if (eventTime && meta.queuedEventTimer == time) meta.queuedEventTimer = Long.MinValue
      if (cleanup) meta.queuedCleanupTimer = false
      paneClock =
        if (eventTime == usesWatermark) time
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
          if (eventTime) trigger.onEventTime(time, window, ctx)
          else trigger.onProcessingTime(time, window, ctx)
        act(result, window, stateWindow, meta, cleanup)
        if (cleanup && (keyState.meta.get(window) eq meta)) {
          metrics.unfiredAtCleanup += meta.sinceLastPane
          clearAllState(window, stateWindow, meta)
        }
      }
    }
    context.stateTouched()
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
    val timing = context.paneTiming(window, paneClock, meta.nonEarlyFired, meta.createdLate)
    val emitIt =
      if (beam) meta.sinceLastPane > 0 || timing == PaneTiming.OnTime
      else contents != null && !contents.isEmpty
    if (emitIt) {
      val pane = PaneInfo(timing, meta.paneIndex, meta.paneIndex == 0, isLast)
      meta.paneIndex += 1
      if (timing != PaneTiming.Early) meta.nonEarlyFired = true
      emit(window, stateWindow, if (contents == null) newContents() else contents, pane)
    }
    meta.sinceLastPane = 0
    if (discarding) keyState.contents.remove(stateWindow)
  }

  private def emit(window: Window, stateWindow: Window, contents: WindowContents, pane: PaneInfo): Unit =
    if (!spec.keepsElements) context.emitResult(window, pane, Accumulator.results(contents.accumulators))
    else if (spec.evictor.isEmpty) emitOver(window, pane, contents.elements)
    else {
      val evictor = spec.evictor.get
      val view = new JList[Element](contents.elements)
      evictor.evictBefore(view, window, ctx)
      emitOver(window, pane, view)
      evictor.evictAfter(view, window, ctx)
      // Evictions are permanent: the window keeps what survived.
      if (keyState.contents.get(stateWindow) eq contents) {
        if (view.isEmpty) keyState.contents.remove(stateWindow)
        else contents.elements = view
      }
    }

  /** A pane over kept `elements`: the aggregates' result (then the elements, when the runtime
    * aggregates them too), or the elements for a process function.
    */
  private def emitOver(window: Window, pane: PaneInfo, elements: JList[Element]): Unit =
    spec.function match {
      case WindowFunction.Aggregates(_) =>
        val accs = Accumulator.fresh(aggregates)
        elements.forEach(e => Accumulator.addAll(accs, e.record, e.timestamp))
        context.emitResult(window, pane, Accumulator.results(accs))
        if (spec.emitsElements) context.emitElements(window, pane, elements)
      case WindowFunction.ProcessElements =>
        context.emitElements(window, pane, elements)
    }

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
      binding.clearing = true
      try trigger.clear(window, ctx)
      finally binding.clearing = false
      if (merging != null) keyState.mergingSet.retireWindow(window.asInstanceOf[TimeWindow])
    }
    keyState.meta.remove(window)
    metrics.windowsCleaned += 1
  }

  // ---------------------------------------------------------------------------------------
  // Cleanup timers

  // A window whose cleanup time overflows is never cleaned up: it gets no timer.
  private def registerCleanupTimer(window: Window, meta: WindowMeta): Unit =
    if (!meta.queuedCleanupTimer) {
      val t = context.cleanupTime(window)
      if (t != Long.MaxValue) context.timers.register(isEventTime, t, window)
      meta.queuedCleanupTimer = true
    }

  private def deleteCleanupTimer(window: Window): Unit = {
    val t = context.cleanupTime(window)
    if (t != Long.MaxValue) context.timers.delete(isEventTime, t, window)
  }

  // ---------------------------------------------------------------------------------------
  // Merging

  private val checkMerge: TimeWindow => Unit = merged =>
    if (context.isLate(merged))
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
          binding.clearing = true
          try trigger.clear(m, ctx)
          finally binding.clearing = false
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
  // The contexts handed to assigners, triggers and evictors: one per node of the trigger tree,
  // all reading the window and metadata the algorithm bound last.

  /** What the contexts act on: the window, its metadata, the metadata merged into it. */
  private final class Binding {
    var window: Window = _
    var meta: WindowMeta = _
    var mergeSources: Seq[WindowMeta] = Nil
    var clearing = false
  }

  private final class Context(node: sparkwin.core.trigger.TriggerLayout.Node)
      extends OnMergeContext
      with EvictorContext
      with WindowAssignerContext {
    private val children = node.children.map(new Context(_))

    def bind(window: Window, m: WindowMeta): Unit = {
      binding.window = window; binding.meta = m; binding.mergeSources = Nil
    }

    def bindMerge(window: Window, m: WindowMeta, sources: Seq[WindowMeta]): Unit = {
      binding.window = window; binding.meta = m; binding.mergeSources = sources
    }

    def child(i: Int): Context = children(i)
    def window: Window = binding.window
    def currentWatermark: Long = watermark
    def currentProcessingTime: Long = processingTime

    def registerEventTimeTimer(time: Long): Unit = {
      val meta = binding.meta
      if (meta == null || meta.queuedEventTimer != time) {
        context.timers.registerEventTime(time, binding.window)
        if (meta != null) meta.queuedEventTimer = time
      }
    }

    // The window's cleanup timer is the operator's: a trigger clearing its own timer at the
    // same instant must not cancel the cleanup while the window lives.
    def deleteEventTimeTimer(time: Long): Unit = {
      val w = binding.window
      val meta = binding.meta
      if (binding.clearing || !(isEventTime && time == context.cleanupTime(w))) {
        context.timers.deleteEventTime(time, w)
        if (meta != null && meta.queuedEventTimer == time) meta.queuedEventTimer = Long.MinValue
        if (meta != null && isEventTime && time == context.cleanupTime(w)) meta.queuedCleanupTimer = false
      }
    }

    def registerProcessingTimeTimer(time: Long): Unit =
      context.timers.registerProcessingTime(time, binding.window)

    def deleteProcessingTimeTimer(time: Long): Unit = {
      val w = binding.window
      val meta = binding.meta
      if (binding.clearing || !(!isEventTime && time == context.cleanupTime(w))) {
        context.timers.deleteProcessingTime(time, w)
        if (meta != null && !isEventTime && time == context.cleanupTime(w)) meta.queuedCleanupTimer = false
      }
    }

    def get(state: StateDescriptor): Any = binding.meta.triggerState(node.slotOf(state))
    def set(state: StateDescriptor, value: Any): Unit = binding.meta.triggerState(node.slotOf(state)) = value
    def mergedStates(state: StateDescriptor): Seq[Any] = {
      val slot = node.slotOf(state)
      binding.mergeSources.map(_.triggerState(slot))
    }
  }
}
