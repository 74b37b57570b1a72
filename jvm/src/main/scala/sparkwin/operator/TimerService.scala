package sparkwin.operator

import sparkwin.core.timer.{TimeHeap, Timer, TimerQueue}
import sparkwin.core.window.Window
import sparkwin.operator.store.KeyedBackend

/** The operator's timers, in one place (Flink SQL's window timer service plays this part): the
  * algorithm registers and deletes the current key's timers on either clock; the shell asks when
  * the next one is due and fires the due ones, each with its key current, into the algorithm's
  * [[WindowAlgorithm.onTimer]]. Timers are unique per (key, window, time), registering twice
  * fires once, a deleted timer never fires, and they fire by time, then key, then window.
  *
  * `timersRegistered` counts timers newly queued; registering a timer that is already queued
  * changes nothing and counts nothing. The packed layouts keep a key's timer by dense key id
  * ([[registerKeyTimer]]) instead of as a [[Timer]] object per window.
  */
final class TimerService(backend: KeyedBackend, metrics: OperatorMetrics) {

  // Timers the packed layouts keep by key id: event time only, made on first use.
  private var keyTimers: TimeHeap = null

  /** An event-time timer of the current key for `window` at `time`; whether it is new. */
  def registerEventTime(time: Long, window: Window): Boolean =
    counted(backend.eventTimers.add(Timer(time, backend.currentKeyId, window)))

  def deleteEventTime(time: Long, window: Window): Unit =
    backend.eventTimers.remove(Timer(time, backend.currentKeyId, window))

  /** A processing-time timer of the current key for `window` at `time`; whether it is new. */
  def registerProcessingTime(time: Long, window: Window): Boolean =
    counted(backend.processingTimers.add(Timer(time, backend.currentKeyId, window)))

  def deleteProcessingTime(time: Long, window: Window): Unit =
    backend.processingTimers.remove(Timer(time, backend.currentKeyId, window))

  /** A timer on the clock of `eventTime` (the assigner's, for cleanup timers). */
  def register(eventTime: Boolean, time: Long, window: Window): Boolean =
    if (eventTime) registerEventTime(time, window) else registerProcessingTime(time, window)

  def delete(eventTime: Boolean, time: Long, window: Window): Unit =
    if (eventTime) deleteEventTime(time, window) else deleteProcessingTime(time, window)

  /** An event-time timer of the current key at `time` with no window, kept as a (time, key id)
    * pair: for the packed layouts, whose key ids are dense. It cannot be deleted: a key that
    * moves its timer earlier leaves the old one queued, and the algorithm skips it when it fires
    * (its window is null).
    */
  def registerKeyTimer(time: Long): Unit = {
    if (keyTimers == null) keyTimers = new TimeHeap
    keyTimers.push(time, backend.currentKeyId.toInt)
    metrics.timersRegistered += 1
  }

  /** When the next timer on the clock is due; Long.MaxValue when none is queued. */
  def nextTime(eventTime: Boolean): Long =
    if (!eventTime) backend.processingTimers.nextTime
    else {
      val queued = backend.eventTimers.nextTime
      if (keyTimers == null || keyTimers.isEmpty) queued else math.min(queued, keyTimers.minTime)
    }

  /** When the last queued processing-time timer is due; Long.MinValue when none is queued (a
    * bounded input's end fires every pending one at once).
    */
  def lastProcessingTime: Long = {
    var last = Long.MinValue
    backend.processingTimers.iterator.foreach(t => if (t.timestamp > last) last = t.timestamp)
    last
  }

  def nextEventTime: Long = nextTime(eventTime = true)
  def nextProcessingTime: Long = nextTime(eventTime = false)

  /** Fires every timer on the clock due at `time`, in order, each with its key current, into
    * `algorithm`; timers it registers that are due by then fire in the same pass.
    */
  def fireDue(eventTime: Boolean, time: Long, algorithm: WindowAlgorithm): Unit = {
    val queue = if (eventTime) backend.eventTimers else backend.processingTimers
    if (eventTime && keyTimers != null) fireWithKeyTimers(queue, time, algorithm)
    else {
      var t = queue.pollDue(time)
      while (t != null) {
        backend.switchTo(t.keyId)
        algorithm.onTimer(t.timestamp, t.window, eventTime)
        t = queue.pollDue(time)
      }
    }
  }

  // Both kinds, merged by time (a queued timer first at equal times); in practice a layout
  // uses one kind only.
  private def fireWithKeyTimers(queue: TimerQueue, time: Long, algorithm: WindowAlgorithm): Unit = {
    var more = true
    while (more) {
      val heapAt = if (keyTimers.isEmpty) Long.MaxValue else keyTimers.minTime
      if (heapAt <= time && heapAt < queue.nextTime) {
        val key = keyTimers.minId
        keyTimers.pop()
        backend.switchTo(key.toLong)
        algorithm.onTimer(heapAt, null, eventTime = true)
      } else {
        val t = queue.pollDue(time)
        if (t == null) more = false
        else {
          backend.switchTo(t.keyId)
          algorithm.onTimer(t.timestamp, t.window, eventTime = true)
        }
      }
    }
  }

  private def counted(added: Boolean): Boolean = {
    if (added) metrics.timersRegistered += 1
    added
  }
}
