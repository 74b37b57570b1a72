package sparkwin.operator.storm

import java.io.{DataInputStream, DataOutputStream}
import java.util.{ArrayList => JList}

import sparkwin.core.{Element, Record}
import sparkwin.core.agg.{Accumulator, Aggregate}
import sparkwin.core.window.{GlobalWindow, StormSize, StormWindow, StormWindows, Window}
import sparkwin.operator.{OpenWindow, PaneInfo, Selection, WindowAlgorithm, WindowContext, WindowFunction}
import sparkwin.operator.store._

/** Storm's per-key window manager state: queued tuples in arrival order and the policies'
  * positions (next window end, last counted timestamp, tuples processed last time, and the
  * wake-up timer that brings the key back when the watermark reaches its next window).
  */
final class StormState extends KeyState {
  val queue = new JList[Element]()
  var nextWindowEnd: Long = Long.MinValue
  var lastProcessed: Long = Long.MinValue
  var processedLast: Long = 0L
  var previousWindow: java.util.List[Element] = java.util.Collections.emptyList()
  var wakeAt: Long = Long.MinValue

  def isEmpty: Boolean = queue.isEmpty && wakeAt == Long.MinValue
  def numEntries: Int = queue.size

  // An empty queue still holds the policies' positions, which a new key must not inherit.
  override def reset(): Unit = {
    nextWindowEnd = Long.MinValue
    lastProcessed = Long.MinValue
    processedLast = 0L
    previousWindow = java.util.Collections.emptyList()
  }
}

/** Storm's event-time windowing (BaseWindowedBolt with a timestamp field) as an algorithm, per
  * key.
  *
  * Tuples queue in arrival order. When the watermark passes a window's end the queue is
  * scanned in arrival order: a tuple beyond `end + lag` stops the scan, one within the lag
  * waits for a later window, one too old for the window's length expires, the rest form the
  * window `(end - length, end]`. Time slides advance window ends by the slide and, after an
  * empty window, jump to the slide-aligned end of the next queued tuple; count slides fire
  * at every `slide`-th tuple at or before the watermark. A tuple older than the watermark is
  * late (Storm's rule). Each window fires once (one ON_TIME, first and last pane).
  *
  * Unlike Storm, the first window end is the aligned end of the earliest tuple (Storm starts
  * its search at time 0, which mistreats negative timestamps), and a count-length window that
  * would repeat unchanged with no newer tuple queued is not re-emitted for every slide step.
  */
final class StormAlgorithm(context: WindowContext, storm: StormWindows) extends WindowAlgorithm {
  private val aggregates = context.spec.aggregates.toArray
  private val lag = storm.lag

  val stateKind: Option[StateKind] = Some(StormStateKind)

  private def watermark: Long = context.currentWatermark

  /** Storm keeps tuples, not windows: one row for the key's queue, its end where the key next
    * fires (or its latest tuple), its values what the queued tuples add up to.
    */
  override def openWindows(state: KeyState, eventTimers: sparkwin.core.timer.TimerQueue): Seq[OpenWindow] = {
    val st = state.asInstanceOf[StormState]
    StormPanes.openWindows(context, aggregates, st.queue, st.wakeAt)
  }

  def processElement(record: Record, timestamp: Long): Unit = {
    if (timestamp < watermark) {
      context.late(record, timestamp)
    } else {
      val st = context.state.asInstanceOf[StormState]
      st.queue.add(Element(timestamp, context.retain(record)))
      scheduleWake(st)
    }
    context.stateTouched()
  }

  def onTimer(time: Long, window: Window, eventTime: Boolean): Unit = {
    val st = context.state.asInstanceOf[StormState]
    st.wakeAt = Long.MinValue
    storm.slide match {
      case StormSize.Duration(s) => slideByTime(st, s)
      case StormSize.Count(s) => slideByCount(st, s)
    }
    scheduleWake(st)
    context.stateTouched()
  }

  // ---------------------------------------------------------------------------------------
  // Trigger policies

  /** WatermarkTimeTriggerPolicy: every window end up to the watermark, in order. */
  private def slideByTime(st: StormState, slide: Long): Unit = {
    var end = st.nextWindowEnd
    if (end == Long.MinValue) {
      val first = earliestAfter(st, Long.MinValue)
      if (first == Long.MaxValue || first > watermark) return
      end = alignUp(first, slide)
    }
    var going = true
    while (going && end <= watermark) {
      val window = contentsAt(st, end)
      if (!window.isEmpty) {
        if (isCountLength && window == st.previousWindow && earliestAfter(st, end) == Long.MaxValue)
          going = false // it would only repeat until newer tuples arrive
        else {
          emit(end, window)
          st.previousWindow = window
          if (end > Long.MaxValue - slide) going = false else end += slide
        }
      } else {
        st.previousWindow = java.util.Collections.emptyList()
        val next = earliestAfter(st, end)
        // Long.MaxValue: nothing queued after this end (the watermark may be +infinity).
        if (next == Long.MaxValue || next > watermark) going = false
        else end = alignUp(next, slide)
      }
    }
    st.nextWindowEnd = end
  }

  /** WatermarkCountTriggerPolicy: a window at every `slide`-th tuple with a timestamp after the
    * last window's reference and at or before the watermark (arrival order); its reference is
    * the largest timestamp counted so far.
    */
  private def slideByCount(st: StormState, slide: Long): Unit = {
    val refs = List.newBuilder[Long]
    var n = 0L
    var max = Long.MinValue
    st.queue.forEach { e =>
      if (e.timestamp > st.lastProcessed && e.timestamp <= watermark) {
        n += 1
        if (e.timestamp > max) max = e.timestamp
        if (n % slide == 0) refs += max
      }
    }
    for (ref <- refs.result()) {
      val window = storm.length match {
        case StormSize.Duration(len) => scanByTime(st, ref, len)
        case StormSize.Count(len) =>
          val w = scanByCount(st, ref, len, st.processedLast + slide)
          st.processedLast = w.size
          w
      }
      if (!window.isEmpty) emit(ref, window)
      st.lastProcessed = ref
    }
  }

  // ---------------------------------------------------------------------------------------
  // Eviction policies

  private def isCountLength: Boolean = storm.length.isInstanceOf[StormSize.Count]

  private def contentsAt(st: StormState, end: Long): JList[Element] = storm.length match {
    case StormSize.Duration(len) => scanByTime(st, end, len)
    case StormSize.Count(len) =>
      var atOrBefore = 0L
      st.queue.forEach(e => if (e.timestamp <= end) atOrBefore += 1)
      scanByCount(st, end, len, atOrBefore)
  }

  /** WatermarkTimeEvictionPolicy: `(end - length, end]`, scanning in arrival order. */
  private def scanByTime(st: StormState, end: Long, length: Long): JList[Element] = {
    val window = new JList[Element]()
    val stopAfter = if (end > Long.MaxValue - lag) Long.MaxValue else end + lag
    val expireAtOrBefore = if (end < Long.MinValue + length) Long.MinValue else end - length
    val it = st.queue.iterator()
    var scanning = true
    while (scanning && it.hasNext) {
      val e = it.next()
      if (e.timestamp > stopAfter) scanning = false
      else if (e.timestamp > end) () // within the lag: waits for a later window
      else if (e.timestamp <= expireAtOrBefore) it.remove()
      else window.add(e)
    }
    window
  }

  /** WatermarkCountEvictionPolicy: of the tuples at or before `ref`, the last `length` (in
    * arrival order); older ones beyond the count expire.
    */
  private def scanByCount(st: StormState, ref: Long, length: Long, count: Long): JList[Element] = {
    val window = new JList[Element]()
    var current = count
    val it = st.queue.iterator()
    while (it.hasNext) {
      val e = it.next()
      if (e.timestamp <= ref && window.size < current) {
        if (current > length) { current -= 1; it.remove() }
        else window.add(e)
      }
    }
    window
  }

  // ---------------------------------------------------------------------------------------

  private def emit(end: Long, elements: JList[Element]): Unit = {
    val start = storm.length match {
      case StormSize.Duration(len) => end - len
      case StormSize.Count(_) => Long.MinValue
    }
    StormPanes.emit(context, aggregates, StormWindow(start, end), elements)
  }

  /** The smallest queued timestamp strictly after `t`, or Long.MaxValue. */
  private def earliestAfter(st: StormState, t: Long): Long = {
    var min = Long.MaxValue
    st.queue.forEach(e => if (e.timestamp > t && e.timestamp < min) min = e.timestamp)
    min
  }

  private def alignUp(t: Long, slide: Long): Long = {
    val r = java.lang.Math.floorMod(t, slide)
    if (r == 0) t else if (t > Long.MaxValue - (slide - r)) Long.MaxValue else t + (slide - r)
  }

  /** One timer per key brings it back when the watermark reaches its next possible window. */
  private def scheduleWake(st: StormState): Unit = {
    val next =
      if (st.queue.isEmpty) Long.MinValue
      else
        storm.slide match {
          case StormSize.Duration(s) =>
            if (st.nextWindowEnd == Long.MinValue) alignUp(earliestAfter(st, Long.MinValue), s)
            else if (st.nextWindowEnd > watermark) st.nextWindowEnd
            else {
              val after = earliestAfter(st, st.nextWindowEnd)
              if (after == Long.MaxValue) Long.MinValue
              else if (isCountLength) st.nextWindowEnd
              else alignUp(after, s)
            }
          case StormSize.Count(s) =>
            val candidates = new java.util.ArrayList[java.lang.Long]()
            st.queue.forEach(e => if (e.timestamp > st.lastProcessed) candidates.add(e.timestamp))
            if (candidates.size < s) Long.MinValue
            else { candidates.sort(null); candidates.get((s - 1).toInt).longValue }
        }
    if (next != st.wakeAt) {
      if (st.wakeAt != Long.MinValue) context.timers.deleteEventTime(st.wakeAt, GlobalWindow)
      if (next != Long.MinValue) context.timers.registerEventTime(next, GlobalWindow)
      st.wakeAt = next
    }
  }
}

/** A Storm window's one pane (both Storm algorithms): its aggregates, or its elements. */
object StormPanes {

  /** What a key's queue holds, for the state reader (both Storm algorithms): one row, its end
    * where the key next fires (`wakeAt`, else its latest tuple), its values what the queued
    * tuples add up to.
    */
  def openWindows(
      context: WindowContext,
      aggregates: Array[Aggregate],
      queue: JList[Element],
      wakeAt: Long
  ): Seq[OpenWindow] =
    if (queue.isEmpty) Seq.empty
    else {
      var latest = Long.MinValue
      queue.forEach(e => latest = math.max(latest, e.timestamp))
      val end = if (wakeAt != Long.MinValue) wakeAt else latest
      val results =
        if (context.spec.function == WindowFunction.ProcessElements) null
        else OpenWindow.resultsOver(aggregates, queue, context.spec.ansi)
      Seq(OpenWindow(StormWindow(Long.MinValue, end), results, queue.size.toLong, 0L, false, false, Nil))
    }

  def emit(
      context: WindowContext,
      aggregates: Array[Aggregate],
      window: StormWindow,
      elements: JList[Element]
  ): Unit =
    context.spec.function match {
      case WindowFunction.Aggregates(_) =>
        val accs = Accumulator.fresh(aggregates)
        elements.forEach(e => Accumulator.addAll(accs, e.record, e.timestamp))
        context.emitResult(window, PaneInfo.Only, Accumulator.results(accs))
        if (context.spec.emitsElements)
          context.emitElements(window, PaneInfo.Only, new JList[Element](elements))
      case WindowFunction.ProcessElements =>
        context.emitElements(window, PaneInfo.Only, new JList[Element](elements))
    }
}

/** Storm states in the store: the queue and the policies' positions. */
object StormStateKind extends StateKind {
  def algorithm: Selection.Algorithm = Selection.Algorithm.Storm

  def newState(): KeyState = new StormState

  def write(out: DataOutputStream, state: KeyState): Unit = {
    val st = state.asInstanceOf[StormState]
    KeyStateCodec.writeElements(out, st.queue)
    out.writeLong(st.nextWindowEnd)
    out.writeLong(st.lastProcessed)
    out.writeLong(st.processedLast)
    KeyStateCodec.writeElements(out, st.previousWindow)
    out.writeLong(st.wakeAt)
  }

  def read(in: DataInputStream): KeyState = {
    val st = new StormState
    st.queue.addAll(KeyStateCodec.readElements(in))
    st.nextWindowEnd = in.readLong()
    st.lastProcessed = in.readLong()
    st.processedLast = in.readLong()
    st.previousWindow = KeyStateCodec.readElements(in)
    st.wakeAt = in.readLong()
    st
  }

  def fromLegacy(legacy: LegacyState): KeyState = {
    val st = new StormState
    val old = legacy.storm
    if (old != null) {
      st.queue.addAll(old.queue)
      st.nextWindowEnd = old.nextWindowEnd
      st.lastProcessed = old.lastProcessed
      st.processedLast = old.processedLast
      st.previousWindow = old.previousWindow
      st.wakeAt = old.wakeAt
    }
    if (!legacy.contents.isEmpty || !legacy.meta.isEmpty)
      throw new IllegalStateException(
        "this checkpoint's state holds Flink-style windows, but the pipeline now uses Storm " +
          "windows: start the query from a new checkpoint"
      )
    st
  }
}
