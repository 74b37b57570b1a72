package sparkwin.runtime.local

import sparkwin.core.Record
import sparkwin.core.timer.TimerQueue
import sparkwin.operator.store.{DenseKeyedBackend, HeldState, KeyState, StateKind}

/** In-memory keyed state for the local runtime: one state object per key, one timer queue per
  * time domain for all keys (so timers of different keys fire in global timestamp order).
  *
  * Keys get a stable id on first sight; a key's slot holds its id and state, so making a key
  * current is one hash lookup. With `packable` the packed layouts may run (the local runner);
  * runtimes that run one key at a time or read a key's timers (batch, replay) keep every
  * algorithm in its keyed layout.
  */
final class LocalBackend(override val packable: Boolean = true) extends DenseKeyedBackend {
  private final class Slot(val id: Long, val key: Any) {
    var state: KeyState = _
    var spare: KeyState = _ // the key's emptied state, kept for reuse with its allocated maps
  }

  private val slots = new java.util.HashMap[Any, Slot]()
  private val byId = new java.util.ArrayList[Slot]()
  private var current: Slot = _
  private var live = 0 // keys that hold state
  private var held: HeldState = null

  val eventTimers = new TimerQueue
  val processingTimers = new TimerQueue
  private var newState: () => KeyState = () =>
    throw new IllegalStateException("no operator has installed its state kind in this backend")

  def install(kind: StateKind): Unit = newState = () => kind.newState()

  /** Makes `key` current, giving it a stable id on first sight. */
  def setCurrentKey(key: Any): Unit =
    if (current == null || current.key != key) {
      var slot = slots.get(key)
      if (slot == null) {
        slot = new Slot(byId.size.toLong, key)
        slots.put(key, slot)
        byId.add(slot)
      }
      current = slot
    }

  def currentKey: Any = current.key
  def currentKeyId: Long = current.id

  def switchTo(keyId: Long): Unit =
    if (current == null || current.id != keyId) current = byId.get(keyId.toInt)

  def state: KeyState = {
    if (current.state == null) {
      // A spare is always an emptied state: only stateTouched sets it, and operators end their
      // work on a key with stateTouched. Not re-checking spares their maps a cache miss.
      current.state =
        if (current.spare != null) { current.spare.reset(); current.spare }
        else newState()
      current.spare = null
      live += 1
    }
    current.state
  }

  def stateTouched(): Unit =
    if (current.state != null && current.state.isEmpty) {
      current.spare = current.state
      current.state = null
      live -= 1
    }

  def retain(record: Record): Record = record

  /** Window contents, window metadata, merging mappings and timers, over all keys. */
  def numStateEntries: Int = {
    var n = eventTimers.size + processingTimers.size
    if (held != null) n += held.numHeldEntries
    byId.forEach(s => if (s.state != null) n += s.state.numEntries)
    n
  }

  def numKeysWithState: Int = live + (if (held == null) 0 else held.numHeldKeys)

  def hold(state: HeldState): Unit = held = state
}
