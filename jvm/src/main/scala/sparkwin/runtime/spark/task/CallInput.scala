package sparkwin.runtime.spark.task

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow

import sparkwin.plan.{Plan, TimePolicy}
import sparkwin.runtime.Driver

/** How a call's rows reach the engine ([[KeyGroupLoop]]): the pipeline's key of a row, and a
  * key's rows fed to the driver, each an element or, after the [[Combiner]], a pre-aggregate.
  */
final class CallInput(plan: Plan, policy: TimePolicy, combined: Boolean, driver: Driver) {
  private val keyWidth = plan.keys.schema.size // key columns; a pre-aggregated row leads with them
  private val partialCodec = new Combiner.PartialCodec(plan.spec)

  /** The columns of a row the pipeline reads; what the runtime appends (a summary, a tick)
    * follows them.
    */
  val payloadWidth: Int = if (combined) keyWidth + 4 else plan.inputSchema.size

  /** The pipeline's key of an input row ([[sparkwin.plan.Keys]]); a pre-aggregated row leads
    * with it.
    */
  val keyOf: Row => Row =
    if (combined) row => {
      val values = new Array[Any](keyWidth)
      var i = 0
      while (i < keyWidth) { values(i) = row.get(i); i += 1 }
      new GenericRow(values)
    }
    else {
      val keys = plan.keys
      row => keys.of(new RowRecord(row, payloadWidth))
    }

  /** The current key's rows, in arrival order. */
  def feed(key: Row, rows: ArrayBuffer[Row]): Unit =
    if (combined) rows.foreach(partial(key, _)) else rows.foreach(element)

  private def element(row: Row): Unit = {
    val record = new RowRecord(row, payloadWidth)
    driver.processRecord(record, channelMissing = policy.checksChannel && row.isNullAt(payloadWidth))
  }

  /** A pre-aggregated row: a group of elements, or a row without timestamp or channel (passed
    * through whole, to the error output).
    */
  private def partial(key: Row, row: Row): Unit = {
    val k = keyWidth
    if (!row.isNullAt(k + 3)) {
      val raw = row.getStruct(k + 3)
      val channelMissing = policy.checksChannel && raw.isNullAt(plan.channelColumn.get)
      driver.processRecord(new RowRecord(raw), channelMissing = channelMissing)
    } else
      driver.processPartial(
        key,
        row.getLong(k),
        partialCodec.decode(row.getAs[Array[Byte]](k + 2)),
        row.getLong(k + 1)
      )
  }
}
