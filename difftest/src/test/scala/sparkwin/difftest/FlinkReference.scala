package sparkwin.difftest

import java.time.Duration

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.flink.api.common.ExecutionConfig
import org.apache.flink.api.common.functions.AggregateFunction
import org.apache.flink.api.common.state.{MergingState, State, StateDescriptor}
import org.apache.flink.api.common.typeinfo.{TypeInformation, Types}
import org.apache.flink.api.java.functions.KeySelector
import org.apache.flink.api.java.tuple.Tuple3
import org.apache.flink.metrics.{Counter, MetricGroup}
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction
import org.apache.flink.streaming.api.windowing.assigners.{
  DynamicEventTimeSessionWindows,
  EventTimeSessionWindows,
  GlobalWindows,
  SessionWindowTimeGapExtractor,
  SlidingEventTimeWindows,
  SlidingProcessingTimeWindows,
  TumblingEventTimeWindows,
  TumblingProcessingTimeWindows,
  WindowAssigner
}
import org.apache.flink.streaming.api.windowing.evictors.{CountEvictor, Evictor, TimeEvictor}
import org.apache.flink.streaming.api.windowing.triggers.{
  ContinuousEventTimeTrigger,
  ContinuousProcessingTimeTrigger,
  CountTrigger,
  EventTimeTrigger,
  ProcessingTimeTrigger,
  ProcessingTimeoutTrigger,
  PurgingTrigger,
  Trigger,
  TriggerResult
}
import org.apache.flink.streaming.api.windowing.windows.{GlobalWindow, TimeWindow, Window}
import org.apache.flink.streaming.runtime.operators.windowing.{WindowOperator, WindowOperatorBuilder}
import org.apache.flink.runtime.event.WatermarkEvent
import org.apache.flink.streaming.api.watermark.Watermark
import org.apache.flink.streaming.runtime.io.PushingAsyncDataInput
import org.apache.flink.streaming.runtime.streamrecord.{LatencyMarker, RecordAttributes, StreamRecord}
import org.apache.flink.streaming.runtime.watermarkstatus.{StatusWatermarkValve, WatermarkStatus}
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness
import org.apache.flink.util.{Collector, OutputTag}

/** Flink's own window operator, built as `WindowedStream` builds it (`WindowOperatorBuilder`
  * with the assigner's default trigger, then `.trigger/.evictor/.allowedLateness/
  * .sideOutputLateData` and `.aggregate(aggregateFunction, processWindowFunction)`), run in
  * Flink's keyed operator test harness.
  *
  * Flink has no pane metadata. The trigger handed to the builder is the real trigger wrapped in
  * [[FlinkReference.Observed]], which only forwards calls and records what Flink did: which
  * callback (element, or a timer and its time) led to each firing, when a window's state was
  * created, merged and cleared. From those observations [[PaneAnnotator]] derives the pane
  * fields by DESIGN.md's rules, so sparkwin's are checked against Flink's window lifecycle.
  */
final class FlinkReference(val pipeline: Pipeline) {
  import FlinkReference._

  val annotator = new PaneAnnotator(pipeline)
  private val assigner: WindowAssigner[AnyRef, Window] = assignerOf(pipeline.assigner)
  private val trigger: Trigger[AnyRef, Window] =
    pipeline.trigger.map(triggerOf).getOrElse(assigner.getDefaultTrigger)
  private val builder = new WindowOperatorBuilder[In, String, Window](
    assigner,
    assigner.getDefaultTrigger,
    new ExecutionConfig,
    inType,
    new KeyOf,
    Types.STRING
  )
  builder.trigger(new Observed(trigger, annotator))
  pipeline.evictor.foreach(e => builder.evictor(evictorOf(e)))
  if (pipeline.lateness > 0) builder.allowedLateness(Duration.ofMillis(pipeline.lateness))
  if (pipeline.sideOutput) builder.sideOutputLateData(lateTag)
  private val operator =
    builder.aggregate(new Stats, new Emit(annotator), statsType)

  val harness =
    new KeyedOneInputStreamOperatorTestHarness[String, In, String](operator, new KeyOf, Types.STRING)
  harness.open()
  annotator.currentKey = () => harness.getOperator.getCurrentKey.asInstanceOf[String]

  /** Elements that no window took (Flink drops them silently unless late). */
  var noWindow = 0L

  /** (key, step) of elements whose session window equals a live window made by a merge. */
  val equalToMerged = scala.collection.mutable.ArrayBuffer.empty[(String, Int)]

  def step_=(i: Int): Unit = annotator.step = i
  def step: Int = annotator.step

  def element(e: Ev): Unit = {
    if (pipeline.eventTime) {
      val ctx = new WindowAssigner.WindowAssignerContext {
        def getCurrentProcessingTime: Long = harness.getProcessingTime
      }
      if (assigner.assignWindows(tuple(e), e.ts, ctx).isEmpty) noWindow += 1
    }
    val gap = pipeline.assigner match {
      case Assigner.Session(g) => g
      case Assigner.DynamicSession => e.value
      case _ => 0L
    }
    if (gap > 0 && annotator.isMergedLive(e.key, new TimeWindow(e.ts, e.ts + gap)))
      equalToMerged += ((e.key, step))
    watermarkAt(step) = currentWatermark
    harness.processElement(tuple(e), e.ts)
  }

  /** The operator's watermark: the last one the harness was given. */
  var currentWatermark: Long = Long.MinValue

  /** The operator's watermark when each element step was processed. */
  val watermarkAt = scala.collection.mutable.HashMap.empty[Int, Long]

  /** Steps at which the valve emitted a watermark. */
  val valveEmitted = scala.collection.mutable.HashSet.empty[Int]

  private def toOperator(wm: Long): Unit = {
    currentWatermark = wm
    harness.processWatermark(wm)
  }

  private val valve =
    if (pipeline.channels > 1) new StatusWatermarkValve(pipeline.channels) else null
  private val valveOutput = new PushingAsyncDataInput.DataOutput[In] {
    def emitRecord(r: StreamRecord[In]): Unit = throw new IllegalStateException("no records here")
    def emitWatermark(w: Watermark): Unit = { valveEmitted += step; toOperator(w.getTimestamp) }
    def emitWatermarkStatus(s: WatermarkStatus): Unit = harness.processWatermarkStatus(s)
    def emitLatencyMarker(m: LatencyMarker): Unit = ()
    def emitRecordAttributes(a: RecordAttributes): Unit = ()
    def emitWatermark(w: WatermarkEvent): Unit = ()
  }

  /** A watermark: on one channel through the valve, or (one channel) straight to the operator. */
  def watermark(wm: Long, channel: Int = 0): Unit =
    if (valve == null) toOperator(wm) else valve.inputWatermark(new Watermark(wm), channel, valveOutput)
  def markIdle(channel: Int): Unit = valve.inputWatermarkStatus(WatermarkStatus.IDLE, channel, valveOutput)
  def markActive(channel: Int): Unit =
    valve.inputWatermarkStatus(WatermarkStatus.ACTIVE, channel, valveOutput)
  def processingTime(t: Long): Unit = harness.setProcessingTime(t)

  /** The end of input: event time (or processing time) to +infinity. Global windows never end;
    * a watermark of +infinity would make a continuous trigger on them fire forever (in both
    * systems), so their input just stops.
    */
  def end(): Unit =
    if (pipeline.eventTime) toOperator(Long.MaxValue)
    else if (pipeline.assigner != Assigner.Global) harness.setProcessingTime(Long.MaxValue)

  def drain(): StepOut[FlinkPane] = {
    val out = harness.getOutput
    val n = out.asScala.count(_.isInstanceOf[StreamRecord[_]])
    out.clear()
    val panes = annotator.takePanes()
    require(panes.size == n, s"the harness emitted $n records for ${panes.size} observed panes")
    val side = harness.getSideOutput(lateTag)
    val late =
      if (side == null) Vector.empty
      else {
        val l = side.asScala.map(r => ev(r.getValue)).toVector
        side.clear()
        l
      }
    StepOut(panes, late)
  }

  def numStateEntries: Int =
    harness.numKeyedStateEntries() + harness.numEventTimeTimers() + harness.numProcessingTimeTimers()

  /** Flink's `numLateRecordsDropped` counter (late elements with no side output). */
  def lateDropped: Long = {
    val f = classOf[WindowOperator[_, _, _, _, _]].getDeclaredField("numLateRecordsDropped")
    f.setAccessible(true)
    f.get(harness.getOperator).asInstanceOf[Counter].getCount
  }

  def close(): Unit = harness.close()
}

/** A Flink firing: the pane fields derived by [[PaneAnnotator]], and what caused it. */
final case class FlinkPane(pane: Pane, cause: Cause)

sealed trait Cause
object Cause {
  case object Element extends Cause
  final case class EventTimer(time: Long) extends Cause
  final case class ProcessingTimer(time: Long) extends Cause
}

object FlinkReference {
  type In = Tuple3[String, java.lang.Long, java.lang.Long]

  val inType: TypeInformation[In] = Types.TUPLE[In](Types.STRING, Types.LONG, Types.LONG)
  val statsType: TypeInformation[Array[Long]] =
    Types.PRIMITIVE_ARRAY(Types.LONG).asInstanceOf[TypeInformation[Array[Long]]]
  val lateTag = new OutputTag[In]("late", inType)

  def tuple(e: Ev): In = new Tuple3(e.key, java.lang.Long.valueOf(e.ts), java.lang.Long.valueOf(e.value))
  def ev(t: In): Ev = Ev(t.f0, t.f1.longValue, t.f2.longValue)

  final class KeyOf extends KeySelector[In, String] {
    def getKey(t: In): String = t.f0
  }

  /** The dynamic session gap: the element's value. */
  final class GapOf extends SessionWindowTimeGapExtractor[In] {
    def extract(t: In): Long = t.f2.longValue
  }

  /** count, sum, min, max of `v`. */
  final class Stats extends AggregateFunction[In, Array[Long], Array[Long]] {
    def createAccumulator(): Array[Long] = Array(0L, 0L, Long.MaxValue, Long.MinValue)
    def add(t: In, a: Array[Long]): Array[Long] = {
      val v = t.f2.longValue
      Array(a(0) + 1, a(1) + v, math.min(a(2), v), math.max(a(3), v))
    }
    def getResult(a: Array[Long]): Array[Long] = a.clone()
    def merge(a: Array[Long], b: Array[Long]): Array[Long] =
      Array(a(0) + b(0), a(1) + b(1), math.min(a(2), b(2)), math.max(a(3), b(3)))
  }

  /** The window function: hands each result to the annotator and emits it. */
  final class Emit(@transient annotator: PaneAnnotator)
      extends ProcessWindowFunction[Array[Long], String, String, Window] {
    override def process(
        key: String,
        context: ProcessWindowFunction[Array[Long], String, String, Window]#Context,
        elements: java.lang.Iterable[Array[Long]],
        out: Collector[String]
    ): Unit = {
      val a = elements.iterator().next()
      annotator.fired(key, context.window(), a)
      out.collect(s"$key ${context.window()} ${a.mkString(",")}")
    }
  }

  def assignerOf(a: Assigner): WindowAssigner[AnyRef, Window] = {
    val w: WindowAssigner[_, _] = a match {
      case Assigner.Tumbling(size, offset, true) =>
        TumblingEventTimeWindows.of(Duration.ofMillis(size), Duration.ofMillis(offset))
      case Assigner.Tumbling(size, offset, false) =>
        TumblingProcessingTimeWindows.of(Duration.ofMillis(size), Duration.ofMillis(offset))
      case Assigner.Sliding(size, slide, offset, true) =>
        SlidingEventTimeWindows.of(
          Duration.ofMillis(size),
          Duration.ofMillis(slide),
          Duration.ofMillis(offset)
        )
      case Assigner.Sliding(size, slide, offset, false) =>
        SlidingProcessingTimeWindows.of(
          Duration.ofMillis(size),
          Duration.ofMillis(slide),
          Duration.ofMillis(offset)
        )
      case Assigner.Session(gap) => EventTimeSessionWindows.withGap(Duration.ofMillis(gap))
      case Assigner.DynamicSession => DynamicEventTimeSessionWindows.withDynamicGap[In](new GapOf)
      case Assigner.Global => GlobalWindows.create()
    }
    w.asInstanceOf[WindowAssigner[AnyRef, Window]]
  }

  def triggerOf(t: TriggerSpec): Trigger[AnyRef, Window] = {
    val r: Trigger[_, _] = t match {
      case TriggerSpec.EventTime => EventTimeTrigger.create()
      case TriggerSpec.ProcessingTime => ProcessingTimeTrigger.create()
      case TriggerSpec.Count(n) => CountTrigger.of[Window](n)
      case TriggerSpec.Purging(nested) => PurgingTrigger.of(triggerOf(nested))
      case TriggerSpec.ContinuousEventTime(i) => ContinuousEventTimeTrigger.of[Window](Duration.ofMillis(i))
      case TriggerSpec.ContinuousProcessingTime(i) =>
        ContinuousProcessingTimeTrigger.of[Window](Duration.ofMillis(i))
      case TriggerSpec.ProcessingTimeout(nested, timeout, reset, clear) =>
        ProcessingTimeoutTrigger.of(triggerOf(nested), Duration.ofMillis(timeout), reset, clear)
    }
    r.asInstanceOf[Trigger[AnyRef, Window]]
  }

  def evictorOf(e: EvictorSpec): Evictor[AnyRef, Window] = {
    val r: Evictor[_, _] = e match {
      case EvictorSpec.CountEv(max, after) => CountEvictor.of[Window](max, after)
      case EvictorSpec.TimeEv(size, after) => TimeEvictor.of[Window](Duration.ofMillis(size), after)
    }
    r.asInstanceOf[Evictor[AnyRef, Window]]
  }

  def maxTimestamp(w: Window): Long = w.maxTimestamp()

  def bounds(w: Window): (Option[Long], Option[Long]) = w match {
    case t: TimeWindow => (Some(t.getStart), Some(t.getEnd))
    case _: GlobalWindow => (None, None)
    case other => throw new IllegalStateException(s"unexpected window $other")
  }

  /** Forwards every call to the real trigger, telling the annotator what happened; the
    * trigger's timer deletions go through a context that reports them too.
    */
  final class Observed(inner: Trigger[AnyRef, Window], @transient annotator: PaneAnnotator)
      extends Trigger[AnyRef, Window] {
    def onElement(
        element: AnyRef,
        timestamp: Long,
        window: Window,
        ctx: Trigger.TriggerContext
    ): TriggerResult = {
      annotator.onElement(window, ctx.getCurrentWatermark, ctx.getCurrentProcessingTime)
      annotator.result(window, inner.onElement(element, timestamp, window, new Ctx(ctx, window, annotator)))
    }
    def onEventTime(time: Long, window: Window, ctx: Trigger.TriggerContext): TriggerResult = {
      annotator.onTimer(window, Cause.EventTimer(time), ctx.getCurrentWatermark, ctx.getCurrentProcessingTime)
      annotator.result(window, inner.onEventTime(time, window, new Ctx(ctx, window, annotator)))
    }
    def onProcessingTime(time: Long, window: Window, ctx: Trigger.TriggerContext): TriggerResult = {
      annotator.onTimer(
        window,
        Cause.ProcessingTimer(time),
        ctx.getCurrentWatermark,
        ctx.getCurrentProcessingTime
      )
      annotator.result(window, inner.onProcessingTime(time, window, new Ctx(ctx, window, annotator)))
    }
    override def canMerge: Boolean = inner.canMerge
    override def onMerge(window: Window, ctx: Trigger.OnMergeContext): Unit = {
      annotator.onMerge(window, ctx.getCurrentWatermark)
      inner.onMerge(window, new MergeCtx(ctx, window, annotator))
    }
    def clear(window: Window, ctx: Trigger.TriggerContext): Unit = {
      annotator.onClear(window)
      try inner.clear(window, new Ctx(ctx, window, annotator))
      finally annotator.clearDone()
    }
    override def toString: String = inner.toString
  }

  class Ctx(inner: Trigger.TriggerContext, window: Window, annotator: PaneAnnotator)
      extends Trigger.TriggerContext {
    def getCurrentProcessingTime: Long = inner.getCurrentProcessingTime
    def getMetricGroup: MetricGroup = inner.getMetricGroup
    def getCurrentWatermark: Long = inner.getCurrentWatermark
    def registerProcessingTimeTimer(time: Long): Unit = {
      annotator.onRegisterProcessingTimer(window, time, inner.getCurrentProcessingTime)
      inner.registerProcessingTimeTimer(time)
    }
    def registerEventTimeTimer(time: Long): Unit = inner.registerEventTimeTimer(time)
    def deleteProcessingTimeTimer(time: Long): Unit = {
      annotator.onDeleteTimer(window, time, eventTime = false)
      inner.deleteProcessingTimeTimer(time)
    }
    def deleteEventTimeTimer(time: Long): Unit = {
      annotator.onDeleteTimer(window, time, eventTime = true)
      inner.deleteEventTimeTimer(time)
    }
    def getPartitionedState[S <: State](d: StateDescriptor[S, _]): S = inner.getPartitionedState(d)
  }

  final class MergeCtx(inner: Trigger.OnMergeContext, window: Window, annotator: PaneAnnotator)
      extends Ctx(inner, window, annotator)
      with Trigger.OnMergeContext {
    def mergePartitionedState[S <: MergingState[_, _]](d: StateDescriptor[S, _]): Unit =
      inner.mergePartitionedState(d)
  }
}

/** Derives pane fields for Flink's firings by DESIGN.md's rules ("Panes (Beam) for every
  * pipeline"), from Flink's own window lifecycle as the observed trigger reports it:
  *  - a window instance starts with its first element (or as the result of a merge) and ends
  *    when Flink clears it at cleanup (or merges it away);
  *  - timing: LATE after an ON_TIME or LATE pane; EARLY while the clock is before the window's
  *    max timestamp; LATE when the window appeared after its end had passed; else ON_TIME. The
  *    clock is the watermark (processing time for processing-time windows) for an element, the
  *    timer's own time for a timer of the window's time domain;
  *  - index counts the instance's panes; last: cleanup follows the firing.
  * It also counts elements that never reached a pane before cleanup (`unfiredAtCleanup`), and
  * notices a trigger deleting the timer at the window's cleanup time (an exclusion).
  */
final class PaneAnnotator(pipeline: Pipeline) {
  import FlinkReference.{bounds, maxTimestamp}

  private final class Instance(var createdLate: Boolean, val byMerge: Boolean = false) {
    var index = 0L
    var nonEarlyFired = false
    var sinceLastPane = 0L
  }

  var currentKey: () => String = () => throw new IllegalStateException("not open")
  private val usesWatermark = pipeline.eventTime || pipeline.assigner == Assigner.Global
  private val live = mutable.HashMap.empty[(String, Window), Instance]
  private var cause: Cause = Cause.Element
  private var clock = Long.MinValue
  private var mergeTarget: (String, Window) = null
  private var mergeSources = List.empty[Instance]
  private val panes = mutable.ArrayBuffer.empty[FlinkPane]
  private var lastFired: (String, Window) = null
  var unfiredAtCleanup = 0L
  var windowsOpened = 0L
  var windowsCleaned = 0L
  var windowsMerged = 0L

  /** The input step being processed (for exclusions that start at a step). */
  var step = 0

  /** (key, step) of every merge Flink made. */
  val merges = mutable.ArrayBuffer.empty[(String, Int)]

  /** Processing-time timers a trigger registered: (key, window, time, processing time then). */
  val processingTimersRegistered = mutable.ArrayBuffer.empty[(String, Window, Long, Long)]

  /** (key, window, step) of trigger deletions of the window's cleanup timer while it lived. */
  val cleanupTimerDeletions = mutable.ArrayBuffer.empty[(String, Window, Int)]
  private var clearing: (String, Window) = null

  private def cleanupTime(w: Window): Long =
    if (!pipeline.eventTime) maxTimestamp(w)
    else {
      val t = maxTimestamp(w) + pipeline.lateness
      if (t >= maxTimestamp(w)) t else Long.MaxValue
    }

  private def finishMerge(watermark: Long): Unit =
    if (mergeTarget != null) {
      val inst = live(mergeTarget)
      if (mergeSources.nonEmpty) inst.createdLate = mergeSources.forall(_.createdLate)
      inst.sinceLastPane += mergeSources.map(_.sinceLastPane).sum
      mergeTarget = null
      mergeSources = Nil
    }

  def onElement(w: Window, watermark: Long, processingTime: Long): Unit = {
    finishMerge(watermark)
    lastFired = null
    val k = (currentKey(), w)
    val inst = live.getOrElseUpdate(
      k, {
        windowsOpened += 1
        new Instance(usesWatermark && maxTimestamp(w) <= watermark)
      }
    )
    inst.sinceLastPane += 1
    cause = Cause.Element
    clock = if (usesWatermark) watermark else processingTime
  }

  def onTimer(w: Window, c: Cause, watermark: Long, processingTime: Long): Unit = {
    finishMerge(watermark)
    lastFired = null
    cause = c
    clock = c match {
      case Cause.EventTimer(t) if usesWatermark => t
      case Cause.ProcessingTimer(t) if !usesWatermark => t
      case _ => if (usesWatermark) watermark else processingTime
    }
  }

  def result(w: Window, r: TriggerResult): TriggerResult = {
    if (r.isFire) live.get((currentKey(), w)).foreach(_.sinceLastPane = 0)
    r
  }

  def onMerge(w: Window, watermark: Long): Unit = {
    finishMerge(watermark)
    lastFired = null
    val k = (currentKey(), w)
    require(!live.contains(k), s"merge result $w is already a live window")
    live(k) = new Instance(usesWatermark && maxTimestamp(w) <= watermark, byMerge = true)
    merges += ((k._1, step))
    windowsOpened += 1
    mergeTarget = k
  }

  def onClear(w: Window): Unit = {
    val k = (currentKey(), w)
    live.remove(k) match {
      case Some(inst) if mergeTarget != null =>
        mergeSources ::= inst
        windowsMerged += 1
        windowsCleaned += 1
      case Some(inst) =>
        windowsCleaned += 1
        unfiredAtCleanup += inst.sinceLastPane
        if (lastFired == k) {
          val p = panes.last
          panes(panes.size - 1) = p.copy(pane = p.pane.copy(last = true))
        }
      case None =>
    }
    lastFired = null
    clearing = k
  }

  def clearDone(): Unit = clearing = null

  def onRegisterProcessingTimer(w: Window, time: Long, now: Long): Unit =
    processingTimersRegistered += ((currentKey(), w, time, now))

  /** True if `w` is live for `key` and came out of a merge (its state lives elsewhere). */
  def isMergedLive(key: String, w: Window): Boolean = live.get((key, w)).exists(_.byMerge)

  def onDeleteTimer(w: Window, time: Long, eventTime: Boolean): Unit = {
    val k = (currentKey(), w)
    if (clearing != k && eventTime == pipeline.eventTime && time == cleanupTime(w) && live.contains(k))
      cleanupTimerDeletions += ((k._1, w, step))
  }

  def fired(key: String, w: Window, a: Array[Long]): Unit = {
    val k = (key, w)
    val inst =
      live.getOrElse(k, throw new IllegalStateException(s"Flink fired $w of $key, which never started"))
    val max = maxTimestamp(w)
    val timing =
      if (inst.nonEarlyFired) "LATE"
      else if (clock < max) "EARLY"
      else if (inst.createdLate) "LATE"
      else "ON_TIME"
    val (start, end) = bounds(w)
    val empty = a(0) == 0
    val noMinMax = empty || pipeline.countSum
    val pane = Pane(
      key,
      start,
      end,
      a(0),
      if (empty) None else Some(a(1)),
      if (noMinMax) None else Some(a(2)),
      if (noMinMax) None else Some(a(3)),
      timing,
      inst.index,
      inst.index == 0,
      last = false
    )
    inst.index += 1
    if (timing != "EARLY") inst.nonEarlyFired = true
    panes += FlinkPane(pane, cause)
    lastFired = k
  }

  def takePanes(): Vector[FlinkPane] = {
    val r = panes.toVector
    panes.clear()
    r
  }

  def liveWindows: Int = live.size
}
