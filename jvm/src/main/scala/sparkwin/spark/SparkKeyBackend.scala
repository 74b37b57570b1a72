package sparkwin.spark

import org.apache.spark.sql.streaming.ValueState

import sparkwin.engine.{ArrayRecord, KeyedBackend, Record}
import sparkwin.state.{KeyState, KeyStateCodec}
import sparkwin.timer.TimerQueue

/** The engine's backend inside a Spark stateful processor: one key at a time (Spark's grouping
  * key), its whole state loaded from one state-store value at the start of a handler call and
  * written back once at the end, so state-store traffic grows with keys touched, not events.
  */
final class SparkKeyBackend(codec: KeyStateCodec) extends KeyedBackend {
  private var key: Any = _
  private var stored: codec.Stored = _
  private var touched = false

  /** Loads `k`'s state (or a fresh one) from `value`. */
  def load(k: Any, value: ValueState[Array[Byte]]): Unit = {
    key = k
    stored = if (value.exists()) codec.decode(value.get()) else codec.empty()
    touched = false
  }

  /** Writes the key's state back; an empty state is removed from the store. */
  def save(value: ValueState[Array[Byte]]): Unit =
    if (isEmpty) { if (value.exists()) value.clear() }
    else value.update(codec.encode(stored))

  def isEmpty: Boolean =
    stored.state.isEmpty && stored.eventTimers.isEmpty && stored.processingTimers.isEmpty

  /** Timers registered with Spark for this key: (event or processing) time, per domain. */
  def runtimeTimers: Array[Long] = stored.runtimeTimers

  def currentKey: Any = key
  def currentKeyId: Long = 0L
  def switchTo(keyId: Long): Unit = ()
  def state: KeyState = stored.state
  def stateTouched(): Unit = touched = true
  def retain(record: Record): Record = record match {
    case r: RowRecord => new ArrayRecord(Rows.toEngine(r.row))
    case other => other
  }
  def eventTimers: TimerQueue = stored.eventTimers
  def processingTimers: TimerQueue = stored.processingTimers
}
