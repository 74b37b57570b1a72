package sparkwin.operator

import sparkwin.core.agg.{Aggregate, PackedAggregates}
import sparkwin.core.trigger.EventTimeTrigger
import sparkwin.core.window.{AlignedWindows, SessionWindows, StormWindows}

/** The one table that decides how a spec runs: which algorithm, over which state layout.
  *
  * | algorithm | runs                                                          | layouts       |
  * |-----------|---------------------------------------------------------------|---------------|
  * | storm     | Storm's windows                                               | keyed         |
  * | sliced    | aligned event-time windows, default trigger, aggregates, no lateness, no evictor | keyed, packed |
  * | session   | fixed-gap event-time sessions, default trigger, order-blind aggregates, no lateness, no evictor | keyed, packed |
  * | general   | everything else: Flink's window operator with merging and evictors | keyed         |
  *
  * The packed layout (state in primitive arrays by key id) needs a backend holding every key
  * with dense ids (the local runtime) and aggregates that pack into longs. A key's state records
  * the algorithm and layout that wrote it (`store.KeyStateCodec`), so a choice that changes
  * between runs of one checkpoint is refused instead of misread.
  */
object Selection {

  /** The algorithms, as a key's state records which one wrote it ([[store.Algorithm]]). */
  type Algorithm = sparkwin.operator.store.Algorithm
  val Algorithm: sparkwin.operator.store.Algorithm.type = sparkwin.operator.store.Algorithm

  /** The state layouts, as a key's state records which one wrote it ([[store.Layout]]). */
  type Layout = sparkwin.operator.store.Layout
  val Layout: sparkwin.operator.store.Layout.type = sparkwin.operator.store.Layout

  /** What runs a spec, and why (for `describe()` and error messages). */
  final case class Choice(algorithm: Algorithm, layout: Layout, reason: String) {
    override def toString: String = s"$algorithm/$layout ($reason)"
  }

  /** Slices per window beyond which the packed layout stops paying: it fires a window for all
    * keys at once, gathering every slice of the window over every page of key ids, where the
    * keyed layout visits only each key's own slices. Sliced windows with more run keyed.
    */
  val MaxPackedSlicesPerWindow = 256L

  /** The algorithm and layout for `spec`; `packable`: the backend allows the packed layouts. */
  def choose(spec: OperatorSpec, packable: Boolean): Choice = {
    import Algorithm._
    def layout(packs: Boolean) = if (packable && packs) Layout.Packed else Layout.Keyed
    spec.assigner match {
      case s: StormWindows if !s.isEventTime =>
        Choice(StormArrival, Layout.Keyed, "Storm windows in arrival order")
      case _: StormWindows => Choice(Storm, Layout.Keyed, "Storm windows")
      case _ if spec.emitsElements => Choice(General, Layout.Keyed, "aggregates over the pane's elements")
      case _ if sliceable(spec) =>
        val fewSlices = alignedGrid(spec).forall { case (size, slide) =>
          size / sliceWidthOf(size, slide) <= MaxPackedSlicesPerWindow
        }
        Choice(Sliced, layout(packs(spec) && fewSlices), "aligned event-time windows, sliced")
      case _ if sessionFastPath(spec) =>
        Choice(Session, layout(packs(spec)), "fixed-gap event-time sessions")
      case _ => Choice(General, Layout.Keyed, whyGeneral(spec))
    }
  }

  /** The first thing that keeps a spec off the specialised algorithms. */
  private def whyGeneral(spec: OperatorSpec): String =
    if (spec.trigger != EventTimeTrigger) s"trigger ${spec.trigger}"
    else if (spec.evictor.isDefined) s"evictor ${spec.evictor.get}"
    else if (spec.allowedLateness > 0) s"allowed lateness ${spec.allowedLateness} ms"
    else if (spec.function == WindowFunction.ProcessElements) "a process function"
    else
      spec.assigner match {
        case AlignedWindows(size, slide, _, true) if slide > size => "a slide longer than the size"
        case AlignedWindows(_, _, _, true) => "collected lists over sliding windows keep arrival order"
        case s: SessionWindows if s.isEventTime && s.gapColumn >= 0 => "a dynamic session gap"
        case s: SessionWindows if s.isEventTime => "aggregates that depend on arrival order"
        case a if !a.isEventTime => "processing-time or global windows"
        case other => s"assigner $other"
      }

  /** Tumbling or sliding event-time windows, the default event-time trigger, no evictor,
    * aggregates and no allowed lateness: every window fires exactly once, at its end, and never
    * per element. A sliding window is the merge of its slices, so there only aggregates whose
    * merge is blind to how the window was cut qualify (collected lists keep arrival order).
    *
    * However many slices a window has, slicing never merges more than the general algorithm
    * updates: a slice with data is merged once into each window holding it, where each of its
    * elements would have updated every one of those windows.
    */
  def sliceable(spec: OperatorSpec): Boolean =
    alignedGrid(spec).exists { case (size, slide) =>
      val slices = size / sliceWidthOf(size, slide)
      val aggregatesFit = spec.function match {
        case WindowFunction.Aggregates(aggs) =>
          slices == 1 || aggs.map(_.unfiltered).forall {
            case _: Aggregate.CollectList | _: Aggregate.CollectSet => false
            case b: Aggregate.ExtremeByAll => b.tieByValue
            case _ => true
          }
        case _ => false
      }
      // A slide longer than the size leaves gaps that no window covers: not sliced.
      aggregatesFit && slide <= size && !spec.keepsElements &&
      spec.trigger == EventTimeTrigger && spec.evictor.isEmpty && spec.allowedLateness == 0
    }

  /** Event-time sessions with a fixed gap, the default trigger, no evictor, no allowed lateness
    * and aggregates blind to the order merged sessions fold in (all but first, last, collected
    * lists and sets, and min_by/max_by of values that do not order).
    */
  def sessionFastPath(spec: OperatorSpec): Boolean = {
    val fixedGapSessions = spec.assigner match {
      case s: SessionWindows => s.isEventTime && s.gapColumn < 0
      case _ => false
    }
    fixedGapSessions && spec.trigger == EventTimeTrigger && !spec.keepsElements &&
    spec.allowedLateness == 0 && orderBlind(spec)
  }

  /** Whether elements may be pre-aggregated before they reach the operator (Spark's map side):
    * only when no element is ever seen on its own. Tumbling or sliding event-time windows with
    * the default trigger (which ignores the element), order-blind aggregates without an
    * evictor, no allowed lateness and no late side output (so an element in a late window is
    * only counted, and a late window never fires per element).
    */
  def combinable(spec: OperatorSpec): Boolean =
    alignedGrid(spec).isDefined && spec.trigger == EventTimeTrigger && !spec.keepsElements &&
      orderBlind(spec) && spec.allowedLateness == 0 && !spec.lateOutput

  /** Whether a spec's aggregates all pack into longs (`core.agg.PackedAggregates`). */
  def packs(spec: OperatorSpec): Boolean =
    spec.function.isInstanceOf[WindowFunction.Aggregates] && PackedAggregates.packs(spec.aggregates)

  /** The slice width when the spec is sliced, `gcd(size, slide)`; 0 when it is not. */
  def sliceWidth(spec: OperatorSpec): Long =
    if (!sliceable(spec)) 0L
    else alignedGrid(spec).map { case (size, slide) => sliceWidthOf(size, slide) }.get

  /** The slice width of windows of `size` every `slide`: every window bound is on its grid. */
  def sliceWidthOf(size: Long, slide: Long): Long =
    java.math.BigInteger.valueOf(size).gcd(java.math.BigInteger.valueOf(slide)).longValue

  // Grouping or merging reorders elements, so only aggregates blind to order qualify
  // (first/last break ties by arrival; collected lists and sets keep arrival order). Variance
  // and percentiles merge to the same answer up to a double's last bits or within the summary's
  // bound; min_by/max_by break ties by value, and min_by_all/max_by_all keep ties sorted.
  private def orderBlind(spec: OperatorSpec): Boolean = spec.function match {
    case WindowFunction.Aggregates(aggs) =>
      aggs.map(_.unfiltered).forall {
        case _: Aggregate.Count | _: Aggregate.Sum | _: Aggregate.Avg | _: Aggregate.Min | _: Aggregate.Max =>
          true
        case _: Aggregate.Variance | _: Aggregate.CountIf | _: Aggregate.ApproxCountDistinct |
            _: Aggregate.PercentileApprox =>
          true
        case b: Aggregate.ExtremeBy => b.tieByValue
        case b: Aggregate.ExtremeByAll => b.tieByValue
        case _ => false
      }
    case _ => false
  }

  /** (size, slide) of event-time tumbling or sliding windows. */
  private def alignedGrid(spec: OperatorSpec): Option[(Long, Long)] = spec.assigner match {
    case AlignedWindows(size, slide, _, true) => Some((size, slide))
    case _ => None
  }
}
