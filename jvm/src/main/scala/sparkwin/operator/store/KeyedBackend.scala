package sparkwin.operator.store

import sparkwin.core.Record
import sparkwin.core.timer.TimerQueue

/** What an operator needs from a runtime: the current key, its state, and the timer queues that
  * hold the current key's timers (one queue for all keys locally, one per key on Spark). Only the
  * operator's [[sparkwin.operator.TimerService]] reaches the queues; algorithms never see them.
  */
trait KeyedBackend {
  def currentKey: Any
  def currentKeyId: Long

  /** Makes the key of a firing timer current. */
  def switchTo(keyId: Long): Unit

  /** True when the packed layouts may run: every key lives in this process with ids 0, 1, 2...
    * ([[DenseKeyedBackend]]) and no one steps time by the next timer (replay does: the packed
    * slices keep none).
    */
  def packable: Boolean = false

  /** How the operator's algorithm keeps a key's state; set once, before the first key. */
  def install(kind: StateKind): Unit

  /** The current key's state, created on first use. */
  def state: KeyState

  /** Called after the operator changed the current key's state (drop it once empty). */
  def stateTouched(): Unit

  /** A record the operator keeps beyond the current call (element buffers). */
  def retain(record: Record): Record

  def eventTimers: TimerQueue
  def processingTimers: TimerQueue
}

/** A backend that holds every key in one process, with ids 0, 1, 2... in order of first sight
  * (the local runtime's), so an algorithm may keep state in arrays by key id.
  */
trait DenseKeyedBackend extends KeyedBackend {

  /** Counts state an algorithm keeps in its own layout with the backend's. */
  def hold(state: HeldState): Unit
}

/** State an algorithm keeps outside the per-key states (the packed layouts). */
trait HeldState {
  def numHeldEntries: Int
  def numHeldKeys: Int
}
