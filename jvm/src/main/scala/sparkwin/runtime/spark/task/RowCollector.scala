package sparkwin.runtime.spark.task

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row

import sparkwin.core.{Element, Record}
import sparkwin.core.window.Window
import sparkwin.operator.{Emitter, PaneInfo}

/** Collects the operator's output as union rows for one handler call. `firedAt` (replay) is
  * the arrival time of the moment the output happens.
  */
final class RowCollector(layout: OutputLayout, firedAt: () => Long = () => 0L) extends Emitter {
  val rows = new ArrayBuffer[Row]()

  def emitResult(key: Any, window: Window, pane: PaneInfo, values: Array[Any]): Unit =
    rows += layout.resultRow(key, window, pane, values, firedAt())

  def emitElements(key: Any, window: Window, pane: PaneInfo, elements: java.util.List[Element]): Unit = {
    val seq = RowCollector.nextPaneSeq()
    elements.forEach(e => rows += layout.paneRow(key, window, pane, seq, e.record))
  }

  def emitLate(key: Any, record: Record, timestamp: Long): Unit = rows += layout.lateRow(record)

  def emitError(record: Record, message: String): Unit = rows += layout.errorRow(record, message)

  def emitWindowError(key: Any, window: Window, message: String): Unit =
    rows += layout.windowErrorRow(key, message)

  /** Adds counter deltas to the last row of this call, or as a row of their own. */
  def addMetrics(delta: Array[Long], valve: Option[(Long, Seq[(String, Long, Boolean)])] = None): Unit =
    if (rows.isEmpty) rows += layout.metricsRow(delta, valve)
    else rows(rows.size - 1) = layout.withMetrics(rows.last, delta, valve)

  /** The rows so far, and a fresh buffer for the next call. */
  def drain(): Iterator[Row] = {
    val out = rows.toList
    rows.clear()
    out.iterator
  }
}

object RowCollector {
  // Unique per JVM, so the rows of different panes are never mistaken for one pane even when
  // they sit next to each other in a partition.
  private val paneSeq = new java.util.concurrent.atomic.AtomicLong()
  def nextPaneSeq(): Long = paneSeq.incrementAndGet()
}
