package sparkwin.runtime.checkpoint

import sparkwin.plan.PlanDecoder
import sparkwin.runtime.spark.task.LoopFixtures

class ManifestSuite extends munit.FunSuite {

  test("versions order as releases do: numbers first, development and pre-releases below theirs") {
    val ordered =
      Seq("0.4.0", "0.5.0.dev0", "0.5.0.dev1", "0.5.0a1", "0.5.0rc1", "0.5.0", "0.5.1", "0.10.0", "1.0")
    ordered.zip(ordered.tail).foreach { case (a, b) =>
      assert(Manifest.compareVersions(a, b) < 0, s"$a before $b")
      assert(Manifest.compareVersions(b, a) > 0, s"$b after $a")
    }
    assertEquals(Manifest.compareVersions("0.5", "0.5.0"), 0)
  }

  test("what a manifest says reads back as written, the plan as the same JSON") {
    val m = Manifest(
      "0.5.0",
      "4.3.0",
      "transformWithState",
      Seq(Manifest.Operator(LoopFixtures.tumblingPlanJson, 128))
    )
    val dir = java.nio.file.Files.createTempDirectory("manifest")
    val files = CheckpointFiles(dir.toString, new org.apache.hadoop.conf.Configuration())
    Manifest.write(files, m)
    val back = Manifest.read(files).get
    assertEquals((back.sparkwin, back.spark, back.runtime), (m.sparkwin, m.spark, m.runtime))
    assertEquals(back.operators.map(_.keyGroups), Seq(128))
    assertEquals(
      PlanDecoder.parse(back.operators.head.planJson),
      PlanDecoder.parse(LoopFixtures.tumblingPlanJson)
    )
  }

  test("a damaged manifest is refused with where it is and what is wrong") {
    val dir = java.nio.file.Files.createTempDirectory("manifest")
    val files = CheckpointFiles(dir.toString, new org.apache.hadoop.conf.Configuration())
    java.nio.file.Files.createDirectories(dir.resolve("sparkwin"))
    for (
      (text, why) <- Seq(
        "{not json" -> "is not valid JSON",
        """{"format": 7}""" -> "is of format 7",
        """{"format": 1}""" -> "has no 'sparkwin'"
      )
    ) {
      java.nio.file.Files.write(dir.resolve(Manifest.File), text.getBytes("UTF-8"))
      val e = intercept[CheckpointException](Manifest.read(files))
      assert(e.getMessage.contains("the checkpoint is damaged") && e.getMessage.contains(why), e.getMessage)
    }
  }
}

class StateShapeSuite extends munit.FunSuite {
  private def plan(f: String => String): sparkwin.plan.Plan =
    PlanDecoder.decode(f(LoopFixtures.tumblingPlanJson))

  test("a plan's shape names what its state depends on; a changed part is named with before and after") {
    val before = StateShape.of(plan(identity))
    assertEquals(StateShape.changes(before, StateShape.of(plan(identity))), Nil)
    val renamed = plan(_.replace("\"alias\":\"sum_amount\"", "\"alias\":\"total\""))
    assertEquals(
      StateShape.changes(before, StateShape.of(renamed)),
      Seq("its aggregates (sum_amount; now total)")
    )
    val counted = plan(_.replace("\"fn\":\"sum\"", "\"fn\":\"count\""))
    assert(StateShape.changes(before, StateShape.of(counted)).contains("the columns its aggregates read"))
    val sliding = plan(
      _.replace("\"kind\":\"tumbling\",\"sizeMs\":10", "\"kind\":\"sliding\",\"sizeMs\":10,\"slideMs\":5")
    )
    assertEquals(StateShape.changes(before, StateShape.of(sliding)), Seq("its slices (10 ms; now 5 ms)"))
  }
}
