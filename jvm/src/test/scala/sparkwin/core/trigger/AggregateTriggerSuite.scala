package sparkwin.core.trigger

import scala.util.Random

import sparkwin.TestSupport._
import sparkwin.core.ArrayRecord
import sparkwin.core.evictor.ConditionEvictor
import sparkwin.core.window.{GlobalWindows, SessionWindows, TimeWindow, TumblingWindows}

/** Triggers on a pane's running aggregate (`sw.agg.sum("x") >= 1000`), the relative delta, and
  * the condition evictor: the engine's side of logic written as Spark Columns.
  */
class AggregateTriggerSuite extends munit.FunSuite {
  private def sumOf(column: Int, filter: Int = -1) = RunningAggregate("sum", column, filter)

  test("a sum fires when it reaches the threshold, then starts again") {
    val h = harness(TumblingWindows(100, 0, isEventTime = true), AggregateTrigger(sumOf(1), ">=", 10))
    h.add("k", 4, 1).add("k", 5, 2)
    assertEquals(h.short(), Nil)
    h.add("k", 3, 3) // 12 >= 10
    assertEquals(h.short(), List(("k", 0L, 100L, 12L)))
    h.add("k", 9, 4)
    assertEquals(h.short(), Nil) // 9 since the last firing
    h.add("k", 1, 5) // 10
    assertEquals(h.short(), List(("k", 0L, 100L, 22L)))
    h.watermark(200) // it does not fire at the window's end: it fires on its aggregate only
    assertEquals(h.short(), Nil)
  }

  test("count() >= n fires exactly as CountTrigger.of(n), on tumbling and session windows") {
    val rnd = new Random(7)
    for (
      assigner <- Seq(TumblingWindows(50, 0, isEventTime = true), SessionWindows(15, -1, isEventTime = true))
    ) {
      val byCount = harness(assigner, CountTrigger(3))
      val byAggregate = harness(assigner, AggregateTrigger(RunningAggregate("count", -1, -1), ">=", 3))
      for (i <- 0 until 300) {
        val (key, value, ts) = (s"k${rnd.nextInt(3)}", rnd.nextInt(10).toLong, i + rnd.nextInt(40).toLong)
        byCount.add(key, value, ts); byAggregate.add(key, value, ts)
        if (i % 37 == 0) { byCount.watermark(i - 20); byAggregate.watermark(i - 20) }
      }
      val expected = byCount.take()
      assert(expected.size > 20, s"only ${expected.size} panes")
      assertEquals(byAggregate.take(), expected)
    }
  }

  test("merged sessions add their running sums: the merge's next element fires") {
    val h = harness(SessionWindows(20, -1, isEventTime = true), AggregateTrigger(sumOf(1), ">=", 9))
    h.add("k", 4, 0).add("k", 4, 30) // two sessions of 4
    assertEquals(h.short(), Nil)
    h.add("k", 1, 15) // bridges them: 4 + 4 + 1
    assertEquals(h.short(), List(("k", 0L, 50L, 9L)))
  }

  test("the filter and nulls: only the elements the aggregate takes count and fire") {
    val t = AggregateTrigger(RunningAggregate("max", 0, 1), ">", 5)
    val state = scala.collection.mutable.Map.empty[String, Any]
    val ctx = new TriggerContext {
      def window = TimeWindow(0, 10)
      def currentWatermark = 0L
      def currentProcessingTime = 0L
      def registerEventTimeTimer(time: Long): Unit = ()
      def deleteEventTimeTimer(time: Long): Unit = ()
      def registerProcessingTimeTimer(time: Long): Unit = ()
      def deleteProcessingTimeTimer(time: Long): Unit = ()
      def get(s: StateDescriptor): Any = state.getOrElse(s.name, null)
      def set(s: StateDescriptor, v: Any): Unit = if (v == null) state -= s.name else state(s.name) = v
      def child(i: Int): TriggerContext = this
    }
    def on(v: Any, keep: Any) = t.onElement(new ArrayRecord(Array[Any](v, keep)), 0L, ctx.window, ctx)
    assertEquals(on(9L, false), TriggerResult.CONTINUE) // filtered out
    assertEquals(on(null, true), TriggerResult.CONTINUE) // null: no value
    assertEquals(on(3L, true), TriggerResult.CONTINUE)
    assertEquals(state("seen"), 1L)
    assertEquals(on(6L, true), TriggerResult.FIRE) // max 6 > 5
    assert(state.isEmpty, state)
    val avg = AggregateTrigger(RunningAggregate("avg", 0, -1), "<", 2)
    def onAvg(v: Long) = avg.onElement(new ArrayRecord(Array[Any](v)), 0L, ctx.window, ctx)
    assertEquals(onAvg(3), TriggerResult.CONTINUE)
    assertEquals(onAvg(0), TriggerResult.FIRE) // (3 + 0) / 2 < 2
  }

  test("a relative delta fires when the value moved by more than the fraction since the last firing") {
    val h = harness(
      GlobalWindows,
      DeltaTrigger(0.1, DeltaFunction(Seq(1), relative = true)),
      aggregates = Seq(countAll)
    )
    h.add("k", 100, 1).add("k", 109, 2).add("k", 91, 3)
    assertEquals(h.take(), Nil) // within 10% of 100
    h.add("k", 111, 4) // 11% above 100
    assertEquals(h.take().map(_.value), List(4L))
    h.add("k", 100, 5) // 9.9% below 111: no
    h.add("k", 99, 6) // 10.8% below 111
    assertEquals(h.take().map(_.value), List(6L))
    val fromZero = DeltaFunction(Seq(0), relative = true)
    assertEquals(fromZero(new ArrayRecord(Array[Any](0.0)), new ArrayRecord(Array[Any](0.0))), 0.0)
    assert(fromZero(new ArrayRecord(Array[Any](0.0)), new ArrayRecord(Array[Any](1.0))).isInfinite)
  }

  test("the condition evictor drops the elements whose condition is true, before or after") {
    for (after <- Seq(false, true)) {
      val h = harness(
        TumblingWindows(100, 0, isEventTime = true),
        evictor = Some(ConditionEvictor(3, after)),
        aggregates = Seq(collectValues),
        process = true
      )
      def marked(value: Long, ts: Long, drop: Any): Unit =
        h.runner.processElement(new ArrayRecord(Array[Any]("k", value, ts, drop)), ts, 0)
      marked(1, 1, false); marked(2, 2, true); marked(3, 3, null)
      h.watermark(100)
      assertEquals(h.take().map(_.value), List(if (after) List(1L, 2L, 3L) else List(1L, 3L)))
    }
  }

  test("a pane for a runtime's own aggregates: its result, then its elements, on the general algorithm") {
    val spec = harness(TumblingWindows(10, 0, isEventTime = true), emitsElements = true)
    val operatorSpec = sparkwin.operator.OperatorSpec(
      TumblingWindows(10, 0, isEventTime = true),
      EventTimeTrigger,
      None,
      0,
      false,
      sparkwin.operator.WindowFunction.Aggregates(IndexedSeq(sumValue)),
      sparkwin.operator.AccumulationMode.Accumulating,
      emitsElements = true
    )
    val chosen = sparkwin.operator.Selection.choose(operatorSpec, packable = true).algorithm
    assertEquals(chosen, sparkwin.operator.Selection.Algorithm.General)
    assert(!operatorSpec.combinable && !operatorSpec.sliceable && operatorSpec.keepsElements)
    spec.add("k", 1, 1).add("k", 2, 2).add("k", 4, 12)
    spec.watermark(20)
    assertEquals(
      spec.take().map(o => (o.start, o.value)),
      List((0L, 3L), (0L, List(1L, 2L)), (10L, 4L), (10L, List(4L)))
    )
  }
}
