package sparkwin.runtime.spark

import org.apache.spark.TaskContext
import org.apache.spark.sql.{Encoders, Row}
import org.apache.spark.sql.streaming._
import org.apache.spark.sql.types.StructType

import sparkwin.plan.SparkTimers
import sparkwin.runtime.spark.task.{GroupHost, KeyGroupLoop, LoopSpec, PlannedMode, SessionForms, StoreMirror}

/** Spark 4's host of the key-group loop: a `transformWithState` processor whose grouping key is
  * the key group. Its one state variable, `sparkwin`, maps bytes to bytes: the group's entries
  * ([[KeyGroupLoop]]), its keys packed in buckets ([[KeyBuckets]]). Spark builds every state
  * variable's encoders in every task, and with bytes on both sides they are trivial (DESIGN.md,
  * "State variables"). Its rows (of schema `input`) come as `SessionForms.reader` reads them, and
  * reach the loop in the session's forms ([[SessionForms]]).
  */
final class KeyGroupProcessor(val spec: LoopSpec, input: StructType)
    extends StatefulProcessor[Int, Row, Row] {

  @transient private var keyStates: MapState[Array[Byte], Array[Byte]] = _
  @transient private var loop: KeyGroupLoop = _
  @transient private var forms: SessionForms = _
  @transient private var mode: PlannedMode = _
  // In real-time mode, what this task's store holds ([[StoreMirror]]): each row is a call that
  // would read back the entries the row before wrote. Null in micro-batch mode (a group is
  // called about once a batch there).
  @transient private var mirror: StoreMirror = _

  override def init(outputMode: OutputMode, timeMode: TimeMode): Unit = {
    keyStates = getHandle.getMapState[Array[Byte], Array[Byte]](
      "sparkwin",
      Encoders.BINARY,
      Encoders.BINARY,
      TTLConfig.NONE
    )
    loop = new KeyGroupLoop(spec, Hosts.TransformWithState)
    forms = new SessionForms(input)
    mode = new PlannedMode(spec.realTime)
    // Spark initialises a processor on the driver too, while it plans a batch.
    if (TaskContext.get() == null) mode.atPlanning()
    mirror = if (spec.realTime) new StoreMirror(StoreMirror.DefaultBudgetBytes) else null
  }

  override def handleInputRows(key: Int, rows: Iterator[Row], timers: TimerValues): Iterator[Row] = {
    mode.rowsOf(key)
    loop.call(new Host(key, timers), if (forms.identity) rows else rows.map(forms), firing = false)
  }

  override def handleExpiredTimer(key: Int, timers: TimerValues, info: ExpiredTimerInfo): Iterator[Row] =
    loop.call(new Host(key, timers), Iterator.empty, firing = true)

  private final class Host(override val keyGroup: Int, timers: TimerValues) extends GroupHost {
    def get(key: Array[Byte]): Array[Byte] =
      if (mirror == null) keyStates.getValue(key)
      else mirror.get(keyGroup, key, () => keyStates.getValue(key))
    def put(key: Array[Byte], value: Array[Byte]): Unit = {
      keyStates.updateValue(key, value) // written through: the store commits it, not the mirror
      if (mirror != null) mirror.wrote(keyGroup, key, value)
    }
    def remove(key: Array[Byte]): Unit = {
      keyStates.removeKey(key)
      if (mirror != null) mirror.wrote(keyGroup, key, null)
    }
    def packsKeys: Boolean = true // each entry is a state-store operation
    def watermark: Long = timers.getCurrentWatermarkInMs()
    def batchTime: Long = timers.getCurrentProcessingTimeInMs()

    def timer(current: Long, wanted: Long, firing: Boolean): Unit = if (wanted != current) {
      val handle = getHandle
      // A timer already due is deleted too when the group's rows got here first (the engine
      // has fired what it stood for), sparing a second handler call; never the one firing now
      // (Spark deletes it). The timers run on the clock TimePolicy put them on.
      val onProcessingTime = loop.policy.sparkTimers == SparkTimers.OnProcessingTime
      val clock = if (onProcessingTime) batchTime else watermark
      if (current != Long.MinValue && (current > clock || !firing)) handle.deleteTimer(current)
      if (wanted != Long.MinValue) handle.registerTimer(wanted)
    }
  }
}
