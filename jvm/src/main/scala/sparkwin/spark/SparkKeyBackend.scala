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
  private var loaded: Array[Byte] = _ // the bytes read, to skip writing back an unchanged state

  /** Loads `k`'s state (or a fresh one) from `value`: one read. */
  def load(k: Any, value: ValueState[Array[Byte]]): Unit = {
    key = k
    loaded = value.get() // null when the key has no state
    stored = if (loaded != null) codec.decode(loaded) else codec.empty()
  }

  /** Writes the key's state back, if it changed; an empty state is removed from the store. */
  def save(value: ValueState[Array[Byte]]): Unit =
    if (isEmpty) { if (loaded != null) value.clear() }
    else {
      val bytes = codec.encode(stored)
      if (loaded == null || !java.util.Arrays.equals(bytes, loaded)) value.update(bytes)
    }

  def isEmpty: Boolean =
    stored.state.isEmpty && stored.eventTimers.isEmpty && stored.processingTimers.isEmpty

  /** Timers registered with Spark for this key: (event or processing) time, per domain. */
  def runtimeTimers: Array[Long] = stored.runtimeTimers

  def currentKey: Any = key
  def currentKeyId: Long = 0L
  def switchTo(keyId: Long): Unit = ()
  def state: KeyState = stored.state
  def stateTouched(): Unit = ()
  def retain(record: Record): Record = record match {
    case r: RowRecord => new ArrayRecord(Rows.toEngine(r.row))
    case other => other
  }
  def eventTimers: TimerQueue = stored.eventTimers
  def processingTimers: TimerQueue = stored.processingTimers
}
