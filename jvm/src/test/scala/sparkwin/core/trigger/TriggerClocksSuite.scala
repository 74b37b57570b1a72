package sparkwin.core.trigger

import scala.collection.mutable

import sparkwin.TestSupport.rec
import sparkwin.core.TimerClocks
import sparkwin.core.window.{TimeWindow, Window}

/** Triggers say which clocks their timers run on (`ownClocks`), and runtimes pick Spark's timer
  * domain from that alone: a trigger that registered a timer on a clock it did not declare would
  * never be woken on Spark. Each built-in trigger is driven through elements and the timers it
  * asks for, and every timer it registers must be on a declared clock; a leaf declares nothing
  * it never uses.
  */
class TriggerClocksSuite extends munit.FunSuite {

  /** Records which clocks a trigger tree registers timers on, and keeps its state by name. */
  private final class Recording(val window: Window, path: String, shared: Recording.Shared)
      extends TriggerContext {
    def currentWatermark: Long = shared.watermark
    def currentProcessingTime: Long = shared.processingTime
    def registerEventTimeTimer(time: Long): Unit = shared.event += time
    def deleteEventTimeTimer(time: Long): Unit = shared.event -= time
    def registerProcessingTimeTimer(time: Long): Unit = shared.processing += time
    def deleteProcessingTimeTimer(time: Long): Unit = shared.processing -= time
    def get(state: StateDescriptor): Any = shared.state.get(s"$path/${state.name}").orNull
    def set(state: StateDescriptor, value: Any): Unit =
      if (value == null) shared.state.remove(s"$path/${state.name}")
      else shared.state(s"$path/${state.name}") = value
    def child(i: Int): TriggerContext = new Recording(window, s"$path.$i", shared)
  }

  private object Recording {
    final class Shared {
      var watermark: Long = Long.MinValue
      var processingTime: Long = 0L
      val event = mutable.SortedSet.empty[Long]
      val processing = mutable.SortedSet.empty[Long]
      var usedEvent = false
      var usedProcessing = false
      val state = mutable.Map.empty[String, Any]
      def note(): Unit = { usedEvent ||= event.nonEmpty; usedProcessing ||= processing.nonEmpty }
    }
  }

  /** Elements, then every timer the trigger asked for, in time order, on both clocks. */
  private def drive(trigger: Trigger): TimerClocks = {
    val shared = new Recording.Shared
    val window = TimeWindow(0, 10)
    val ctx = new Recording(window, "", shared)
    for ((ts, value) <- Seq(1L -> 1L, 3L -> 5L, 4L -> 40L)) {
      trigger.onElement(rec("k", value, ts), ts, window, ctx)
      shared.note()
    }
    var rounds = 0
    while ((shared.event.nonEmpty || shared.processing.nonEmpty) && rounds < 20) {
      shared.event.headOption.foreach { t =>
        shared.event -= t
        shared.watermark = t
        trigger.onEventTime(t, window, ctx)
      }
      shared.processing.headOption.foreach { t =>
        shared.processing -= t
        shared.processingTime = t
        trigger.onProcessingTime(t, window, ctx)
      }
      shared.note()
      rounds += 1
    }
    trigger.clear(window, ctx)
    TimerClocks(shared.usedEvent, shared.usedProcessing)
  }

  private val leaves: Seq[Trigger] = Seq(
    EventTimeTrigger,
    ProcessingTimeTrigger,
    NeverTrigger,
    CountTrigger(2),
    ContinuousEventTimeTrigger(3),
    ContinuousProcessingTimeTrigger(3),
    DeltaTrigger(10.0, DeltaFunction(Seq(1))),
    AfterPane(2),
    AfterProcessingTime(5),
    ConditionTrigger(1),
    AggregateTrigger(RunningAggregate("sum", 1, -1), ">=", 5)
  )

  private val trees: Seq[Trigger] = Seq(
    PurgingTrigger(CountTrigger(2)),
    PurgingTrigger(EventTimeTrigger),
    ProcessingTimeoutTrigger(CountTrigger(5), 7, resetTimerOnNewRecord = true, clearOnTimeout = false),
    ProcessingTimeoutTrigger(EventTimeTrigger, 7, resetTimerOnNewRecord = false, clearOnTimeout = true),
    AfterWatermark(Some(AfterPane(1)), Some(AfterPane(1))),
    AfterWatermark(Some(AfterProcessingTime(5)), None),
    AfterWatermark(None, Some(AfterProcessingTime(2))),
    Repeatedly(AfterPane(2)),
    Repeatedly(AfterProcessingTime(4)),
    AfterEach(Seq(AfterPane(1), AfterProcessingTime(3))),
    AfterFirst(Seq(AfterPane(5), AfterWatermark(None, None))),
    AfterAll(Seq(AfterPane(2), AfterProcessingTime(3))),
    OrFinally(Repeatedly(AfterPane(1)), AfterWatermark(None, None))
  )

  for (trigger <- leaves)
    test(s"$trigger declares exactly the clocks of the timers it sets") {
      assertEquals(drive(trigger), trigger.ownClocks)
    }

  for (trigger <- trees)
    test(s"$trigger sets timers only on the clocks its tree declares") {
      val used = drive(trigger)
      assert(!used.event || trigger.usesEventTime, s"event-time timers, undeclared: $used")
      assert(!used.processing || trigger.usesProcessingTime, s"processing-time timers, undeclared: $used")
    }

  test("a tree uses a clock when any of its triggers does") {
    val tree = AfterWatermark(Some(Repeatedly(AfterProcessingTime(5))), None)
    assert(tree.usesEventTime && tree.usesProcessingTime)
    assert(!Repeatedly(AfterPane(2)).usesProcessingTime && !Repeatedly(AfterPane(2)).usesEventTime)
    assert(PurgingTrigger(ContinuousProcessingTimeTrigger(1)).usesProcessingTime)
    assert(!PurgingTrigger(ContinuousProcessingTimeTrigger(1)).usesEventTime)
  }
}
