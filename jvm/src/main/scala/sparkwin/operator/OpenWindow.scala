package sparkwin.operator

import sparkwin.core.Element
import sparkwin.core.agg.{Accumulator, Aggregate, SumOverflow}
import sparkwin.core.window.Window

/** A window a key's state holds, as a reader of a checkpoint sees it (`sparkwin.state`): its
  * bounds, what a pane fired now would carry, and its pane and trigger bookkeeping. Nothing here
  * moves the window: it is a copy of what the state says.
  *
  * @param window the window as its panes name it
  * @param results each aggregate's value over what the window holds now (null for a pipeline
  *   with a process function); an overflowing sum is what Spark would give (wrapped, or null
  *   under ANSI)
  * @param elements how many elements the window keeps (-1: it keeps running aggregates only)
  * @param panes how many panes it has fired (the next one's index)
  * @param onTimeFired whether an on-time or late pane went out (the next is LATE)
  * @param closed whether a finished trigger closed it (later elements are dropped)
  * @param trigger the trigger's state slots that hold a value, by name
  */
final case class OpenWindow(
    window: Window,
    results: Array[Any],
    elements: Long,
    panes: Long,
    onTimeFired: Boolean,
    closed: Boolean,
    trigger: Seq[(String, Any)]
)

object OpenWindow {

  /** The values of `accs` as a pane gives them. */
  def resultsOf(accs: Array[Accumulator], ansi: Boolean): Array[Any] =
    Accumulator.results(accs).map {
      case o: SumOverflow => if (ansi) null else o.wrapped
      case v => v
    }

  /** The aggregates' values over `elements`, as a pane would fold them. */
  def resultsOver(
      aggregates: Array[Aggregate],
      elements: java.util.List[Element],
      ansi: Boolean
  ): Array[Any] = {
    val accs = Accumulator.fresh(aggregates)
    elements.forEach(e => Accumulator.addAll(accs, e.record, e.timestamp))
    resultsOf(accs, ansi)
  }
}
