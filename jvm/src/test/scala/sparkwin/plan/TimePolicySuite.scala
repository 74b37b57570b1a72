package sparkwin.plan

import org.apache.spark.sql.types._

import sparkwin.TestSupport
import sparkwin.core.time.WatermarkStrategy
import sparkwin.core.trigger._
import sparkwin.core.window._

/** The one decision about time a plan gets: which clocks its timers need, how a live stream
  * wakes for each, and when a key is due.
  */
class TimePolicySuite extends munit.FunSuite {
  private val schema = StructType(
    Seq(StructField("user", StringType), StructField("part", IntegerType), StructField("ts", LongType))
  )
  private def plan(
      assigner: WindowAssigner,
      trigger: Trigger = EventTimeTrigger,
      channel: Boolean = false,
      idle: Option[Long] = None
  ): Plan = {
    val spec = TestSupport.aggregateSpec(assigner, Seq(TestSupport.countAll), lateOutput = false)
    val strategy = WatermarkStrategy(WatermarkStrategy.BoundedOutOfOrderness(1000), idle, 200)
    Plan(
      "{}",
      schema,
      2,
      IndexedSeq(0),
      Some(strategy),
      None,
      if (channel) Some(1) else None,
      spec.copy(trigger = trigger),
      None,
      IndexedSeq.empty,
      None
    )
  }
  private val tumbling = TumblingWindows(10, 0, isEventTime = true)
  private val processing = TumblingWindows(10, 0, isEventTime = false)

  test("the assigner declares its windows' clocks; Storm's ignore the trigger, as they fire alone") {
    import sparkwin.core.TimerClocks
    assertEquals(tumbling.ownClocks, TimerClocks.Event)
    assertEquals(processing.ownClocks, TimerClocks.Processing)
    assertEquals(GlobalWindows.ownClocks, TimerClocks.None)
    assert(GlobalWindows.panesByWatermark && tumbling.panesByWatermark && !processing.panesByWatermark)
    val counts = StormWindows(StormSize.Count(3), StormSize.Count(1), 0, isEventTime = false)
    val timed = StormWindows(StormSize.Duration(10), StormSize.Count(1), 0, isEventTime = false)
    assertEquals((counts.ownClocks, timed.ownClocks), (TimerClocks.None, TimerClocks.Processing))
    // A processing-time trigger on arrival-order Storm windows sets no timer: Storm fires alone.
    assertEquals(TimePolicy.of(plan(counts, ProcessingTimeTrigger)).domains, TimerDomains.Neither)
    assertEquals(TimePolicy.of(plan(timed, ProcessingTimeTrigger)).domains, TimerDomains.ProcessingOnly)
    assertEquals(TimePolicy.of(plan(GlobalWindows, CountTrigger(3))).domains, TimerDomains.Neither)
    assertEquals(
      TimePolicy.of(plan(GlobalWindows, ProcessingTimeTrigger)).domains,
      TimerDomains.ProcessingOnly
    )
  }

  test("a key group's event time comes from the one source its policy names") {
    def never: (Long, Long) = fail("not this source")
    val spark = TimePolicy.of(plan(tumbling))
    assertEquals(spark.groupWatermarks(never, 0L, fail("not chained")), (Long.MinValue, Long.MinValue))
    assertEquals(spark.groupWatermarks(never, 70L, fail("not chained")), (70L, 70L))
    val chained = spark.copy(inheritsWatermark = true)
    assertEquals(chained.groupWatermarks(never, 70L, 40L), (40L, 70L))
    val own = TimePolicy.of(plan(tumbling, channel = true))
    assertEquals(own.groupWatermarks((5L, 9L), 70L, fail("not chained")), (5L, 9L))
  }

  test("event-time windows follow Spark's watermark: its timers, no clock") {
    val p = TimePolicy.of(plan(tumbling))
    assertEquals(p.domains, TimerDomains.EventOnly)
    assertEquals(p.sparkTimers, SparkTimers.OnWatermark)
    assert(!p.needsClock && !p.splitsBatch && !p.checksChannel)
  }

  test("processing-time windows and early firings on processing time wake through the clock") {
    val windows = TimePolicy.of(plan(processing, ProcessingTimeTrigger))
    assertEquals(windows.domains, TimerDomains.ProcessingOnly)
    assertEquals(windows.sparkTimers, SparkTimers.NoTimers)
    assert(windows.needsClock)
    val early = TimePolicy.of(plan(tumbling, ContinuousProcessingTimeTrigger(5)))
    assertEquals(early.domains, TimerDomains.Both)
    // Event time still on Spark's timers; processing time on the clock, never Spark's.
    assertEquals(early.sparkTimers, SparkTimers.OnWatermark)
    assert(early.needsClock)
  }

  test("channels keep their own event time: no Spark timers; the clock only for idleness") {
    val still = TimePolicy.of(plan(tumbling, channel = true))
    assertEquals(still.sparkTimers, SparkTimers.NoTimers)
    assert(!still.needsClock && still.splitsBatch && still.checksChannel)
    val idle = TimePolicy.of(plan(tumbling, channel = true, idle = Some(500)))
    assert(idle.needsClock)
    // Without channels idleness is Spark's business (one watermark): no clock.
    assert(!TimePolicy.of(plan(tumbling, idle = Some(500))).needsClock)
  }

  test("global windows with a count trigger need no clock at all") {
    val p = TimePolicy.of(plan(GlobalWindows, CountTrigger(3)))
    assertEquals(p.domains, TimerDomains.Neither)
    assertEquals(p.sparkTimers, SparkTimers.NoTimers)
    assert(!p.needsClock)
  }

  test("a key is due when either of its wake-ups has come") {
    val p = TimePolicy.of(plan(tumbling, ContinuousProcessingTimeTrigger(5)))
    assert(p.isDue(eventAt = 10, processingAt = Long.MaxValue, watermark = 10, processingTime = 0))
    assert(!p.isDue(eventAt = 11, processingAt = Long.MaxValue, watermark = 10, processingTime = 0))
    assert(p.isDue(eventAt = Long.MaxValue, processingAt = 7, watermark = 0, processingTime = 7))
    assert(!p.isDue(eventAt = Long.MaxValue, processingAt = 8, watermark = 0, processingTime = 7))
  }

  test("Spark's timer sits strictly after the watermark, and only on Spark's watermark") {
    val p = TimePolicy.of(plan(tumbling))
    assertEquals(p.sparkTimer(earliestEvent = 50, watermark = 10), 50L)
    assertEquals(p.sparkTimer(earliestEvent = 5, watermark = 10), 11L)
    assertEquals(p.sparkTimer(earliestEvent = Long.MaxValue, watermark = 10), Long.MinValue)
    val channels = TimePolicy.of(plan(tumbling, channel = true, idle = Some(500)))
    assertEquals(channels.sparkTimer(earliestEvent = 50, watermark = 10), Long.MinValue)
  }

  test("a group asks the clock for its next processing-time timer or idle deadline") {
    val idle = TimePolicy.of(plan(tumbling, channel = true, idle = Some(500)))
    // Windows wait on event time: the next channel may go idle at 900.
    assertEquals(idle.processingWake(Long.MaxValue, waitsOnEventTime = true, 900L), 900L)
    // Nothing waits: idleness changes nothing that anyone waits for.
    assertEquals(idle.processingWake(Long.MaxValue, waitsOnEventTime = false, 900L), Long.MaxValue)
    val timers = TimePolicy.of(plan(processing, ProcessingTimeTrigger))
    assertEquals(timers.processingWake(40L, waitsOnEventTime = false, sys.error("not asked")), 40L)
  }

  test("real-time mode: event time is always the groups' own, per source partition without channel=") {
    val p = TimePolicy.of(plan(tumbling), RunMode.RealTime)
    assert(p.ownWatermark && p.partitionChannels && p.splitsBatch)
    // Nothing waits on processing time: no Spark timers at all, and never the clock source.
    assertEquals(p.sparkTimers, SparkTimers.NoTimers)
    assert(!p.needsClock && !p.checksChannel)
    assertEquals(p.mode.name, "realTime")
    val channels = TimePolicy.of(plan(tumbling, channel = true), RunMode.RealTime)
    assert(channels.ownWatermark && !channels.partitionChannels && channels.checksChannel)
    // The same plan in micro-batch mode keeps Spark's watermark.
    val micro = TimePolicy.of(plan(tumbling))
    assert(!micro.ownWatermark && !micro.partitionChannels)
    assertEquals(micro.mode.name, "microBatch")
  }

  test("real-time mode wakes groups on Spark's processing-time timers, never the clock source") {
    val timers = TimePolicy.of(plan(processing, ProcessingTimeTrigger), RunMode.RealTime)
    assertEquals(timers.sparkTimers, SparkTimers.OnProcessingTime)
    assertEquals(timers.sparkTimeMode, "ProcessingTime")
    assert(!timers.needsClock)
    val idle = TimePolicy.of(plan(tumbling, idle = Some(500)), RunMode.RealTime)
    // The single channel goes idle on processing time too.
    assertEquals(idle.sparkTimers, SparkTimers.OnProcessingTime)
    assertEquals(idle.processingWake(Long.MaxValue, waitsOnEventTime = true, 900L), 900L)
    assert(!idle.needsClock)
  }

  test("real-time mode's timer sits strictly after now, at the processing-time wake-up") {
    val p = TimePolicy.of(plan(processing, ProcessingTimeTrigger), RunMode.RealTime)
    assertEquals(p.sparkTimer(earliestEvent = 5, watermark = 10, processingWake = 40, now = 20), 40L)
    assertEquals(p.sparkTimer(earliestEvent = 5, watermark = 10, processingWake = 20, now = 20), 21L)
    assertEquals(
      p.sparkTimer(earliestEvent = 5, watermark = 10, processingWake = Long.MaxValue, now = 20),
      Long.MinValue
    )
    // Micro-batch mode answers on the watermark, whatever processing time wants.
    val micro = TimePolicy.of(plan(tumbling))
    assertEquals(micro.sparkTimer(earliestEvent = 50, watermark = 10, processingWake = 40, now = 20), 50L)
  }

  test("real-time mode refuses what it cannot run, naming the fix") {
    val noWatermark = plan(tumbling).copy(watermark = None)
    val refused = intercept[sparkwin.plan.PlanException](TimePolicy.of(noWatermark, RunMode.RealTime))
    assert(refused.getMessage.contains("watermark strategy"), refused.getMessage)
    val punctuated =
      plan(tumbling).copy(watermark = Some(WatermarkStrategy(WatermarkStrategy.Punctuated(1, 0), None, 200)))
    val p = intercept[sparkwin.plan.PlanException](TimePolicy.of(punctuated, RunMode.RealTime))
    assert(p.getMessage.contains("forBoundedOutOfOrderness"), p.getMessage)
    // Micro-batch mode decides the same plans without complaint.
    TimePolicy.of(punctuated)
  }
}
