package sparkwin.operator.slice

import scala.util.Random

import org.scalacheck.{Gen, Prop}

import sparkwin.core.ArrayRecord
import sparkwin.core.agg.{Accumulator, Aggregate => A, LongSumAcc, NumericKind, SumOverflow}

/** A key's running window total gives, at every firing, what merging the window's slices in
  * order gives: on random slices of many windows, with elements and partials reaching slices
  * in any order (before and behind what the total holds), slices inserted out of order, windows
  * skipped, and the total forgotten as a state read back from a store forgets it.
  */
class WindowTotalSuite extends munit.ScalaCheckSuite {
  // Columns: 1 a long that may be huge or null, 2 the event time, 3 a small long, 4 a boolean.
  private val invertible = Array[A](
    A.Count("rows", -1),
    A.Count("values", 1),
    A.Sum("sum", 1, NumericKind.Integral),
    A.CountIf("yes", 4)
  )
  private val mergeOnly = Array[A](
    A.Min("min", 3),
    A.Max("max", 1),
    A.First("first", 3),
    A.Last("last", 3),
    A.Avg("avg", 3),
    A.Sum("dsum", 3, NumericKind.Fractional),
    // Ties on the order column go to the first one seen: the slices' order must hold.
    A.ExtremeBy("minBy", 1, 3, wantMax = false, tieByValue = false),
    A.Variance("var", 3, sample = false, sqrt = false)
  )

  private def record(rnd: Random, ts: Long): ArrayRecord = {
    val big: Any = rnd.nextInt(6) match {
      case 0 => null
      case 1 => Long.MaxValue - rnd.nextInt(3)
      case 2 => Long.MinValue + rnd.nextInt(3)
      case _ => rnd.nextInt(100).toLong - 50
    }
    val small: Any = if (rnd.nextInt(8) == 0) null else rnd.nextInt(5).toLong
    val flag: Any = rnd.nextInt(3) match { case 0 => null; case 1 => true; case _ => false }
    new ArrayRecord(Array[Any]("k", big, ts, small, flag))
  }

  // Results are compared exactly but for the variance, whose merge in another grouping of the
  // same slices agrees up to a double's last bits (the other doubles here hold whole numbers,
  // which add exactly in any grouping).

  /** What the firing must give: the window's slices merged in order. */
  private def naive(aggs: Array[A], st: SliceState, start: Long, end: Long): Seq[Any] = {
    val merged = Accumulator.fresh(aggs)
    var i = st.from(start)
    while (i < st.count && st.start(i) < end) { Accumulator.mergeAll(merged, st.accumulators(i)); i += 1 }
    Accumulator.results(merged).toSeq
  }

  /** Windows of `size` slices of width 1 every `slide`, fired in order as KeyedSlices fires them
    * (the total's callers are the same three: an element or partial, a new slice, a firing).
    */
  private def check(aggs: Array[A], size: Int, slide: Int, seed: Long): Unit = {
    val rnd = new Random(seed)
    val st = new SliceState
    var end = size.toLong // the next window to fire: [end - size, end)
    var fired = 0
    for (_ <- 0 until 400) {
      rnd.nextInt(10) match {
        case 0 | 1 =>
          if (st.count > 0 && st.start(0) < end) {
            val expected = naive(aggs, st, end - size, end)
            if (st.total == null) st.total = WindowTotal(aggs)
            val obtained = st.total.fire(st, end).toSeq
            val close = obtained.size == expected.size && obtained.zip(expected).forall {
              case (a: Double, b: Double) => a == b || math.abs(a - b) <= 1e-9 * math.abs(b)
              case (a, b) => a == b
            }
            assert(close, s"window ending at $end: $obtained, merged in order $expected")
            fired += 1
          }
          val leaving = st.from(end - size + slide)
          if (st.total != null) st.total.dropping(st, leaving)
          st.dropOldest(leaving)
          // The next window with data: several slides on when the ones between hold no slice.
          val skip = end + slide * (1 + rnd.nextInt(3))
          end = if (st.count == 0 || st.start(0) >= skip - size) skip else end + slide
        case 2 if rnd.nextInt(4) == 0 => st.reset() // read back from a store
        case _ =>
          // Any live slice: those of the next window (possibly held) or later ones.
          val s = end - size + rnd.nextInt(size + 2 * slide)
          var i = st.from(s)
          if (i == st.count || st.start(i) != s) st.insert(i, s, Accumulator.fresh(aggs))
          i = st.from(s)
          val held = st.total != null && s < st.total.covered
          if (rnd.nextInt(5) == 0) {
            val partial = Accumulator.fresh(aggs)
            for (_ <- 0 to rnd.nextInt(3)) Accumulator.addAll(partial, record(rnd, s), s)
            Accumulator.mergeAll(st.accumulators(i), partial)
            if (held) st.total.added(st, i, null, s, partial)
          } else {
            val r = record(rnd, s)
            Accumulator.addAll(st.accumulators(i), r, s)
            if (held) st.total.added(st, i, r, s, null)
          }
      }
    }
    assert(fired > 0, "no window fired")
  }

  for ((name, aggs) <- Seq("invertible" -> invertible, "merge-only" -> mergeOnly)) {
    for ((size, slide) <- Seq((3, 1), (12, 1), (30, 1), (12, 4), (40, 5))) {
      property(s"$name aggregates, windows of $size slices every $slide: the slices merged") {
        Prop.forAll(Gen.long)(seed => check(aggs, size, slide, seed))
      }
    }
  }

  test("which aggregates subtract") {
    assertEquals(invertible.map(_.invertible).toSeq, Seq(true, true, true, true))
    assertEquals(mergeOnly.map(_.invertible).toSeq, Seq.fill(mergeOnly.length)(false))
    assert(!A.Sum("d", 1, NumericKind.Decimal).invertible)
    assert(WindowTotal(invertible).isInstanceOf[RunningTotal])
    assert(WindowTotal(invertible :+ A.Max("m", 1)).isInstanceOf[TwoStacks])
  }

  property("a long sum takes a merged sum back out exactly, across wraps and nulls") {
    val value = Gen.oneOf(
      Gen.const[Any](null),
      Gen.choose(-100L, 100L),
      Gen.oneOf(Long.MaxValue, Long.MinValue, Long.MaxValue - 1, Long.MinValue + 1)
    )
    Prop.forAll(Gen.listOf(Gen.listOf(value))) { slices =>
      def sumOf(values: List[Any]): LongSumAcc = {
        val a = new LongSumAcc(1)
        values.foreach(v => a.add(new ArrayRecord(Array[Any]("k", v)), 0L))
        a
      }
      val parts = slices.map(sumOf)
      val total = new LongSumAcc(1)
      parts.foreach(total.merge)
      // Taking the slices out oldest first leaves, each time, the merge of the rest.
      parts.indices.foreach { k =>
        total.subtract(parts(k))
        val rest = new LongSumAcc(1)
        parts.drop(k + 1).foreach(rest.merge)
        assertEquals(total.result, rest.result, s"after taking out ${k + 1} of ${parts.size}")
      }
      assertEquals(total.result, null)
    }
  }

  test("a wrapped long sum reports its overflow, and stops once the wrapping value leaves") {
    val big = new LongSumAcc(1)
    big.add(new ArrayRecord(Array[Any]("k", Long.MaxValue)), 0L)
    val one = new LongSumAcc(1)
    one.add(new ArrayRecord(Array[Any]("k", 1L)), 0L)
    val total = new LongSumAcc(1)
    total.merge(big)
    total.merge(one)
    assertEquals(total.result, SumOverflow(Long.MinValue))
    total.subtract(big)
    assertEquals(total.result, 1L)
  }
}
