package sparkwin.core.agg

import scala.util.Random

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode

import sparkwin.core.ArrayRecord
import sparkwin.plan.{PlanDecoder, PlanException}

/** SQL's `FILTER (WHERE ...)` on every aggregate: an aggregate over the rows whose boolean
  * filter column is true gives what the same aggregate gives over those rows alone, in one pass,
  * merged from partials, and through its saved state.
  */
class FilteredAggregatesSuite extends munit.FunSuite {

  // Records: (value: Long or null, ts: Long, keep: Boolean or null, label: String)
  private def row(v: Any, ts: Long, keep: Any, label: String) = new ArrayRecord(
    Array[Any](v, ts, keep, label)
  )

  private val inner: IndexedSeq[Aggregate] = IndexedSeq(
    Aggregate.Count("count", -1),
    Aggregate.Count("count_v", 0),
    Aggregate.Sum("sum", 0, NumericKind.Integral),
    Aggregate.Min("min", 0),
    Aggregate.Max("max", 3),
    Aggregate.First("first", 0),
    Aggregate.Last("last", 3),
    Aggregate.CollectList("list", 0),
    Aggregate.CountIf("count_if", 2),
    Aggregate.ExtremeBy("min_by", 3, 0, wantMax = false, tieByValue = true)
  )
  private val filtered = inner.map(Aggregate.Filtered(_, 2)).toArray[Aggregate]

  private def rows(rnd: Random, n: Int): IndexedSeq[ArrayRecord] =
    IndexedSeq.tabulate(n) { i =>
      val keep = rnd.nextInt(3) match { case 0 => null; case 1 => true; case _ => false }
      // Nulls among the values: first and last take them, so a filter is not a null mask.
      val v = if (rnd.nextInt(5) == 0) null else java.lang.Long.valueOf(rnd.nextInt(50).toLong - 10)
      row(v, i.toLong, keep, s"l${rnd.nextInt(7)}")
    }

  private def results(aggs: Array[Aggregate], rs: Seq[ArrayRecord]): Seq[Any] = {
    val accs = Accumulator.fresh(aggs)
    rs.foreach(r => Accumulator.addAll(accs, r, r.get(1).asInstanceOf[Long]))
    Accumulator.results(accs).toSeq.map(normal)
  }

  private def normal(v: Any): Any = v match {
    case l: java.util.List[_] => l.toArray.toSeq
    case other => other
  }

  test("a filtered aggregate is the aggregate over the rows its filter keeps (false and null drop)") {
    val rnd = new Random(7)
    for (_ <- 0 until 50) {
      val rs = rows(rnd, rnd.nextInt(30))
      val kept = rs.filter(_.get(2) == java.lang.Boolean.TRUE)
      assertEquals(results(filtered, rs), results(inner.toArray, kept))
    }
  }

  test("partials merge and saved state restores as the aggregate's own, filter and all") {
    val rnd = new Random(11)
    for (_ <- 0 until 30) {
      val rs = rows(rnd, 20)
      val (a, b) = rs.splitAt(rnd.nextInt(21))
      val left = Accumulator.fresh(filtered)
      a.foreach(r => Accumulator.addAll(left, r, r.get(1).asInstanceOf[Long]))
      val right = Accumulator.fresh(filtered)
      b.foreach(r => Accumulator.addAll(right, r, r.get(1).asInstanceOf[Long]))
      Accumulator.mergeAll(left, right)
      assertEquals(Accumulator.results(left).toSeq.map(normal), results(filtered, rs))
      val restored = Accumulator.fresh(filtered)
      restored.zip(left).foreach { case (to, from) => to.restore(from.save) }
      assertEquals(Accumulator.results(restored).toSeq.map(normal), results(filtered, rs))
      // The saved fields are the inner aggregate's: a filter added later reads its state.
      assertEquals(
        left.map(_.save.length).toSeq,
        left.map(_.asInstanceOf[FilteredAcc].inner.save.length).toSeq
      )
    }
  }

  test("a filter does not change how an aggregate merges, packs or reads its columns") {
    assertEquals(Aggregate.Filtered(Aggregate.Sum("s", 0, NumericKind.Integral), 2).columns, Seq(0, 2))
    assert(Aggregate.Filtered(Aggregate.Count("c", -1), 2).invertible)
    assertEquals(Aggregate.Filtered(Aggregate.Avg("a", 0), 2).unfiltered, Aggregate.Avg("a", 0))
  }

  test("the plan's filter names a boolean column; another type is refused, naming the aggregate") {
    val mapper = new ObjectMapper()
    val file = new java.io.File(sparkwin.TestSupport.scenarioDirectory, "tumbling.json")
    def planWith(filter: String): String = {
      val plan = mapper.readTree(file).get("scenarios").get(0).get("plan").deepCopy[ObjectNode]()
      val agg = plan.get("function").get("aggregates").get(0).asInstanceOf[ObjectNode]
      agg.put("filter", filter)
      mapper.writeValueAsString(plan)
    }
    val refused = intercept[PlanException](PlanDecoder.decode(planWith("user")))
    assert(
      refused.getMessage.contains("aggregate sum_amount: its filter must be a boolean column, got string"),
      refused.getMessage
    )
    val missing = intercept[PlanException](PlanDecoder.decode(planWith("nope")))
    assert(missing.getMessage.contains("nope"), missing.getMessage)
  }
}
