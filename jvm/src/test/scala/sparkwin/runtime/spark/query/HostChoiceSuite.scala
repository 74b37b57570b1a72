package sparkwin.runtime.spark.query

import sparkwin.runtime.spark.Hosts.{FlatMapGroupsWithState => GroupState, TransformWithState => Processor}

import HostChoice.choose
import KeyGroupCount.Checkpoint

/** The rule that picks Spark's operator for a query's key groups: the cheaper one for a new
  * micro-batch checkpoint, the checkpoint's own once it has state, and `transformWithState` where
  * only it serves (real-time mode, chained pipelines) or where the checkpoint is out of sight.
  */
class HostChoiceSuite extends munit.FunSuite {
  private val spark4 = Seq(Processor, GroupState)
  private val fresh = Checkpoint.Fresh("/chk")
  private val kept = Checkpoint.Kept("/chk", 128)

  private def on(
      checkpoint: Checkpoint,
      stored: Option[String] = None,
      realTime: Boolean = false,
      chained: Boolean = false,
      hosts: Seq[String] = spark4
  ): String =
    choose(hosts, checkpoint, stored, realTime, chained).operator

  test("a new micro-batch checkpoint gets one value per key group") {
    assertEquals(on(fresh), GroupState)
  }

  test("a checkpoint with state keeps the operator its state is on, whichever that is") {
    assertEquals(on(kept, Some(Processor)), Processor) // 0.5's on Spark 4
    assertEquals(on(kept, Some(GroupState)), GroupState) // 0.6's, or Spark 3.5's
    assertEquals(on(Checkpoint.Legacy("/chk"), Some(Processor)), Processor) // 0.4's
    assertEquals(on(Checkpoint.Legacy("/chk"), None), Processor) // planned, nothing written yet
  }

  test("a checkpoint out of sight may hold an earlier release's state: transformWithState") {
    val unknown = choose(spark4, Checkpoint.Unknown, None, realTime = false, chained = false)
    assertEquals(unknown.operator, Processor)
    assert(unknown.origin.contains("checkpointLocation"), unknown.origin) // names the way to the other
  }

  test("real-time mode and chained pipelines run on transformWithState, whatever the checkpoint") {
    for (c <- Seq(fresh, kept, Checkpoint.Unknown)) {
      assertEquals(on(c, Some(GroupState), realTime = true), Processor)
      assertEquals(on(c, Some(GroupState), chained = true), Processor)
    }
  }

  test("Spark 3.5 has one operator for every query") {
    for (c <- Seq(fresh, kept, Checkpoint.Unknown))
      assertEquals(on(c, Some(Processor), hosts = Seq(GroupState)), GroupState)
  }

  test("the stored operator is read only when the checkpoint has state") {
    var read = 0
    def stored = { read += 1; Some(GroupState) }
    choose(spark4, fresh, stored, realTime = false, chained = false)
    choose(spark4, Checkpoint.Unknown, stored, realTime = false, chained = false)
    assertEquals(read, 0)
    choose(spark4, kept, stored, realTime = false, chained = false)
    assertEquals(read, 1)
  }

  test("spark.sparkwin.operator decides where the checkpoint has no state, nowhere else") {
    def set(c: Checkpoint, stored: Option[String] = None, realTime: Boolean = false) =
      choose(spark4, c, stored, realTime, chained = false, explicit = Some(Processor))
    assertEquals(set(fresh).operator, Processor)
    assertEquals(set(fresh).origin, HostChoice.Conf)
    assertEquals(
      choose(spark4, Checkpoint.Unknown, None, false, false, Some(GroupState)).operator,
      GroupState
    )
    assertEquals(set(kept, None).operator, Processor)
    assertEquals(choose(spark4, kept, Some(GroupState), false, false, Some(Processor)).operator, GroupState)
    assertEquals(choose(spark4, fresh, None, realTime = true, false, Some(GroupState)).operator, Processor)
  }

  test("spark.sparkwin.operator names one of the line's operators, or is refused naming them") {
    assertEquals(HostChoice.explicit(Some(" flatmapgroupswithstate "), spark4), Some(GroupState))
    assertEquals(HostChoice.explicit(Some(""), spark4), None)
    assertEquals(HostChoice.explicit(None, spark4), None)
    val refused =
      intercept[sparkwin.plan.PlanException](HostChoice.explicit(Some(Processor), Seq(GroupState)))
    assert(refused.getMessage.contains("spark.sparkwin.operator must name one of"), refused.getMessage)
    assert(
      refused.getMessage.contains("(flatMapGroupsWithState), got 'transformWithState'"),
      refused.getMessage
    )
    intercept[sparkwin.plan.PlanException](HostChoice.explicit(Some("mapGroups"), spark4))
  }

  test("a pipeline over one on flatMapGroupsWithState is refused before the query, naming the fix") {
    import HostChoice.requireStatefulAfter
    def refused(explicit: Option[String]): String =
      intercept[sparkwin.plan.PlanException](
        requireStatefulAfter(Seq(GroupState), spark4, explicit)
      ).getMessage
    val byConf = refused(Some(GroupState))
    assert(byConf.contains(s"reads the results of a pipeline on $GroupState"), byConf)
    assert(byConf.contains(s"spark.sparkwin.operator is set to $GroupState: unset it"), byConf)
    val byCheckpoint = refused(None)
    assert(byCheckpoint.contains("toDF() without checkpointLocation"), byCheckpoint)
    assert(byCheckpoint.contains(s"or set spark.sparkwin.operator to $Processor"), byCheckpoint)
    // Over transformWithState, or over nothing.
    requireStatefulAfter(Seq(Processor), spark4, None)
    requireStatefulAfter(Nil, spark4, Some(GroupState))
  }

  test("on Spark 3.5 every pipeline over another is refused, as the inheriting form is (one message)") {
    import HostChoice.requireStatefulAfter
    val spark35 = Seq(GroupState)
    val refused =
      intercept[sparkwin.plan.UnsupportedSparkException](requireStatefulAfter(Seq(GroupState), spark35, None))
    assertEquals(refused.getMessage, sparkwin.runtime.spark.Hosts.ChainsNeedSpark4)
    assert(refused.getMessage.contains("needs Spark 4.0 or newer"), refused.getMessage)
    assert(refused.getMessage.contains("read them as a new stream with a watermark"), refused.getMessage)
    requireStatefulAfter(Nil, spark35, None) // a pipeline over a source
  }

  test("a pipeline over another's results with a watermark strategy of its own is refused") {
    import HostChoice.requireInheritedWatermark
    for (upstream <- Seq(Seq(Processor), Seq(GroupState), Seq(Processor, Processor))) {
      val refused =
        intercept[sparkwin.plan.PlanException](requireInheritedWatermark(upstream, watermarked = true))
      assert(refused.getMessage.contains("has a watermark strategy of its own"), refused.getMessage)
      assert(refused.getMessage.contains("Give sw.stream() no watermark="), refused.getMessage)
    }
    requireInheritedWatermark(Seq(Processor), watermarked = false) // it follows the upstream's
    requireInheritedWatermark(Nil, watermarked = true) // over a source
  }

  test("each operator's timers in Spark's terms") {
    assertEquals(HostChoice.timers(Processor, "EventTime"), "TimeMode.EventTime")
    assertEquals(HostChoice.timers(GroupState, "EventTime"), "GroupStateTimeout.EventTimeTimeout")
    assertEquals(HostChoice.timers(GroupState, "None"), "GroupStateTimeout.NoTimeout")
  }
}
