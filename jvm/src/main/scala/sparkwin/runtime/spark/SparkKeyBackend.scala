package sparkwin.runtime.spark

import sparkwin.core.{ArrayRecord, Record}
import sparkwin.core.agg.Aggregate
import sparkwin.core.timer.TimerQueue
import sparkwin.operator.store.{KeyState, KeyStateCodec, KeyedBackend, StateKind}

/** The engine's backend inside a Spark stateful processor: one key at a time, its whole state
  * loaded from one state-store value when the key is woken and written back once after, so
  * state-store traffic grows with keys touched, not events. The operator's algorithm says how
  * a state is stored ([[StateKind]]); one codec per task reuses its buffers. With `keepDecoded`
  * (real-time mode: a call a row) a key's state is decoded again only when its bytes are not
  * the ones it was last saved as ([[DecodedStates]]).
  */
final class SparkKeyBackend(aggregates: IndexedSeq[Aggregate], keepDecoded: Boolean = false)
    extends KeyedBackend {
  private var codec: KeyStateCodec = _
  private var key: Any = _
  private var stored: KeyStateCodec.Stored = _
  private var loaded: Array[Byte] = _ // the bytes read, to skip writing back an unchanged state
  private val decoded = if (keepDecoded) new DecodedStates(DecodedStates.DefaultCapacity) else null

  def install(kind: StateKind): Unit = {
    codec = new KeyStateCodec(kind, aggregates)
    if (decoded != null) decoded.clear() // kept states are of the kind before
  }

  /** Makes `k` current with its stored state (null: a fresh one). */
  def load(k: Any, bytes: Array[Byte]): Unit = {
    key = k
    loaded = bytes
    val kept = if (decoded != null) decoded.take(k, bytes) else null
    stored = if (kept != null) kept else if (loaded != null) codec.decode(loaded) else codec.empty()
  }

  /** Writes the key's state back with `write`, if it changed; an empty state is removed with
    * `remove`.
    */
  def save(write: Array[Byte] => Unit, remove: () => Unit): Unit =
    if (isEmpty) { if (loaded != null) remove() }
    else {
      val bytes = codec.encode(stored)
      if (loaded == null || !java.util.Arrays.equals(bytes, loaded)) write(bytes)
      if (decoded != null) decoded.keep(key, bytes, stored)
    }

  def isEmpty: Boolean =
    stored.state.isEmpty && stored.eventTimers.isEmpty && stored.processingTimers.isEmpty

  def currentKey: Any = key
  def currentKeyId: Long = 0L
  def switchTo(keyId: Long): Unit = ()
  def state: KeyState = stored.state
  def stateTouched(): Unit = ()
  def retain(record: Record): Record = record match {
    case r: RowRecord => new ArrayRecord(Rows.toEngine(r.row, r.length))
    case other => other
  }
  def eventTimers: TimerQueue = stored.eventTimers
  def processingTimers: TimerQueue = stored.processingTimers
}
