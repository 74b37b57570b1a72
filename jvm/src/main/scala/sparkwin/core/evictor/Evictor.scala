package sparkwin.core.evictor

import java.util.{ArrayList => JList}

import sparkwin.core.Element
import sparkwin.core.trigger.DeltaFunction
import sparkwin.core.window.Window

/** What an evictor may know besides the elements. */
trait EvictorContext extends sparkwin.api.Evictor.Context {
  def currentWatermark: Long
  def currentProcessingTime: Long
}

/** Removes elements from a window's buffer, before or after the window function runs. Evictions
  * are permanent: the surviving elements are what the window keeps.
  */
sealed trait Evictor {

  /** True: evict after the window function ran (the function sees everything). */
  def doEvictAfter: Boolean

  /** Removes elements in place; `elements` are in arrival order. */
  def evict(elements: JList[Element], window: Window, ctx: EvictorContext): Unit

  def evictBefore(elements: JList[Element], window: Window, ctx: EvictorContext): Unit =
    if (!doEvictAfter) evict(elements, window, ctx)

  def evictAfter(elements: JList[Element], window: Window, ctx: EvictorContext): Unit =
    if (doEvictAfter) evict(elements, window, ctx)
}

/** A user's evictor (`sparkwin.api.Evictor`, from the user's jar), which may evict both before
  * and after the function. `description` is how the pipeline named it.
  */
final class ExtensionEvictor(val impl: sparkwin.api.Evictor, description: String) extends Evictor {
  def doEvictAfter: Boolean = false
  def evict(elements: JList[Element], window: Window, ctx: EvictorContext): Unit =
    impl.evictBefore(elements, window, ctx)
  override def evictBefore(elements: JList[Element], window: Window, ctx: EvictorContext): Unit =
    impl.evictBefore(elements, window, ctx)
  override def evictAfter(elements: JList[Element], window: Window, ctx: EvictorContext): Unit =
    impl.evictAfter(elements, window, ctx)
  override def toString: String = description
}

/** Keeps the last `maxCount` elements, in arrival order. */
final case class CountEvictor(maxCount: Long, doEvictAfter: Boolean) extends Evictor {
  require(maxCount >= 0, s"maxCount must not be negative, got $maxCount")

  def evict(elements: JList[Element], window: Window, ctx: EvictorContext): Unit = {
    val excess = elements.size - maxCount
    if (excess > 0) elements.subList(0, excess.toInt).clear()
  }
}

/** Keeps the elements within `windowSize` of the newest element's timestamp: those with
  * `timestamp > maxTimestamp - windowSize`.
  */
final case class TimeEvictor(windowSize: Long, doEvictAfter: Boolean) extends Evictor {
  require(windowSize >= 0, s"windowSize must not be negative, got $windowSize")

  def evict(elements: JList[Element], window: Window, ctx: EvictorContext): Unit =
    if (!elements.isEmpty) {
      var max = Long.MinValue
      elements.forEach(e => if (e.timestamp > max) max = e.timestamp)
      val cutoff = max - windowSize
      elements.removeIf(_.timestamp <= cutoff)
    }
}

/** Removes every element at least `threshold` away from the last element (the last element
  * itself is at distance 0, so it stays unless the threshold is 0 or less).
  */
final case class DeltaEvictor(threshold: Double, delta: DeltaFunction, doEvictAfter: Boolean)
    extends Evictor {

  def evict(elements: JList[Element], window: Window, ctx: EvictorContext): Unit =
    if (!elements.isEmpty) {
      val last = elements.get(elements.size - 1).record
      elements.removeIf(e => delta(e.record, last) >= threshold)
    }
}

/** Removes the elements whose boolean column `column` is true (false and null stay): a
  * condition, a Spark Column that Spark computed into that column before the engine.
  */
final case class ConditionEvictor(column: Int, doEvictAfter: Boolean) extends Evictor {
  def evict(elements: JList[Element], window: Window, ctx: EvictorContext): Unit =
    elements.removeIf(_.record.get(column) == java.lang.Boolean.TRUE)
}
