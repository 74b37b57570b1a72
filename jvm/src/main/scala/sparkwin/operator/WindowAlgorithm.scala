package sparkwin.operator

import sparkwin.core.Record
import sparkwin.core.agg.Accumulator
import sparkwin.core.timer.TimerQueue
import sparkwin.core.window.Window
import sparkwin.operator.store.{KeyState, StateKind}

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
