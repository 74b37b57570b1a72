package sparkwin.operator.store

import sparkwin.core._
import sparkwin.operator._

import java.util.{ArrayList => JList, HashMap => JMap}

import sparkwin.core.agg.Accumulator
import sparkwin.core.Element
import sparkwin.core.window.{MergingWindowSet, Window}

/** A window's contents, stored under its state window: running aggregates, or the elements
  * themselves when an evictor or a process function needs them.
  */
final class WindowContents(var accumulators: Array[Accumulator], var elements: JList[Element]) {
  def isEmpty: Boolean = accumulators == null && (elements == null || elements.isEmpty)
}

/** What the operator keeps per live window besides contents: trigger state slots and the
  * pane bookkeeping (Beam's pane index, whether an on-time or late pane went out, whether the
  * window first appeared after its end had passed, and whether its trigger closed it).
  */
final class WindowMeta(val triggerState: Array[Any]) {
  var paneIndex: Long = 0L
  var nonEarlyFired: Boolean = false
  var createdLate: Boolean = false
  var closed: Boolean = false
  var sinceLastPane: Long = 0L // elements added since the last firing: is a pane "new"?

  // Not persisted: the latest event-time timer known to be queued for this window, so the
  // per-element re-registration of the same timer (triggers and cleanup) is a field compare.
  @transient var queuedEventTimer: Long = Long.MinValue
  @transient var queuedCleanupTimer: Boolean = false
}

/** Storm's per-key window manager state: queued tuples in arrival order and the policies'
  * positions (next window end, last counted timestamp, tuples processed last time, and the
  * wake-up timer that brings the key back when the watermark reaches its next window).
  */
final class StormState {
  val queue = new JList[Element]()
  var nextWindowEnd: Long = Long.MinValue
  var lastProcessed: Long = Long.MinValue
  var processedLast: Long = 0L
  var previousWindow: java.util.List[Element] = java.util.Collections.emptyList()
  var wakeAt: Long = Long.MinValue

  def isEmpty: Boolean = queue.isEmpty && wakeAt == Long.MinValue
}

/** Everything the engine keeps for one key: contents by state window, metadata by window, the
  * session merging set, and Storm's queue. Timers live in the runtime's queues.
  */
final class KeyState {
  val contents = new JMap[Window, WindowContents]()
  val meta = new JMap[Window, WindowMeta]()
  var merging: MergingWindowSet = _
  var storm: StormState = _

  // Not persisted: the slice the key's last element went to, for the slicing operator, so a
  // run of elements in one slice skips the map lookup.
  @transient var hotSlice: Long = 0L
  @transient var hotContents: WindowContents = _
  // Not persisted, for the session operator: the session the key's last element went to (with
  // hotContents), and when the key's timer is queued (MinValue: not known, as after a read
  // from the store; MaxValue: none needed).
  @transient var hotWindow: Window = _
  @transient var sessionTimer: Long = Long.MinValue

  /** This (empty) state as a new one: what it caches is forgotten, its maps are kept. Storm's
    * state goes too: an empty queue can still hold its policies' positions, which a new key
    * does not have.
    */
  def cleared(): KeyState = {
    merging = null
    storm = null
    hotSlice = 0L
    hotContents = null
    hotWindow = null
    sessionTimer = Long.MinValue
    this
  }

  def mergingSet: MergingWindowSet = {
    if (merging == null) merging = new MergingWindowSet()
    merging
  }

  def stormState: StormState = {
    if (storm == null) storm = new StormState
    storm
  }

  def isEmpty: Boolean =
    contents.isEmpty && meta.isEmpty && (merging == null || merging.isEmpty) &&
      (storm == null || storm.isEmpty)

  /** State entries: windows with contents, windows with metadata, merging-set mappings, and
    * Storm's queued tuples.
    */
  def numEntries: Int =
    contents.size + meta.size + (if (merging == null) 0 else merging.size) +
      (if (storm == null) 0 else storm.queue.size)
}
