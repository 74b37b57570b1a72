package sparkwin.core.agg

import scala.util.Random

import sparkwin.TestSupport._
import sparkwin.core.ArrayRecord
import sparkwin.core.window.TumblingWindows
import sparkwin.operator.{AccumulationMode, OperatorSpec, WindowFunction}
import sparkwin.runtime.TimeMove
import sparkwin.runtime.local.LocalRunner

/** Integral sums are exact or flagged: an accumulator, a packed row and any split into
  * partials agree with the exact (BigInt) sum, and the operator gives Spark's answers for an
  * overflow: wrapped without ANSI, null plus an error row with it.
  */
class SumOverflowSuite extends munit.FunSuite {

  private val sum = Aggregate.Sum("total", 0, NumericKind.Integral)
  private def row(v: Long) = new ArrayRecord(Array[Any](v))
  private val TwoTo64 = BigInt(1) << 64

  private def accOf(values: Seq[Long]): LongSumAcc = {
    val a = new LongSumAcc(0)
    values.foreach(v => a.add(row(v), 0L))
    a
  }

  /** What a sum of `values` must give: the long, or an overflow carrying the wrapped long. */
  private def expected(values: Seq[Long]): Any = {
    val exact = values.map(BigInt(_)).sum
    if (exact.isValidLong) exact.toLong else ("overflow", (exact % TwoTo64).toLong)
  }

  private def shown(result: Any): Any = result match {
    case o: SumOverflow => ("overflow", o.wrapped)
    case other => other
  }

  test("two Long.MaxValue amounts overflow, and the wrapped value is kept for ANSI-off") {
    assertEquals(shown(accOf(Seq(Long.MaxValue, Long.MaxValue)).result), ("overflow", -2L))
    assertEquals(shown(accOf(Seq(Long.MinValue, -1L)).result), ("overflow", Long.MaxValue))
  }

  test("a sum that wraps and comes back is exact, in every order") {
    for (order <- Seq(Long.MaxValue, 1L, -1L).permutations)
      assertEquals(accOf(order).result, Long.MaxValue, order)
  }

  test("wraps up and down in merged partials cancel out") {
    val up = accOf(Seq(Long.MaxValue, Long.MaxValue)) // 2^64 - 2
    val down = accOf(Seq(Long.MinValue, Long.MinValue)) // -2^64
    up.merge(down)
    assertEquals(up.result, -2L)
  }

  test("the wrap count survives save and restore; a two-field save is read as no wrap") {
    val a = accOf(Seq(Long.MaxValue, 5L))
    val b = new LongSumAcc(0)
    b.restore(a.save)
    assertEquals(shown(b.result), shown(a.result))
    val old = new LongSumAcc(0)
    old.restore(Array[Any](7L, true))
    assertEquals(old.result, 7L)
  }

  test("accumulators, packed rows and random partial splits agree with the exact sum") {
    val packed = new PackedAggregates(Array(sum))
    val rnd = new Random(20261125L)
    val extremes = Array(Long.MaxValue, Long.MinValue, Long.MaxValue - 1, Long.MinValue + 1, 0L, 1L, -1L)
    for (trial <- 0 until 500) {
      val n = 1 + rnd.nextInt(8)
      val values =
        Seq.fill(n)(if (rnd.nextBoolean()) extremes(rnd.nextInt(extremes.length)) else rnd.nextLong())
      val want = expected(values)
      assertEquals(shown(accOf(values).result), want, s"accumulator, trial $trial: $values")

      // Split into partials at random points, fold each, merge in a random order.
      val cuts = (0 +: Seq.fill(rnd.nextInt(3))(rnd.nextInt(n + 1)) :+ n).sorted
      val parts = cuts.zip(cuts.tail).map { case (a, b) => values.slice(a, b) }
      val merged = new LongSumAcc(0)
      rnd.shuffle(parts).foreach(p => merged.merge(accOf(p)))
      if (values.nonEmpty) assertEquals(shown(merged.result), want, s"merged accumulators, trial $trial")

      val into = new Array[Long](packed.slots)
      rnd.shuffle(parts).foreach { p =>
        val part = new Array[Long](packed.slots)
        p.foreach(v => packed.add(part, 0, row(v)))
        packed.merge(into, 0, part, 0)
      }
      assertEquals(shown(packed.results(into, 0)(0)), want, s"packed, trial $trial: $values")
      val loaded = Accumulator.fresh(Array(sum))
      packed.load(loaded, into, 0)
      assertEquals(shown(loaded(0).result), want, s"packed loaded into an accumulator, trial $trial")
    }
  }

  test("a decimal sum overflows past its result type's integer digits, with nothing to wrap") {
    val d = new DecimalSumAcc(0, integerDigits = 3)
    d.add(new ArrayRecord(Array[Any](new java.math.BigDecimal("600.25"))), 0L)
    assertEquals(d.result, new java.math.BigDecimal("600.25"))
    d.add(new ArrayRecord(Array[Any](new java.math.BigDecimal("400.00"))), 0L)
    assert(d.result.isInstanceOf[SumOverflow], d.result)
    assertEquals(d.result.asInstanceOf[SumOverflow].wrapped, null)
  }

  private def run(ansi: Boolean, packable: Boolean): Collect = {
    val aggs = IndexedSeq(sumValue, countAll) ++ (if (packable) Nil else Seq(collectValues))
    val spec = OperatorSpec(
      TumblingWindows(1000, 0, isEventTime = true),
      sparkwin.core.trigger.EventTimeTrigger,
      None,
      0,
      lateOutput = true,
      WindowFunction.Aggregates(aggs),
      AccumulationMode.Accumulating,
      ansi = ansi
    )
    val out = new Collect
    val runner = new LocalRunner(spec, r => r.get(0), 1, None, out)
    Seq(("a", Long.MaxValue, 10L), ("a", Long.MaxValue, 20L), ("b", 5L, 30L), ("a", 1L, 1500L))
      .foreach { case (k, v, ts) => runner.processElement(rec(k, v, ts), ts, 0) }
    runner.moveClocks(TimeMove.Watermark(5000, 0))
    out
  }

  for (packable <- Seq(true, false)) {
    val layout = if (packable) "packed aggregates" else "general accumulators"
    test(s"with ANSI an overflowing window sums to null and names itself on errors ($layout)") {
      val out = run(ansi = true, packable)
      val rows = out.take().map(o => (o.key, o.start, o.values.take(2)))
      assertEquals(
        rows.sortBy(r => (r._2, r._1.toString)),
        List(("a", 0L, Seq[Any](null, 2L)), ("b", 0L, Seq[Any](5L, 1L)), ("a", 1000L, Seq[Any](1L, 1L)))
      )
      assertEquals(
        out.windowErrors.map(e => (e._1, e._2.toString)).toList,
        List(("a", "TimeWindow[0, 1000)"))
      )
      val message = out.windowErrors.head._3
      assert(
        message.contains("sum overflowed in window [1970-01-01T00:00:00Z, 1970-01-01T00:00:01Z)"),
        message
      )
      assert(message.contains("spark.sql.ansi.enabled=false"), message)
    }

    test(s"without ANSI an overflowing window sum wraps as Spark's does ($layout)") {
      val out = run(ansi = false, packable)
      val a0 = out.take().find(o => o.key == "a" && o.start == 0L).get
      assertEquals(a0.values.take(2), Seq[Any](-2L, 2L))
      assert(out.windowErrors.isEmpty)
    }
  }
}
