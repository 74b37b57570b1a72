package sparkwin.operator.store

import java.util.{ArrayList => JList}

import sparkwin.core.Element
import sparkwin.core.agg.Accumulator

/** One key's engine state. Each algorithm keeps its own kind (see `operator.Selection`), and the
  * codec writes which algorithm wrote it, so a state is only ever read by the algorithm that
  * understands it. Timers are not part of it: they live in the runtime's queues.
  */
abstract class KeyState {

  /** True when nothing is left: the runtime then drops the key's state. */
  def isEmpty: Boolean

  /** State entries, for tests and the harness (0 once every window is cleaned up). */
  def numEntries: Int

  /** Forgets what the state caches for speed, keeping what it has allocated, so an emptied state
    * can serve as a new key's (the local runtime's reuse) or stand for one just read from a store.
    */
  def reset(): Unit = ()
}

/** A window's contents: running aggregates, or the elements themselves when an evictor or a
  * process function needs them.
  */
final class WindowContents(var accumulators: Array[Accumulator], var elements: JList[Element]) {
  def isEmpty: Boolean = accumulators == null && (elements == null || elements.isEmpty)
}
