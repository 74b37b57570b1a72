package sparkwin.operator

import sparkwin.core.{Element, Record}
import sparkwin.core.window.Window

/** Where the operator's output goes; runtimes turn these calls into rows. Calls are
  * synchronous: the element list is only valid during the call.
  */
trait Emitter {

  /** A fired pane of an aggregating pipeline: one value per aggregate, in plan order. */
  def emitResult(key: Any, window: Window, pane: PaneInfo, values: Array[Any]): Unit

  /** A fired pane of a process pipeline: the pane's elements, in arrival order. */
  def emitElements(key: Any, window: Window, pane: PaneInfo, elements: java.util.List[Element]): Unit

  /** An element that arrived after all its windows expired (late side output). */
  def emitLate(key: Any, record: Record, timestamp: Long): Unit

  /** A record the engine cannot take (the `errors` side output), with the reason. */
  def emitError(record: Record, message: String): Unit

  /** A fired pane with a value that cannot be given (a sum that overflowed under ANSI): the
    * window and its key on the `errors` side output, with the reason.
    */
  def emitWindowError(key: Any, window: Window, message: String): Unit
}

/** Counters the runtimes report (Spark custom metrics, harness accessors). */
final class OperatorMetrics {
  var elementsIn: Long = 0L
  var droppedLate: Long = 0L
  var lateSideOutput: Long = 0L
  var droppedNoWindow: Long = 0L
  var droppedClosedWindow: Long = 0L
  var panesFired: Long = 0L
  var windowsMerged: Long = 0L
  var windowsOpened: Long = 0L
  var windowsCleaned: Long = 0L
  var timersRegistered: Long = 0L
  var unfiredAtCleanup: Long = 0L

  /** An element whose windows are all gone: to the late side output when the pipeline has one
    * (`sideOutput`), else counted as dropped. Never lost silently.
    */
  def late(sideOutput: Boolean, output: Emitter, key: Any, record: Record, timestamp: Long): Unit =
    if (sideOutput) {
      lateSideOutput += 1
      output.emitLate(key, record, timestamp)
    } else droppedLate += 1

  /** The counter named `name`, one of [[OperatorMetrics.Names]]. */
  def apply(name: String): Long = name match {
    case "elementsIn" => elementsIn
    case "droppedLate" => droppedLate
    case "lateSideOutput" => lateSideOutput
    case "droppedNoWindow" => droppedNoWindow
    case "droppedClosedWindow" => droppedClosedWindow
    case "panesFired" => panesFired
    case "windowsMerged" => windowsMerged
    case "windowsOpened" => windowsOpened
    case "windowsCleaned" => windowsCleaned
    case "timersRegistered" => timersRegistered
    case "unfiredAtCleanup" => unfiredAtCleanup
    case other => throw new IllegalArgumentException(s"no operator counter named '$other'")
  }

  def asMap: Map[String, Long] = OperatorMetrics.Names.iterator.map(n => n -> apply(n)).toMap
}

object OperatorMetrics {

  /** Every counter's name, as [[OperatorMetrics.apply]] reads it. */
  val Names: Seq[String] = Seq(
    "elementsIn",
    "droppedLate",
    "lateSideOutput",
    "droppedNoWindow",
    "droppedClosedWindow",
    "panesFired",
    "windowsMerged",
    "windowsOpened",
    "windowsCleaned",
    "timersRegistered",
    "unfiredAtCleanup"
  )
}
