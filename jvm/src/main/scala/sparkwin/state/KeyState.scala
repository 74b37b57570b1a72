package sparkwin.state

import java.util.{ArrayList => JList, HashMap => JMap}

import sparkwin.agg.Accumulator
import sparkwin.engine.Element
import sparkwin.window.{MergingWindowSet, Window}

/** A window's contents, stored under its state window: running aggregates, or the elements
  * themselves when an evictor or a process function needs them.
  */
final class WindowContents(var accumulators: Array[Accumulator], var elements: JList[Element]) {
  def isEmpty: Boolean = accumulators == null && (elements == null || elements.isEmpty)
}

/** What the operator keeps per live window besides contents: trigger state slots and the
  * pane bookkeeping (Beam's pane index, whether the on-time pane went out, closed for good).
  */
final class WindowMeta(val triggerState: Array[Any]) {
  var paneIndex: Long = 0L
  var onTimeFired: Boolean = false
  var closed: Boolean = false
  var sinceLastPane: Long = 0L // elements added since the last firing, for pane emptiness

  def copy(): WindowMeta = {
    val m = new WindowMeta(triggerState.clone())
    m.paneIndex = paneIndex; m.onTimeFired = onTimeFired; m.closed = closed
    m.sinceLastPane = sinceLastPane
    m
  }
}

/** Everything the engine keeps for one key: contents by state window, metadata by window, and
  * the session merging set. Timers live in the runtime's queues.
  */
final class KeyState {
  val contents = new JMap[Window, WindowContents]()
  val meta = new JMap[Window, WindowMeta]()
  var merging: MergingWindowSet = _

  def mergingSet: MergingWindowSet = {
    if (merging == null) merging = new MergingWindowSet()
    merging
  }

  def isEmpty: Boolean = contents.isEmpty && meta.isEmpty && (merging == null || merging.isEmpty)

  /** State entries: windows with contents, windows with metadata, merging-set mappings. */
  def numEntries: Int =
    contents.size + meta.size + (if (merging == null) 0 else merging.size)
}
