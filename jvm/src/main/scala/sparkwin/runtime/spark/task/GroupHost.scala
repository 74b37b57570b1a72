package sparkwin.runtime.spark.task

import sparkwin.plan.RunMode

/** What a key group's stateful operator offers the loop during one call: the group's stored
  * entries (its record, and each key's state, under their bytes), the group's one event-time
  * timer and Spark's clocks. Each Spark line's operator is one small adapter of this
  * (`transformWithState` on 4.x, `flatMapGroupsWithState` on 3.5).
  */
trait GroupHost {

  /** The value stored under `key`, or null. */
  def get(key: Array[Byte]): Array[Byte]
  def put(key: Array[Byte], value: Array[Byte]): Unit
  def remove(key: Array[Byte]): Unit

  /** The object [[keep]] left under `key`, not yet written (null: none; read [[get]]). */
  def kept(key: Array[Byte]): Encodable = null

  /** Puts `value` under `key`. A host that holds its writes ([[WriteBehind]]) holds the object
    * itself and encodes it when it writes, so rows that change one entry one after another
    * encode it once, and the next call takes the object back ([[kept]]) instead of decoding.
    */
  def keep(key: Array[Byte], value: Encodable): Unit = put(key, value.encode())

  /** Whether the group's keys go into buckets ([[KeyBuckets]]): where each entry is its own
    * state-store operation (Spark 4's map state), not where the group is one value (3.5's).
    */
  def packsKeys: Boolean

  /** Spark's event-time watermark (0 or less: none yet). */
  def watermark: Long

  /** The micro-batch's time (negative: unknown). */
  def batchTime: Long

  /** The group's event-time timer goes from `current` to `wanted` (Long.MinValue: none), said at
    * the end of every call; `firing` when the call is the timer's own.
    */
  def timer(current: Long, wanted: Long, firing: Boolean): Unit

  /** The key group's label (its Spark grouping key), to name it in errors; -1: unknown. */
  def keyGroup: Int = -1
}

/** An entry's value as an object that says its bytes ([[GroupHost.keep]]). */
trait Encodable {
  def encode(): Array[Byte]
}

/** What a key group's loop is built from, sent to the executors with the operator's function. It
  * holds the plan as JSON, decoded on the executor, so nothing of the engine needs to be
  * serialisable.
  *
  * @param tickColumn where a row carries a clock tick's time (negative: the pipeline reads no clock)
  * @param mode how the query runs: micro-batch or Spark's real-time mode ([[TimePolicy]])
  * @param holdMs how long a real-time group's changes wait at most before a summary writes them
  * @param operator Spark's operator that hosts the loop ([[sparkwin.runtime.spark.query.HostChoice]])
  */
final case class LoopSpec(
    planJson: String,
    java8Time: Boolean,
    combined: Boolean,
    keyGroups: Int,
    wakes: Option[WakeReports],
    tickColumn: Int,
    mode: RunMode = RunMode.MicroBatch,
    holdMs: Long = WriteBehind.HoldMs,
    operator: String = "stateful"
) {

  /** The query runs in Spark's real-time mode. */
  def realTime: Boolean = mode == RunMode.RealTime
}
