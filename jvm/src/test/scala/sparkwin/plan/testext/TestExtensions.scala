package sparkwin.plan.testext

import java.util.{List => JList}

import sparkwin.api._

/** Users' extensions as Scala code implements them, for ExtensionsSuite: loaded by class name
  * from the test class path, as a user's jar would be.
  */

/** Fires every `n` elements of a window and when the watermark passes its end; `version` is a
  * param so a test can change it between two runs.
  */
final class EveryN(setup: Setup) extends Trigger {
  private val n = setup.getLong("n")
  if (n <= 0) throw new IllegalArgumentException(s"param 'n' must be positive, got $n")
  private val stateVersion = setup.getLong("version", 1).toInt

  override def states: JList[String] = java.util.Arrays.asList("count")
  override def version: Int = stateVersion
  override def usesEventTimeTimers: Boolean = true

  def onElement(element: Input, timestamp: Long, window: Window, ctx: Trigger.Context): TriggerResult = {
    if (window.maxTimestamp <= ctx.currentWatermark) return TriggerResult.FIRE
    ctx.registerEventTimeTimer(window.maxTimestamp)
    val count = ctx.getLong("count", 0) + 1
    if (count >= n) { ctx.set("count", null); TriggerResult.FIRE }
    else { ctx.set("count", java.lang.Long.valueOf(count)); TriggerResult.CONTINUE }
  }

  override def onEventTime(time: Long, window: Window, ctx: Trigger.Context): TriggerResult =
    if (time == window.maxTimestamp) TriggerResult.FIRE else TriggerResult.CONTINUE

  override def canMerge: Boolean = true

  override def onMerge(window: Window, ctx: Trigger.MergeContext): Unit = {
    var total = ctx.getLong("count", 0)
    ctx.mergedValues("count").forEach(v => if (v != null) total += v.asInstanceOf[Number].longValue)
    ctx.set("count", java.lang.Long.valueOf(total))
    if (window.maxTimestamp > ctx.currentWatermark) ctx.registerEventTimeTimer(window.maxTimestamp)
  }

  override def clear(window: Window, ctx: Trigger.Context): Unit =
    ctx.deleteEventTimeTimer(window.maxTimestamp)
}

/** Sets an event-time timer without declaring the clock. */
final class SneakyTimer extends Trigger {
  def onElement(element: Input, timestamp: Long, window: Window, ctx: Trigger.Context): TriggerResult = {
    ctx.registerEventTimeTimer(window.maxTimestamp)
    TriggerResult.CONTINUE
  }
}

/** Fires on processing time (declared). */
final class ProcessingTick extends Trigger {
  override def usesProcessingTimeTimers: Boolean = true
  def onElement(element: Input, timestamp: Long, window: Window, ctx: Trigger.Context): TriggerResult = {
    ctx.registerProcessingTimeTimer(window.maxTimestamp)
    TriggerResult.CONTINUE
  }
  override def onProcessingTime(time: Long, window: Window, ctx: Trigger.Context): TriggerResult =
    TriggerResult.FIRE
}

/** Keeps state under a name it did not declare. */
final class UndeclaredState extends Trigger {
  def onElement(element: Input, timestamp: Long, window: Window, ctx: Trigger.Context): TriggerResult = {
    ctx.set("seen", java.lang.Boolean.TRUE)
    TriggerResult.CONTINUE
  }
}

/** Declares one state twice. */
final class TwiceDeclared extends Trigger {
  override def states: JList[String] = java.util.Arrays.asList("a", "a")
  def onElement(element: Input, timestamp: Long, window: Window, ctx: Trigger.Context): TriggerResult =
    TriggerResult.CONTINUE
}

/** Windows of `sizeMs` starting at multiples of it, shifted by `shiftMs`; with `broken`, the
  * empty window `[ts, ts)`.
  */
final class ShiftedWindows(setup: Setup) extends WindowAssigner {
  private val size = setup.getLong("sizeMs")
  private val shift = setup.getLong("shiftMs", 0)
  private val broken = setup.getBoolean("broken", false)
  private val eventTime = setup.getBoolean("eventTime", true)

  def isEventTime: Boolean = eventTime

  def assignWindows(element: Input, timestamp: Long, ctx: WindowAssigner.Context): Unit = {
    val t = if (eventTime) timestamp else ctx.currentProcessingTime
    val start = Math.floorDiv(t - shift, size) * size + shift
    if (broken) ctx.addWindow(t, t) else ctx.addWindow(start, start + size)
  }
}

/** Keeps the `k` elements with the largest `column`, before the function runs. */
final class KeepLargest(setup: Setup) extends Evictor {
  private val column = setup.column("column")
  private val k = setup.getLong("k").toInt

  override def evictBefore(elements: JList[_ <: Element], window: Window, ctx: Evictor.Context): Unit = {
    val sorted = new java.util.ArrayList[Element](elements)
    sorted.sort((a, b) => java.lang.Long.compare(b.record.getLong(column), a.record.getLong(column)))
    val keep = new java.util.HashSet[Element](sorted.subList(0, math.min(k, sorted.size)))
    elements.removeIf(e => !keep.contains(e))
  }
}

/** max - min of its one long column; `version` is a param so a test can change it. */
final class Spread(setup: Setup) extends Aggregate {
  private val columns = setup.columns()
  if (columns.length != 1 || setup.columnType(columns(0)) != "bigint")
    throw new IllegalArgumentException("columns: Spread takes one bigint column")
  private val column = columns(0)
  private val stateVersion = setup.getLong("version", 1).toInt

  def resultType: String = "bigint"
  override def version: Int = stateVersion

  def newAccumulator(): Aggregate.Accumulator = new Aggregate.Accumulator {
    var lo: java.lang.Long = null
    var hi: java.lang.Long = null
    def add(element: Input, timestamp: Long): Unit =
      if (!element.isNullAt(column)) offer(element.getLong(column), element.getLong(column))
    private def offer(a: Long, b: Long): Unit = {
      lo = if (lo == null) a else math.min(lo, a)
      hi = if (hi == null) b else math.max(hi, b)
    }
    def merge(other: Aggregate.Accumulator): Unit = {
      val o = other.save()
      if (o(0) != null) offer(o(0).asInstanceOf[Long], o(1).asInstanceOf[Long])
    }
    def result(): AnyRef = if (lo == null) null else Integer.valueOf((hi - lo).toInt) // converted to bigint
    def save(): Array[AnyRef] = Array(lo, hi)
    def restore(values: Array[AnyRef]): Unit = {
      lo = values(0).asInstanceOf[java.lang.Long]; hi = values(1).asInstanceOf[java.lang.Long]
    }
  }
}

/** An aggregate whose result type sparkwin does not take. */
final class MapResult extends Aggregate {
  def resultType: String = "map<string,int>"
  def newAccumulator(): Aggregate.Accumulator = throw new UnsupportedOperationException
}

/** Not an extension at all. */
final class NotAnExtension

/** No constructor sparkwin can call. */
final class NeedsAString(name: String) extends Trigger {
  def onElement(element: Input, timestamp: Long, window: Window, ctx: Trigger.Context): TriggerResult =
    TriggerResult.CONTINUE
}
