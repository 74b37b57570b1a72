package sparkwin.operator

import sparkwin.core._
import sparkwin.operator.store._

import sparkwin.core.agg.Aggregate
import sparkwin.core.evictor.Evictor
import sparkwin.core.trigger.Trigger
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

  /** Whether elements may be pre-aggregated before they reach the operator (Spark's map side):
    * only when no element is ever seen on its own. Tumbling or sliding event-time windows
    * with the default event-time trigger (which ignores the element), order-blind aggregates
    * (count, sum, avg, min, max) without an evictor, and no allowed lateness and no late side
    * output (so an element in a late window is only counted, and a late window never fires
    * per element).
    */
  lazy val combinable: Boolean = {
    val fixedWindows = alignedGrid.isDefined
    // Grouping reorders elements within a window, so only aggregates blind to order qualify
    // (first/last break ties by arrival; collected lists and sets keep arrival order).
    fixedWindows && trigger == sparkwin.core.trigger.EventTimeTrigger && evictor.isEmpty && orderBlindAggregates &&
    allowedLateness == 0 && !lateOutput
  }

  /** Whether [[SlicingWindowOperator]] runs the pipeline: tumbling or sliding event-time
    * windows, the default event-time trigger, no evictor, aggregates and no allowed lateness
    * (so every window fires exactly once, at its end, and never per element). A sliding window
    * is the merge of its slices, so there only aggregates whose merge is blind to how the
    * window was cut qualify (collected lists keep arrival order, which slices do not).
    */
  lazy val sliceable: Boolean =
    alignedGrid.exists { case (size, slide) =>
      val slices = size / SlicingWindowOperator.sliceWidth(size, slide)
      val aggregatesFit = function match {
        case WindowFunction.Aggregates(aggs) =>
          slices == 1 || aggs.forall {
            case _: Aggregate.CollectList | _: Aggregate.CollectSet => false
            case _ => true
          }
        case _ => false
      }
      // A slide longer than the size leaves gaps that no window covers: not sliced.
      aggregatesFit && slide <= size && slices <= SlicingWindowOperator.MaxSlicesPerWindow &&
      trigger == sparkwin.core.trigger.EventTimeTrigger && evictor.isEmpty && allowedLateness == 0
    }

  /** Whether [[SessionWindowOperator]] runs the pipeline: event-time sessions with a fixed
    * gap, the default event-time trigger, no evictor, no allowed lateness, and aggregates
    * blind to the order in which merged sessions are folded together (count, sum, avg, min,
    * max).
    */
  lazy val sessionFastPath: Boolean = {
    val fixedGapSessions = assigner match {
      case s: sparkwin.core.window.SessionWindows => s.isEventTime && s.gapColumn < 0
      case _ => false
    }
    fixedGapSessions && trigger == sparkwin.core.trigger.EventTimeTrigger && evictor.isEmpty &&
    allowedLateness == 0 && orderBlindAggregates
  }

  private def orderBlindAggregates: Boolean = function match {
    case WindowFunction.Aggregates(aggs) =>
      aggs.forall {
        case _: Aggregate.Count | _: Aggregate.Sum | _: Aggregate.Avg | _: Aggregate.Min | _: Aggregate.Max =>
          true
        case _ => false
      }
    case _ => false
  }

  /** The declarative aggregates, in plan order; none for a process function. */
  lazy val aggregates: IndexedSeq[Aggregate] = function match {
    case WindowFunction.Aggregates(a) => a
    case WindowFunction.ProcessElements => IndexedSeq.empty
  }

  /** The slice width when the pipeline is sliced, `gcd(size, slide)`; 0 when it is not. */
  lazy val sliceWidth: Long =
    if (!sliceable) 0L
    else alignedGrid.map { case (size, slide) => SlicingWindowOperator.sliceWidth(size, slide) }.get

  /** (size, slide) of event-time tumbling or sliding windows. */
  private def alignedGrid: Option[(Long, Long)] = assigner match {
    case sparkwin.core.window.AlignedWindows(size, slide, _, true) => Some((size, slide))
    case _ => None
  }

  /** Trigger state slots per window, numbered once here. */
  val triggerSlots: Int = trigger.bind(0)
}
