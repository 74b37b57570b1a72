package sparkwin.engine

import sparkwin.agg.Aggregate
import sparkwin.evictor.Evictor
import sparkwin.trigger.Trigger
import sparkwin.window.WindowAssigner

/** What the operator does with a fired pane's contents. */
sealed trait WindowFunction

object WindowFunction {

  /** Declarative aggregates, computed incrementally unless an evictor needs the elements. */
  final case class Aggregates(aggregates: IndexedSeq[Aggregate]) extends WindowFunction

  /** Hand the pane's elements to the runtime (a Python function on Spark, a callback locally). */
  case object ProcessElements extends WindowFunction
}

/** Beam's accumulation modes: a pane carries everything so far, or only what is new. */
sealed trait AccumulationMode
object AccumulationMode {
  case object Accumulating extends AccumulationMode
  case object Discarding extends AccumulationMode
}

/** A window operator, fully specified: the engine's whole view of a user's pipeline. */
final case class OperatorSpec(
    assigner: WindowAssigner,
    trigger: Trigger,
    evictor: Option[Evictor],
    allowedLateness: Long,
    lateOutput: Boolean,
    function: WindowFunction,
    accumulation: AccumulationMode
) {
  require(allowedLateness >= 0, s"allowedLateness must not be negative, got $allowedLateness")
  if (assigner.isMerging && !trigger.canMerge)
    throw new IllegalArgumentException(
      s"$trigger cannot be used with merging (session) windows: it cannot merge its state"
    )

  /** Elements are buffered when an evictor or a process function needs them. */
  val keepsElements: Boolean = evictor.isDefined || function == WindowFunction.ProcessElements

  /** Trigger state slots per window, numbered once here. */
  val triggerSlots: Int = trigger.bind(0)
}
