package sparkwin.operator

import sparkwin.core.timer.Timer
import sparkwin.core.window.Window
import sparkwin.operator.store.KeyedBackend

/** The current key's timers, as the operator shell gives them to its algorithms: register,
  * delete and count, on either clock, in one place (Flink SQL's window timer service plays this
  * part). `timersRegistered` counts timers newly queued; registering a timer that is already
  * queued changes nothing and counts nothing. Layouts that keep their timers in arrays of their
  * own (the packed ones) only count theirs here.
  */
final class TimerService(backend: KeyedBackend, metrics: OperatorMetrics) {

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

  /** A timer a packed layout queued in its own arrays. */
  def queuedElsewhere(): Unit = metrics.timersRegistered += 1

  private def counted(added: Boolean): Boolean = {
    if (added) metrics.timersRegistered += 1
    added
  }
}
