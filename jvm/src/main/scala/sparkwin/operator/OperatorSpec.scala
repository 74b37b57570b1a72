package sparkwin.operator

import sparkwin.core.agg.Aggregate
import sparkwin.core.evictor.Evictor
import sparkwin.core.trigger.{Trigger, TriggerLayout}
import sparkwin.core.window.WindowAssigner

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

/** A window operator, fully specified: the engine's whole view of a user's pipeline. How it
  * runs (which algorithm, which state layout) is not part of it: [[Selection]] decides that.
  */
final case class OperatorSpec(
    assigner: WindowAssigner,
    trigger: Trigger,
    evictor: Option[Evictor],
    allowedLateness: Long,
    lateOutput: Boolean,
    function: WindowFunction,
    accumulation: AccumulationMode,
    ansi: Boolean = true, // Spark's spark.sql.ansi.enabled: what an overflowing sum gives
    // Aggregates whose panes also go out as their elements (right after each result), for
    // aggregates a runtime computes per pane itself (pandas aggregates, in Python).
    emitsElements: Boolean = false
) {
  require(allowedLateness >= 0, s"allowedLateness must not be negative, got $allowedLateness")
  if (assigner.isMerging && !trigger.canMerge)
    throw new IllegalArgumentException(
      s"$trigger cannot be used with merging (session) windows: it cannot merge its state"
    )

  /** Elements are buffered when an evictor, a process function or a runtime's aggregates need them. */
  val keepsElements: Boolean =
    evictor.isDefined || function == WindowFunction.ProcessElements || emitsElements

  /** The declarative aggregates, in plan order; none for a process function. */
  lazy val aggregates: IndexedSeq[Aggregate] = function match {
    case WindowFunction.Aggregates(a) => a
    case WindowFunction.ProcessElements => IndexedSeq.empty
  }

  // What Selection decides from the spec, asked often enough to keep.
  lazy val combinable: Boolean = Selection.combinable(this)
  lazy val sliceable: Boolean = Selection.sliceable(this)
  lazy val sessionFastPath: Boolean = Selection.sessionFastPath(this)

  /** Where the trigger tree keeps its per-window state: a slot and a full name per descriptor. */
  lazy val triggerLayout: TriggerLayout = new TriggerLayout(trigger)
}
