package sparkwin.core.window

import scala.collection.mutable

/** A key's session windows and, for each, the window its state is stored under.
  *
  * When windows merge, one of the merged windows' state windows is kept for the merged
  * window, so state never has to be moved; the others' state is merged into it. The mapping is
  * part of the key's persisted state.
  */
final class MergingWindowSet(val mapping: mutable.HashMap[TimeWindow, TimeWindow]) {

  def this() = this(mutable.HashMap.empty)

  /** The window whose namespace holds `window`'s contents; null if `window` is not live. */
  def stateWindow(window: TimeWindow): TimeWindow = mapping.getOrElse(window, null)

  /** Forgets a window (it was cleaned up or was late on arrival). */
  def retireWindow(window: TimeWindow): Unit =
    if (mapping.remove(window).isEmpty)
      throw new IllegalStateException(s"$window is not in the merging window set")

  def isEmpty: Boolean = mapping.isEmpty

  def size: Int = mapping.size

  def windows: Iterable[TimeWindow] = mapping.keys

  /** Adds `newWindow`, merging it with the windows it overlaps or touches. For every merge,
    * `onMerge(result, mergedWindows, resultStateWindow, mergedStateWindows)` runs before the
    * mapping is observed by anyone else; `mergedWindows` are the previously live windows that
    * the result replaces (the new window has no state yet and is never among them).
    * `checkMerge` sees every merge result first and may throw to refuse the whole addition.
    * Returns the window the new element ends up in.
    */
  def addWindow(
      newWindow: TimeWindow,
      assigner: MergingWindowAssigner,
      onMerge: (TimeWindow, Seq[TimeWindow], TimeWindow, Seq[TimeWindow]) => Unit,
      checkMerge: TimeWindow => Unit = _ => ()
  ): TimeWindow = {
    // Equal to a live window: it is that window (live windows never overlap each other).
    if (mapping.contains(newWindow)) return newWindow
    // The common cases without sorting: the new window touches no live window, or lies
    // inside the one it touches.
    var touching = 0
    var only: TimeWindow = null
    val it = mapping.keysIterator
    while (it.hasNext) {
      val w = it.next()
      if (w.intersects(newWindow)) { touching += 1; only = w }
    }
    if (touching == 0) { mapping(newWindow) = newWindow; return newWindow }
    if (touching == 1 && only.start <= newWindow.start && only.end >= newWindow.end) return only
    val all = mapping.keys.toVector :+ newWindow
    val groups = assigner.mergeWindows(all)
    // Refuse a bad merge before anything changes, so the set stays consistent.
    groups.foreach { case (merged, _) => checkMerge(merged) }
    var result = newWindow
    var newMerged = false
    for ((merged, members) <- groups) {
      val old = members.filterNot(_ == newWindow)
      if (old.size < members.size) { newMerged = true; result = merged }
      // Keep the state window of an existing member; its namespace receives the others'.
      val keep = mapping(old.head)
      val stateWindows = old.map(mapping(_))
      old.foreach(mapping.remove)
      mapping(merged) = keep
      val previous = old.filterNot(_ == merged)
      // A new window inside an existing one changes nothing but the result window.
      if (previous.nonEmpty) onMerge(merged, previous, keep, stateWindows.filterNot(_ == keep))
    }
    if (!newMerged) mapping(newWindow) = newWindow
    result
  }

  def copy(): MergingWindowSet = new MergingWindowSet(mapping.clone())
}
