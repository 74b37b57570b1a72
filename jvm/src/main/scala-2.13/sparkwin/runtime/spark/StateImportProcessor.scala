package sparkwin.runtime.spark

import org.apache.spark.sql.{Encoders, Row}
import org.apache.spark.sql.streaming._

import sparkwin.plan.{PlanDecoder, SparkTimers}
import sparkwin.runtime.spark.task.{GroupHost, GroupImport, LoopSpec}

/** The one batch that writes a moved checkpoint's state (`runtime.checkpoint.Migration`): a
  * `transformWithState` processor with the key groups' own state variable and time mode, whose
  * input rows are each group's entries read from the other checkpoint (`key`, `value`). Spark
  * writes the column families, schemas and operator metadata a resumed query checks, as the
  * real operator's first batch would.
  */
final class StateImportProcessor(spec: LoopSpec, watermark: Long) extends StatefulProcessor[Int, Row, Row] {
  @transient private var keyStates: MapState[Array[Byte], Array[Byte]] = _

  override def init(outputMode: OutputMode, timeMode: TimeMode): Unit =
    keyStates = getHandle.getMapState[Array[Byte], Array[Byte]](
      "sparkwin",
      Encoders.BINARY,
      Encoders.BINARY,
      TTLConfig.NONE
    )

  override def handleInputRows(label: Int, rows: Iterator[Row], timers: TimerValues): Iterator[Row] = {
    val plan = PlanDecoder.cached(spec.planJson)
    val host = new GroupHost {
      override val keyGroup: Int = label
      def get(key: Array[Byte]): Array[Byte] = keyStates.getValue(key)
      def put(key: Array[Byte], value: Array[Byte]): Unit = keyStates.updateValue(key, value)
      def remove(key: Array[Byte]): Unit = keyStates.removeKey(key)
      def packsKeys: Boolean = true
      def watermark: Long = StateImportProcessor.this.watermark
      def batchTime: Long = timers.getCurrentProcessingTimeInMs()
      def timer(current: Long, wanted: Long, firing: Boolean): Unit =
        if (wanted != Long.MinValue) getHandle.registerTimer(wanted)
    }
    GroupImport.restore(
      host,
      rows.map(r => (r.getAs[Array[Byte]](1), r.getAs[Array[Byte]](2))),
      plan,
      spec.mode,
      spec.keyGroups,
      watermark,
      timers.getCurrentProcessingTimeInMs()
    )
    Iterator.empty
  }
}

object StateImportProcessor {

  /** Spark's time mode for the key groups' operator of `spec` (the shim's choice). */
  def timeMode(spec: LoopSpec): TimeMode =
    PlanDecoder.cached(spec.planJson).timeIn(spec.mode).sparkTimers match {
      case SparkTimers.OnWatermark => TimeMode.EventTime()
      case SparkTimers.OnProcessingTime => TimeMode.ProcessingTime()
      case SparkTimers.NoTimers => TimeMode.None()
    }
}
