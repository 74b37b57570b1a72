package sparkwin.operator.storm

import java.io.{DataInputStream, DataOutputStream}
import java.util.{ArrayList => JList}

import sparkwin.core.{Element, Record}
import sparkwin.core.window.{GlobalWindow, StormSize, StormWindow, StormWindows, Window}
import sparkwin.operator.{OpenWindow, Selection, WindowAlgorithm, WindowContext}
import sparkwin.operator.store._

/** A key's tuples in arrival order, each stamped with the processing time it arrived at, and
  * the trigger policies' positions: tuples since the last count trigger, whether one arrived
  * since the last window, and the processing-time timer of a duration slide.
  */
final class StormArrivalState extends KeyState {
  val queue = new JList[Element]()
  var sinceTrigger: Long = 0L
  var fresh: Boolean = false
  var wakeAt: Long = Long.MinValue

  def isEmpty: Boolean = queue.isEmpty && wakeAt == Long.MinValue
  def numEntries: Int = queue.size

  override def reset(): Unit = { sinceTrigger = 0L; fresh = false }
}

/** Storm's windows without a timestamp field (BaseWindowedBolt's default): in arrival order and
  * processing time, per key, with no watermark and nothing late.
  *
  * A count slide fires at every `slide`-th tuple as it arrives (CountTriggerPolicy); a duration
  * slide fires on processing-time timers every `slide` ms, at multiples of it
  * (TimeTriggerPolicy). Each firing first expires tuples: beyond the last `length` for a count
  * length (CountEvictionPolicy), arrived at or before `now - length` for a duration length
  * (TimeEvictionPolicy); what is left is the window `(now - length, now]` (no start for counts),
  * emitted unless empty. Tuples arriving at the moment of a firing belong to the next one (on
  * Spark a batch's timers fire before its rows).
  *
  * As in the event-time algorithm, a count-length window on a duration slide is not re-emitted
  * unchanged when no tuple arrived since it fired: Storm repeats it every slide forever.
  */
final class StormArrival(context: WindowContext, storm: StormWindows) extends WindowAlgorithm {
  private val aggregates = context.spec.aggregates.toArray

  val stateKind: Option[StateKind] = Some(StormArrivalStateKind)

  private def now: Long = context.currentProcessingTime

  /** Storm keeps tuples, not windows: one row for the key's queue, its end where the key next
    * fires (or its latest tuple), its values what the queued tuples add up to.
    */
  override def openWindows(state: KeyState, eventTimers: sparkwin.core.timer.TimerQueue): Seq[OpenWindow] = {
    val st = state.asInstanceOf[StormArrivalState]
    StormPanes.openWindows(context, aggregates, st.queue, st.wakeAt)
  }

  def processElement(record: Record, timestamp: Long): Unit = {
    val st = context.state.asInstanceOf[StormArrivalState]
    val at = now
    st.queue.add(Element(at, context.retain(record)))
    st.fresh = true
    storm.slide match {
      case StormSize.Count(s) =>
        st.sinceTrigger += 1
        if (st.sinceTrigger >= s) { st.sinceTrigger = 0L; fire(st, at) }
        // A duration length expires tuples on time too, so an idle key's state goes.
        storm.length match {
          case StormSize.Duration(len) if st.wakeAt == Long.MinValue && !st.queue.isEmpty =>
            wake(st, st.queue.get(0).timestamp + len)
          case _ =>
        }
      case StormSize.Duration(s) =>
        if (st.wakeAt == Long.MinValue) wake(st, nextMultiple(at, s))
    }
    context.stateTouched()
  }

  def onTimer(time: Long, window: Window, eventTime: Boolean): Unit = {
    val st = context.state.asInstanceOf[StormArrivalState]
    st.wakeAt = Long.MinValue
    storm.slide match {
      case StormSize.Duration(slide) =>
        fire(st, time)
        // The next firing while something is left to fire; a count length only after new tuples.
        if (!st.queue.isEmpty && (storm.length.isInstanceOf[StormSize.Duration] || st.fresh))
          wake(st, time + slide)
      case StormSize.Count(_) => // a duration length's expiry: no window fires on time alone
        val len = storm.length.asInstanceOf[StormSize.Duration].millis
        expire(st, time)
        if (!st.queue.isEmpty) wake(st, st.queue.get(0).timestamp + len)
    }
    context.stateTouched()
  }

  /** Drops what the eviction policy expires at `at`; returns the window's start. */
  private def expire(st: StormArrivalState, at: Long): Long = storm.length match {
    case StormSize.Count(len) =>
      while (st.queue.size > len) st.queue.remove(0)
      Long.MinValue
    case StormSize.Duration(len) =>
      st.queue.removeIf(e => e.timestamp <= at - len)
      at - len
  }

  /** Expires, then emits what is left. */
  private def fire(st: StormArrivalState, at: Long): Unit = {
    val start = expire(st, at)
    if (!st.queue.isEmpty && (st.fresh || storm.length.isInstanceOf[StormSize.Duration])) {
      st.fresh = false
      StormPanes.emit(context, aggregates, StormWindow(start, at), st.queue)
    }
  }

  /** The first multiple of `slide` after `t`: a tuple arriving at a firing's instant waits. */
  private def nextMultiple(t: Long, slide: Long): Long = Math.floorDiv(t, slide) * slide + slide

  private def wake(st: StormArrivalState, at: Long): Unit = {
    context.timers.registerProcessingTime(at, GlobalWindow)
    st.wakeAt = at
  }
}

/** Arrival-order Storm states in the store: the queue and the policies' positions. */
object StormArrivalStateKind extends StateKind {
  def algorithm: Selection.Algorithm = Selection.Algorithm.StormArrival

  def newState(): KeyState = new StormArrivalState

  def write(out: DataOutputStream, state: KeyState): Unit = {
    val st = state.asInstanceOf[StormArrivalState]
    KeyStateCodec.writeElements(out, st.queue)
    out.writeLong(st.sinceTrigger)
    out.writeBoolean(st.fresh)
    out.writeLong(st.wakeAt)
  }

  def read(in: DataInputStream): KeyState = {
    val st = new StormArrivalState
    st.queue.addAll(KeyStateCodec.readElements(in))
    st.sinceTrigger = in.readLong()
    st.fresh = in.readBoolean()
    st.wakeAt = in.readLong()
    st
  }

  def fromLegacy(legacy: LegacyState): KeyState =
    throw new IllegalStateException(
      "this checkpoint's state was written before Storm's arrival-order windows existed: start " +
        "the query from a new checkpoint"
    )
}
