package sparkwin.runtime.spark.query

import sparkwin.plan.PlanException

import org.apache.spark.sql.catalyst.expressions.{Literal, Murmur3Hash, Pmod}

import KeyGroupCount.{choose, defaultFor, Checkpoint}

/** The rule that picks a streaming query's number of key groups: a default that follows the
  * stateful stage's partitions, kept once chosen, and what an explicit setting may change.
  */
class KeyGroupCountSuite extends munit.FunSuite {
  private val fresh = Checkpoint.Fresh("/chk")

  test("small stateful stages keep 128 groups, as every query had before the count was kept") {
    for (p <- Seq(1, 2, 4, 8, 16, 32, 64, 128)) assertEquals(defaultFor(p), 128, s"$p partitions")
  }

  test("the default is the smallest multiple of the partitions that is at least 128") {
    assertEquals(defaultFor(3), 129)
    assertEquals(defaultFor(48), 144)
    assertEquals(defaultFor(100), 200)
    assertEquals(defaultFor(200), 200) // Spark's own default: no task left without groups
    assertEquals(defaultFor(129), 129)
    assertEquals(defaultFor(1000), 1000)
    for (p <- 1 to 3000) {
      val g = defaultFor(p)
      assert(g >= 128 && g >= p && g % p == 0 && g - p < 128, s"$p partitions: $g")
    }
  }

  test("a real-time query defaults to one group per shuffle partition, kept like any other") {
    val rt = choose(None, 4, fresh, realTime = true)
    assertEquals(rt.count, 4)
    assert(rt.origin.startsWith("real-time default"), rt.origin)
    assertEquals(choose(Some(16), 4, fresh, realTime = true).count, 16) // an explicit setting wins
    assertEquals(choose(None, 8, Checkpoint.Kept("/chk", 4), realTime = true).count, 4)
    assertEquals(choose(None, 4, fresh).count, 128) // micro-batch mode keeps its default
  }

  test("the default is bounded by 32768, Flink's largest maximum parallelism") {
    assertEquals(defaultFor(32768), 32768)
    assertEquals(defaultFor(50000), 32768)
  }

  test("every stateful task gets the same number of groups under the default") {
    def partition(label: Int, partitions: Int) =
      Pmod(new Murmur3Hash(Seq(Literal(label))), Literal(partitions)).eval().asInstanceOf[Int]
    for (p <- Seq(3, 6, 200)) {
      val groups = defaultFor(p)
      val shares = KeyGroupLabels(groups).groupBy(partition(_, p)).values.map(_.length).toSet
      assertEquals(shares, Set(groups / p), s"$p partitions")
    }
  }

  test("without a kept count the session decides: its setting, else the default") {
    assertEquals(choose(None, 200, fresh), KeyGroupCount(200, "default for spark.sql.shuffle.partitions=200"))
    assertEquals(choose(Some(64), 200, fresh), KeyGroupCount(64, "spark.sparkwin.keyGroups"))
    assertEquals(choose(None, 400, Checkpoint.Unknown).count, 400)
  }

  test("a kept count wins over the default, whatever the partitions are now") {
    val kept = Checkpoint.Kept("/chk", 200)
    for (p <- Seq(2, 200, 400))
      assertEquals(choose(None, p, kept), KeyGroupCount(200, "kept in the checkpoint (sparkwin/keyGroups)"))
    assertEquals(choose(Some(200), 400, kept).count, 200)
  }

  test("an explicit setting that contradicts the kept count is refused, naming both and the fix") {
    val e = intercept[PlanException](choose(Some(64), 2, Checkpoint.Kept("/chk", 200)))
    assert(e.getMessage.contains("/chk keeps 200 key groups"), e.getMessage)
    assert(e.getMessage.contains("spark.sparkwin.keyGroups is 64"), e.getMessage)
    assert(e.getMessage.contains("unset spark.sparkwin.keyGroups"), e.getMessage)
  }

  test("a checkpoint from before the count was kept resumes with 128, or what the user sets") {
    val legacy = Checkpoint.Legacy("/chk")
    assertEquals(choose(None, 400, legacy).count, 128)
    assertEquals(choose(Some(2), 400, legacy).count, 2)
  }

  test("the kept file reads back what was written and refuses anything else") {
    assertEquals(KeyGroupCount.parse(KeyGroupCount.text(4096), "f"), 4096)
    for (bad <- Seq("", "keyGroups=0", "keyGroups=x", "keyGroups=40000", "groups=128")) {
      val e = intercept[PlanException](KeyGroupCount.parse(bad, "/chk/sparkwin/keyGroups"))
      assert(e.getMessage.contains("/chk/sparkwin/keyGroups"), e.getMessage)
    }
  }
}
