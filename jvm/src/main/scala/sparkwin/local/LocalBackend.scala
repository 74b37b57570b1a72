package sparkwin.local

import scala.collection.mutable

import sparkwin.engine.{KeyedBackend, Record}
import sparkwin.state.KeyState
import sparkwin.timer.TimerQueue

/** In-memory keyed state for the local runtime: one state object per key, one timer queue per
  * time domain for all keys (so timers of different keys fire in global timestamp order).
  */
final class LocalBackend extends KeyedBackend {
  private val ids = mutable.HashMap.empty[Any, Long]
  private val keys = mutable.ArrayBuffer.empty[Any]
  private val states = mutable.LongMap.empty[KeyState]
  private var current = -1L
  private var currentState: KeyState = _

  val eventTimers = new TimerQueue
  val processingTimers = new TimerQueue

  /** Makes `key` current, giving it a stable id on first sight. */
  def setCurrentKey(key: Any): Unit = {
    val id = ids.getOrElseUpdate(key, { keys += key; (keys.size - 1).toLong })
    if (id != current) { current = id; currentState = null }
  }

  def currentKey: Any = keys(current.toInt)
  def currentKeyId: Long = current

  def switchTo(keyId: Long): Unit = if (keyId != current) { current = keyId; currentState = null }

  def state: KeyState = {
    if (currentState == null) currentState = states.getOrElseUpdate(current, new KeyState)
    currentState
  }

  def stateTouched(): Unit =
    if (currentState != null && currentState.isEmpty) { states.remove(current); currentState = null }

  def retain(record: Record): Record = record

  /** Window contents, window metadata, merging mappings and timers, over all keys. */
  def numStateEntries: Int =
    states.valuesIterator.map(_.numEntries).sum + eventTimers.size + processingTimers.size

  def numKeysWithState: Int = states.size
}
