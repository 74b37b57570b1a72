package sparkwin.runtime.spark.task

import scala.collection.mutable.ArrayBuffer

import sparkwin.operator.Operator

/** A key group's wake-ups as one call of its loop ([[KeyGroupLoop]]) uses them: when the group
  * must next wake, which keys are due, and what processing each key changed. Two kinds keep them:
  * the table in the group's record ([[WakeupTable]]), and, once a group has more than
  * [[WakeupIndex.From]] keys waiting, the index by time in entries of its own ([[WakeupIndex]]).
  *
  * A call goes one key at a time: [[enter]] it, ask [[holdsNoState]] before reading its state,
  * say when it is [[loaded]] and when it is [[left]] with its next wake-up; then [[grown]],
  * [[flush]] and, once the record is written, [[settle]].
  */
trait Wakeups {

  /** The earliest wake-up on each clock (Long.MaxValue: none); the index's is a bound. */
  def earliest(): (Long, Long)

  /** Whether no wake-up is kept. */
  def isEmpty: Boolean

  /** A call begins: what the last one took is forgotten. */
  def open(): Unit

  /** The keys `isDue` accepts (given the event and processing time), each once with its due
    * wake-up; the index takes them out.
    */
  def due(host: GroupHost, isDue: (Long, Long) => Boolean): ArrayBuffer[Wakeup]

  /** The call processes `key` next; `due`: its wake-up when the call woke it, else null. */
  def enter(key: Array[Byte], due: Wakeup): Unit

  /** Whether the entered key surely holds no state, so its read (a miss) can be skipped, given
    * how many keys of the group hold state.
    */
  def holdsNoState(liveKeys: Long): Boolean

  /** The entered key's state is loaded into `operator`. */
  def loaded(operator: Operator): Unit

  /** The entered key is processed: its next wake-up is the `operator`'s. */
  def left(host: GroupHost, key: Array[Byte], operator: Operator): Unit

  /** The wake-ups from here on: these, or the index they grew into. */
  def grown(host: GroupHost): Wakeups

  /** Writes what the call changed outside the record. */
  def flush(host: GroupHost): Unit

  /** Whether the record must be written again for them. */
  def changed: Boolean

  /** The record just written over them is what the next call reads; false when it is better
    * read afresh.
    */
  def settle(): Boolean

  /** What the group's record holds: the table (empty with an index) and the index (null: none). */
  def table: WakeupTable
  def index: WakeupIndex
}

object Wakeups {

  /** When the operator's current key must next be woken, on each clock (null: never). */
  def next(operator: Operator): Wakeup = {
    val at = operator.nextEventTimer
    val processingAt = operator.nextProcessingTimer
    if (at == Long.MaxValue && processingAt == Long.MaxValue) null else Wakeup(null, at, processingAt)
  }
}
