package sparkwin.core.trigger

import sparkwin.TestSupport._
import sparkwin.core.agg.Aggregate
import sparkwin.core.window.TumblingWindows
import sparkwin.operator.general.{GeneralState, GeneralStateKind, WindowMeta}
import sparkwin.operator.store.{KeyStateCodec, WindowContents}

/** Trigger state is named: each descriptor of each node of a trigger tree has a full name (its
  * place in the tree, then its own name), is stored by that name and version, and a trigger
  * instance may sit in several places of a tree.
  */
class TriggerLayoutSuite extends munit.FunSuite {
  test("full names follow the tree: own state first, then each child's, by role or index") {
    val t = AfterWatermark(Some(Repeatedly(AfterPane(3))), Some(AfterAll(Seq(AfterPane(1), CountTrigger(2)))))
    val layout = new TriggerLayout(t)
    assertEquals(
      layout.names.toList,
      List("latePhase", "early.nested.count", "late.fired", "late.0.count", "late.1.count")
    )
    assertEquals(layout.versions.toList, List(1, 1, 1, 1, 1))
    assertEquals(layout.slotOf("late.1.count"), 4)
    assertEquals(layout.slotOf("early.count"), -1)
  }

  test("one trigger instance may sit in several places, each with its own state") {
    val shared = AfterPane(2)
    val h = harness(
      TumblingWindows(100, 0, isEventTime = true),
      trigger = AfterWatermark(Some(shared), Some(shared)),
      lateness = 1000
    )
    h.add("a", 1, 0).add("a", 2, 1).add("a", 4, 2) // an early pane after two elements
    assertEquals(h.take().map(_.value), List(3L))
    h.watermark(200) // the on-time pane; the early count (one element) does not carry over
    assertEquals(h.take().map(_.value), List(7L))
    h.add("a", 8, 3) // the late count starts at one: no pane yet
    assertEquals(h.take(), Nil)
    h.add("a", 16, 4)
    assertEquals(h.take().map(_.value), List(31L))
  }

  private val aggs = IndexedSeq[Aggregate](sumValue)
  private val window = sparkwin.core.window.TimeWindow(0, 10)

  private def codec(t: Trigger) = new KeyStateCodec(new GeneralStateKind(aggs, new TriggerLayout(t)), aggs)

  private def saved(t: Trigger, set: (String, Any)*): Array[Byte] = {
    val layout = new TriggerLayout(t)
    val st = new GeneralState
    val m = new WindowMeta(new Array[Any](layout.slots))
    set.foreach { case (name, v) => m.triggerState(layout.slotOf(name)) = v }
    st.meta.put(window, m)
    st.contents.put(window, new WindowContents(Array(sumValue.newAccumulator()), null))
    codec(t).encode(KeyStateCodec.Stored(st))
  }

  private def readBack(t: Trigger, bytes: Array[Byte]): Map[String, Any] = {
    val layout = new TriggerLayout(t)
    val m = codec(t).decode(bytes).state.asInstanceOf[GeneralState].meta.get(window)
    layout.names.indices
      .filter(i => m.triggerState(i) != null)
      .map(i => layout.names(i) -> m.triggerState(i))
      .toMap
  }

  test("trigger state is stored by name: a trigger that gained a child still reads it") {
    val before = AfterWatermark(Some(AfterPane(5)), None)
    val bytes = saved(before, "early.count" -> 3L, "latePhase" -> true)
    assertEquals(readBack(before, bytes), Map[String, Any]("early.count" -> 3L, "latePhase" -> true))
    val after = AfterWatermark(Some(AfterPane(5)), Some(AfterPane(1)))
    // The new late trigger's state slot comes after the early one's, yet the name finds it.
    assertEquals(readBack(after, bytes), Map[String, Any]("early.count" -> 3L, "latePhase" -> true))
  }

  test("state a trigger does not have is refused with its name, not read into another slot") {
    val bytes = saved(AfterWatermark(Some(AfterPane(5)), None), "early.count" -> 3L)
    val e = intercept[IllegalStateException](readBack(AfterWatermark(None, Some(AfterPane(5))), bytes))
    assert(e.getMessage.contains("early.count"), e.getMessage)
  }

  test("a trigger using state it does not declare is a clear error") {
    object Sneaky extends Trigger {
      private val hidden = new StateDescriptor("hidden")
      def onElement(
          r: sparkwin.core.Record,
          ts: Long,
          w: sparkwin.core.window.Window,
          ctx: TriggerContext
      ) = {
        ctx.set(hidden, 1L); TriggerResult.CONTINUE
      }
      def onEventTime(time: Long, w: sparkwin.core.window.Window, ctx: TriggerContext) =
        TriggerResult.CONTINUE
      def onProcessingTime(time: Long, w: sparkwin.core.window.Window, ctx: TriggerContext) =
        TriggerResult.CONTINUE
      def clear(w: sparkwin.core.window.Window, ctx: TriggerContext): Unit = ()
    }
    val h = harness(sparkwin.core.window.GlobalWindows, trigger = Sneaky)
    val e = intercept[IllegalStateException](h.add("a", 1, 0))
    assert(e.getMessage.contains("hidden"), e.getMessage)
  }
}
