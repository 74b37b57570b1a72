package sparkwin.runtime.spark.task

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
  private var keptAs: Any = _ // what the kept states know the current key by
  private var stored: KeyStateCodec.Stored = _
  private var loaded: Array[Byte] = _ // the bytes read, to skip writing back an unchanged state
  private val decoded = if (keepDecoded) new DecodedStates(DecodedStates.DefaultCapacity) else null

  def install(kind: StateKind): Unit = {
    codec = new KeyStateCodec(kind, aggregates)
    if (decoded != null) decoded.clear() // kept states are of the kind before
  }

  /** Makes `k` current with its stored state (null: a fresh one). `id` names the key among the
    * kept states (null: `k` itself); the key-group loop passes its bytes' [[KeyId]], whose hash
    * is made once, where a key's `Row` hashes its values at every lookup.
    */
  def load(k: Any, bytes: Array[Byte], id: Any = null): Unit = {
    key = k
    keptAs = if (id == null) k else id
    loaded = bytes
    val kept = if (decoded != null) decoded.take(keptAs, bytes) else null
    stored = if (kept != null) kept else if (loaded != null) codec.decode(loaded) else codec.empty()
  }

  /** [[load]] from what a bucket holds ([[KeyBuckets.getState]]): bytes, or the state a call
    * before left unencoded ([[saveState]]), which is used as it is.
    */
  def loadState(k: Any, state: AnyRef, id: Any): Unit = state match {
    case unencoded: SparkKeyBackend.Unencoded if unencoded.codec eq codec =>
      key = k
      keptAs = id
      loaded = SparkKeyBackend.Unwritten
      stored = unencoded.stored
    case unencoded: SparkKeyBackend.Unencoded => load(k, unencoded.encode(), id)
    case bytes: Array[Byte] @unchecked => load(k, bytes, id)
    case null => load(k, null, id)
  }

  /** Like [[save]], but hands `put` the state itself, encoded only when its bucket is written
    * ([[KeyBuckets.putState]]); once encoded, it is kept decoded against those bytes.
    */
  def saveState(put: Encodable => Unit, remove: () => Unit): Unit =
    if (isEmpty) { if (loaded != null) remove() }
    else put(new SparkKeyBackend.Unencoded(codec, stored, keptAs, decoded))

  /** Writes the key's state back with `write`, if it changed; an empty state is removed with
    * `remove`.
    */
  def save(write: Array[Byte] => Unit, remove: () => Unit): Unit =
    if (isEmpty) { if (loaded != null) remove() }
    else {
      val bytes = codec.encode(stored)
      if (loaded == null || !java.util.Arrays.equals(bytes, loaded)) write(bytes)
      if (decoded != null) decoded.keep(keptAs, bytes, stored)
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

object SparkKeyBackend {

  /** What a key loaded from an unencoded state was "read as": not null (the key has state), and
    * equal to no encoding (a save always hands the state on).
    */
  private val Unwritten = new Array[Byte](0)

  /** A key's state as the engine left it, encoded when its bucket is written: then kept decoded
    * against those bytes ([[DecodedStates]]), so the group's next call after the write decodes
    * nothing either.
    */
  final class Unencoded(
      val codec: KeyStateCodec,
      val stored: KeyStateCodec.Stored,
      id: Any,
      decoded: DecodedStates
  ) extends Encodable {
    def encode(): Array[Byte] = {
      val bytes = codec.encode(stored)
      if (decoded != null) decoded.keep(id, bytes, stored)
      bytes
    }
  }
}
