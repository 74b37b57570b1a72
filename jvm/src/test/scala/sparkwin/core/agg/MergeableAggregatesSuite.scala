package sparkwin.core.agg

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import scala.util.Random

import sparkwin.TestSupport._
import sparkwin.core.ArrayRecord
import sparkwin.core.window.{SessionWindows, SlidingWindows, TumblingWindows}
import sparkwin.operator.Selection
import sparkwin.operator.store.ValueCodec
import sparkwin.runtime.TimeMove
import sparkwin.runtime.local.LocalRunner

/** The statistical aggregates (variance family, countIf, minBy/maxBy, minByAll/maxByAll, approxCountDistinct,
  * percentileApprox) are mergeable: any split of a window's values into partials, merged in any
  * order, gives what one pass gives; their state survives the state codec; and sliced windows
  * and merged sessions give what a fresh accumulator fed each window's elements gives.
  */
class MergeableAggregatesSuite extends munit.FunSuite {

  // Records: (key, value: Long, ts: Long, flag: Boolean or null, price: Double, label: String)
  private def row(v: Long, flag: Any, price: Double, label: String, ts: Long = 0L, key: String = "k") =
    new ArrayRecord(Array[Any](key, v, ts, flag, price, label))

  private val aggregates: IndexedSeq[Aggregate] = IndexedSeq(
    Aggregate.Variance("var_samp", 1, sample = true, sqrt = false),
    Aggregate.Variance("stddev_pop", 4, sample = false, sqrt = true),
    Aggregate.CountIf("count_if", 3),
    Aggregate.ExtremeBy("min_by", 5, 1, wantMax = false, tieByValue = true),
    Aggregate.ExtremeBy("max_by", 4, 1, wantMax = true, tieByValue = true),
    Aggregate.ExtremeByAll("max_by_all", 5, 1, wantMax = true, tieByValue = true),
    Aggregate.ExtremeByAll("min_by_all", 4, 5, wantMax = false, tieByValue = true),
    Aggregate.ExtremeByAll("max_by_all_2", 5, 1, wantMax = true, tieByValue = true, limit = 2),
    Aggregate.ApproxCountDistinct("acd", 1, 0.05, SparkHash.AsLong),
    Aggregate.ApproxCountDistinct("acd_label", 5, 0.01, SparkHash.AsBytes),
    Aggregate.PercentileApprox("median", 1, IndexedSeq(0.5), 10000, array = false, NumberType.LongNumber),
    Aggregate.PercentileApprox(
      "quartiles",
      4,
      IndexedSeq(0.0, 0.25, 0.75, 1.0),
      10000,
      array = true,
      NumberType.DoubleNumber
    )
  )

  private def randomRows(rnd: Random, n: Int): IndexedSeq[ArrayRecord] =
    IndexedSeq.fill(n) {
      val flag = rnd.nextInt(3) match { case 0 => null; case 1 => true; case _ => false }
      // Few distinct values, so ties on ord and duplicates in the sketches happen.
      row(rnd.nextInt(40).toLong - 10, flag, rnd.nextGaussian() * 1e3 + 5e6, s"l${rnd.nextInt(25)}")
    }

  private def fed(rows: Seq[ArrayRecord]): Array[Accumulator] = {
    val accs = Accumulator.fresh(aggregates.toArray)
    rows.foreach(r => Accumulator.addAll(accs, r, 0L))
    accs
  }

  /** Results with doubles rounded to 9 significant digits (merges reorder additions). */
  private def shown(accs: Array[Accumulator]): Seq[Any] = roundedResults(Accumulator.results(accs).toSeq)

  test("random splits merged in random orders give what one pass gives") {
    val rnd = new Random(20261125L)
    for (trial <- 0 until 300) {
      val rows = randomRows(rnd, rnd.nextInt(60))
      val want = shown(fed(rows))
      val cuts = (0 +: Seq.fill(rnd.nextInt(5))(rnd.nextInt(rows.size + 1)) :+ rows.size).sorted
      val parts = cuts.zip(cuts.tail).map { case (a, b) => rows.slice(a, b) }
      val merged = Accumulator.fresh(aggregates.toArray)
      rnd.shuffle(parts).foreach(p => Accumulator.mergeAll(merged, fed(p)))
      assertEquals(shown(merged), want, s"trial $trial")
      // A copy is independent of its original.
      val copy = merged.map(_.copy())
      Accumulator.addAll(copy, row(1000, true, 1.0, "new"), 0L)
      assertEquals(shown(merged), want, s"trial $trial, after a copy was changed")
    }
  }

  test("the state codec round-trips every accumulator, and restored ones keep accumulating") {
    val rnd = new Random(7L)
    for (n <- Seq(0, 1, 2, 50, 3000)) {
      val rows = randomRows(rnd, n)
      val accs = fed(rows)
      val bytes = new ByteArrayOutputStream()
      ValueCodec.writeAccumulators(new DataOutputStream(bytes), accs)
      val back =
        ValueCodec.readAccumulators(
          new DataInputStream(new ByteArrayInputStream(bytes.toByteArray)),
          aggregates.toArray
        )
      assertEquals(shown(back), shown(accs), s"n = $n")
      val more = randomRows(rnd, 20)
      more.foreach(r => { Accumulator.addAll(back, r, 0L); Accumulator.addAll(accs, r, 0L) })
      assertEquals(shown(back), shown(accs), s"n = $n, then 20 more")
    }
  }

  test("variance follows Spark: null without values, sample null and population 0 for one") {
    val samp = new VarianceAcc(1, sample = true, sqrt = false)
    val pop = new VarianceAcc(1, sample = false, sqrt = true)
    assertEquals(samp.result, null)
    assertEquals(pop.result, null)
    samp.add(row(5, null, 0, ""), 0L); pop.add(row(5, null, 0, ""), 0L)
    assertEquals(samp.result, null)
    assertEquals(pop.result, 0.0)
    for (v <- Seq(7L, 9L)) { samp.add(row(v, null, 0, ""), 0L); pop.add(row(v, null, 0, ""), 0L) }
    assertEquals(samp.result, 4.0)
    assertEqualsDouble(pop.result.asInstanceOf[Double], math.sqrt(8.0 / 3), 1e-15)
  }

  test("variance stays exact far from zero, where the textbook sum of squares loses it all") {
    val acc = new VarianceAcc(4, sample = true, sqrt = false)
    val parts = Seq(Seq(1e9 + 4, 1e9 + 7), Seq(1e9 + 13), Seq(1e9 + 16))
    val accs = parts.map { p =>
      val a = new VarianceAcc(4, sample = true, sqrt = false); p.foreach(v => a.add(row(0, null, v, ""), 0L));
      a
    }
    accs.foreach(acc.merge)
    assertEqualsDouble(acc.result.asInstanceOf[Double], 30.0, 1e-6)
  }

  test("minBy and maxBy skip null ords, may answer null, and break ties by the smaller value") {
    val min = new ExtremeByAcc(5, 1, wantMax = false, tieByValue = true)
    val max = new ExtremeByAcc(5, 1, wantMax = true, tieByValue = true)
    val rows = Seq(
      new ArrayRecord(Array[Any]("k", null, 0L, null, 0.0, "no ord")),
      row(3, null, 0, "b"),
      row(3, null, 0, "a"),
      row(1, null, 0, null),
      row(9, null, 0, "z")
    )
    for (order <- rows.permutations) {
      val (lo, hi) = (min.copy(), max.copy())
      order.foreach(r => { lo.add(r, 0L); hi.add(r, 0L) })
      assertEquals(lo.result, null, order)
      assertEquals(hi.result, "z", order)
    }
    val tied = new ExtremeByAcc(5, 1, wantMax = true, tieByValue = true)
    Seq(row(3, null, 0, "b"), row(3, null, 0, "a")).foreach(tied.add(_, 0L))
    assertEquals(tied.result, "a")
  }

  test("maxByAll and minByAll keep every tied value, sorted, and skip rows with a null") {
    val max = new ExtremeByAllAcc(5, 1, wantMax = true, tieByValue = true)
    val min = new ExtremeByAllAcc(5, 1, wantMax = false, tieByValue = true)
    val rows = Seq(
      new ArrayRecord(Array[Any]("k", null, 0L, null, 0.0, "no ord")),
      row(9, null, 0, null), // a null value: skipped, so 9 is not the largest ord
      row(7, null, 0, "b"),
      row(7, null, 0, "a"),
      row(7, null, 0, "b"),
      row(2, null, 0, "c"),
      row(2, null, 0, "d")
    )
    for (order <- rows.permutations) {
      val (hi, lo) = (max.copy(), min.copy())
      order.foreach(r => { hi.add(r, 0L); lo.add(r, 0L) })
      assertEquals(hi.result, Seq("a", "b", "b"), order)
      assertEquals(lo.result, Seq("c", "d"), order)
    }
    assertEquals(new ExtremeByAllAcc(5, 1, wantMax = true, tieByValue = true).result, Seq.empty)
    // A better ord merged in replaces the ties; an equal one joins them, in order.
    val a = max.copy(); Seq(row(7, null, 0, "q"), row(7, null, 0, "c")).foreach(a.add(_, 0L))
    val b = max.copy(); Seq(row(5, null, 0, "z")).foreach(b.add(_, 0L))
    val c = max.copy(); Seq(row(7, null, 0, "b")).foreach(c.add(_, 0L))
    b.merge(a); b.merge(c)
    assertEquals(b.result, Seq("b", "c", "q"))
  }

  test("maxByAll with a limit keeps the smallest tied values, whatever the order and merges") {
    val two = new ExtremeByAllAcc(5, 1, wantMax = true, tieByValue = true, limit = 2)
    val rows = Seq(row(7, null, 0, "d"), row(7, null, 0, "b"), row(7, null, 0, "c"), row(7, null, 0, "a"))
    for (order <- (rows :+ row(3, null, 0, "0")).permutations) {
      val a = two.copy(); order.foreach(a.add(_, 0L))
      assertEquals(a.result, Seq("a", "b"), order)
      // Split in two partials at every point, merged either way round.
      for (cut <- 0 to order.size) {
        val (x, y) = (two.copy(), two.copy())
        order.take(cut).foreach(x.add(_, 0L)); order.drop(cut).foreach(y.add(_, 0L))
        val (xy, yx) = (x.copy(), y.copy()); xy.merge(y); yx.merge(x)
        assertEquals((xy.result, yx.result), (Seq("a", "b"), Seq("a", "b")), (order, cut))
      }
    }
    // A better ord still replaces the kept ties; values that do not order keep the first arrivals.
    val a = two.copy(); rows.foreach(a.add(_, 0L)); a.add(row(8, null, 0, "z"), 0L)
    assertEquals(a.result, Seq("z"))
    val first = new ExtremeByAllAcc(5, 1, wantMax = true, tieByValue = false, limit = 2)
    rows.foreach(first.add(_, 0L))
    assertEquals(first.result, Seq("d", "b"))
    intercept[IllegalArgumentException](
      Aggregate.ExtremeByAll("m", 5, 1, wantMax = true, tieByValue = true, limit = 0)
    )
  }

  test("maxByAll orders struct values field by field, nulls first, and stores them") {
    def bid(auction: Any, bidder: Any) = new ArrayRecord(Array[Any](auction, bidder))
    val acc = new ExtremeByAllAcc(1, 0, wantMax = true, tieByValue = true)
    val bids = Seq(bid(3L, "x"), bid(1L, "z"), bid(3L, null), bid(1L, "y"), bid(null, "a"))
    for (order <- bids.permutations.take(40)) {
      val a = acc.copy()
      order.foreach(b => a.add(new ArrayRecord(Array[Any](100L, b)), 0L))
      assertEquals(a.result, Seq(bid(null, "a"), bid(1L, "y"), bid(1L, "z"), bid(3L, null), bid(3L, "x")))
    }
    val full = acc.copy()
    bids.foreach(b => full.add(new ArrayRecord(Array[Any](100L, b)), 0L))
    val bytes = new ByteArrayOutputStream()
    ValueCodec.writeAccumulators(new DataOutputStream(bytes), Array(full))
    val back = ValueCodec.readAccumulators(
      new DataInputStream(new ByteArrayInputStream(bytes.toByteArray)),
      Array(Aggregate.ExtremeByAll("m", 1, 0, wantMax = true, tieByValue = true))
    )
    assertEquals(back(0).result, full.result)
    // Arrays order element by element, a prefix first.
    assert(Aggregate.tieOrdering.compare(Seq(1L, 2L), Seq(1L, 2L, 0L)) < 0)
    assert(Aggregate.tieOrdering.compare(Seq(1L, 3L), Seq(1L, 2L, 0L)) > 0)
  }

  test("maxByAll of values that do not order keeps arrival order and is not pre-aggregated") {
    val acc = new ExtremeByAllAcc(5, 1, wantMax = true, tieByValue = false)
    Seq(row(7, null, 0, "b"), row(7, null, 0, "a"), row(1, null, 0, "z")).foreach(acc.add(_, 0L))
    assertEquals(acc.result, Seq("b", "a"))
    val unordered = Aggregate.ExtremeByAll("m", 5, 1, wantMax = true, tieByValue = false)
    val tumbling = aggregateSpec(TumblingWindows(1000, 0, isEventTime = true), Seq(unordered), false)
    val sliding = aggregateSpec(SlidingWindows(1000, 250, 0, isEventTime = true), Seq(unordered), false)
    assert(!Selection.combinable(tumbling) && !Selection.sliceable(sliding))
  }

  test("countIf counts true only") {
    val acc = new CountIfAcc(3)
    Seq[Any](true, false, null, true).foreach(f => acc.add(row(0, f, 0, ""), 0L))
    assertEquals(acc.result, 2L)
  }

  test("xxHash64 gives the reference values of the algorithm") {
    // XXH64 of no bytes with seed 0, and Spark's xxhash64 of the int 0, long 0 and "" (seed 42).
    assertEquals(XxHash64.hashBytes(Array.emptyByteArray, 0L), 0xef46db3751d8e999L)
    val long = XxHash64.hashLong(0x0807060504030201L, 7L)
    assertEquals(long, XxHash64.hashBytes(Array[Byte](1, 2, 3, 4, 5, 6, 7, 8), 7L))
    assertEquals(XxHash64.hashInt(0x04030201, 7L), XxHash64.hashBytes(Array[Byte](1, 2, 3, 4), 7L))
    // Stripes of 32 bytes, then words, a half word and bytes agree with a byte-wise reading.
    val bytes = Array.tabulate[Byte](77)(i => (i * 37 + 11).toByte)
    assertNotEquals(XxHash64.hashBytes(bytes, 42L), XxHash64.hashBytes(bytes.init, 42L))
  }

  test("HyperLogLog counts exactly while few, and stays within its error when many") {
    for ((n, rsd) <- Seq((10, 0.05), (300, 0.05), (100000, 0.05), (20000, 0.01), (2000, 0.05))) {
      val acc = new HyperLogLogAcc(1, HyperLogLog.precisionFor(rsd), SparkHash.AsLong)
      (0 until n).foreach(i => acc.add(row(i * 7919L, null, 0, ""), 0L))
      val got = acc.result.asInstanceOf[Long]
      if (n <= 10) assertEquals(got, n.toLong, s"n = $n")
      else assert(math.abs(got - n) <= 4 * rsd * n, s"n = $n, rsd = $rsd: $got")
    }
    assertEquals(HyperLogLog.precisionFor(0.05), 9)
    assertEquals(HyperLogLog.precisionFor(0.39), 4)
    assertEquals(HyperLogLog.precisionFor(0.0022), 18)
  }

  test("a HyperLogLog of another precision is refused, not misread") {
    val acc = new HyperLogLogAcc(1, 9, SparkHash.AsLong)
    acc.add(row(1, null, 0, ""), 0L)
    val other = new HyperLogLogAcc(1, 10, SparkHash.AsLong)
    intercept[IllegalStateException](other.restore(acc.save))
  }

  test("percentiles are exact below the accuracy and within rank n / accuracy above it") {
    val rnd = new Random(3L)
    for ((n, accuracy) <- Seq((500, 10000L), (200000, 100L), (50000, 1000L))) {
      val values = IndexedSeq.fill(n)(rnd.nextInt(n / 3 + 1).toDouble)
      val sorted = values.sorted
      val spec = Aggregate.PercentileApprox(
        "p",
        4,
        IndexedSeq(0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 1.0),
        accuracy,
        array = true,
        NumberType.DoubleNumber
      )
      // In partials of random sizes, merged in a random order, as slices and partials merge.
      val parts = values.grouped(1 + rnd.nextInt(n / 4 + 1)).toSeq
      val merged = new PercentileAcc(4, spec)
      rnd.shuffle(parts).foreach { p =>
        val part = new PercentileAcc(4, spec)
        p.foreach(v => part.add(row(0, null, v, ""), 0L))
        merged.merge(part)
      }
      val got = merged.result.asInstanceOf[Seq[Double]]
      for ((q, v) <- spec.percentages.zip(got)) {
        val target = math.max(1L, math.ceil(q * n).toLong)
        // The ranks v takes in the sorted values: [first, last].
        val first = sorted.indexWhere(_ >= v) + 1L
        val last = sorted.lastIndexWhere(_ <= v) + 1L
        val error = if (target < first) first - target else if (target > last) target - last else 0L
        if (n < accuracy) assertEquals(error, 0L, s"n = $n, q = $q: $v")
        else assert(error <= n / accuracy, s"n = $n, accuracy = $accuracy, q = $q: $v off by $error")
      }
    }
  }

  private val all = aggregates.filterNot(_.isInstanceOf[Aggregate.ApproxCountDistinct]) :+
    Aggregate.ApproxCountDistinct("acd", 1, 0.05, SparkHash.AsLong)

  test("every new aggregate is order-blind: sliced, on the session fast path, pre-aggregated") {
    val sliding = aggregateSpec(SlidingWindows(1000, 250, 0, isEventTime = true), all, lateOutput = false)
    val sessions = aggregateSpec(SessionWindows(300, -1, isEventTime = true), all, lateOutput = false)
    assert(Selection.sliceable(sliding))
    assert(Selection.combinable(sliding))
    assert(Selection.sessionFastPath(sessions))
    val unordered = Aggregate.ExtremeBy("m", 5, 1, wantMax = true, tieByValue = false)
    assert(
      !Selection.combinable(
        aggregateSpec(TumblingWindows(1000, 0, isEventTime = true), Seq(unordered), false)
      )
    )
  }

  /** Every window's results through the operator, by (key, start, end). */
  private def throughOperator(spec: sparkwin.operator.OperatorSpec, rows: Seq[ArrayRecord]) = {
    val out = new Collect
    val runner = new LocalRunner(spec, r => r.get(0), 1, None, out)
    rows.foreach(r => runner.processElement(r, r.get(2).asInstanceOf[Long], 0))
    runner.moveClocks(TimeMove.Watermark(100000L, 0))
    out.take().map(o => ((o.key, o.start, o.end), o.values.toSeq)).toMap
  }

  private def roundedResults(values: Seq[Any]): Seq[Any] = {
    def rounded(d: Double) = BigDecimal(d).round(new java.math.MathContext(9)).toDouble
    values.map {
      case d: Double => rounded(d)
      case s: Seq[_] => s.map { case d: Double => rounded(d); case other => other }
      case other => other
    }
  }

  private def streamRows(rnd: Random): Seq[ArrayRecord] =
    randomRows(rnd, 400).map { r =>
      val a = r.values.clone()
      a(0) = s"k${rnd.nextInt(3)}"; a(2) = rnd.nextInt(5000).toLong
      new ArrayRecord(a)
    }

  private def expected(windows: Map[(Any, Long, Long), Seq[ArrayRecord]]) =
    windows.map { case (w, rows) =>
      val accs = Accumulator.fresh(all.toArray)
      rows.foreach(r => Accumulator.addAll(accs, r, 0L))
      w -> roundedResults(Accumulator.results(accs).toSeq)
    }

  test("sliding windows from slices equal each window fed its own elements") {
    val rnd = new Random(11L)
    val rows = streamRows(rnd)
    val got = throughOperator(aggregateSpec(SlidingWindows(1000, 250, 0, true), all, false), rows)
    val windows = rows
      .flatMap { r =>
        val ts = r.get(2).asInstanceOf[Long]
        val last = ts - ts % 250
        (last until (ts - 1000) by -250).map(s => ((r.get(0): Any, s, s + 1000), r))
      }
      .groupBy(_._1)
      .map { case (w, rs) => w -> rs.map(_._2) }
    assertEquals(got.map { case (w, v) => w -> roundedResults(v) }, expected(windows))
  }

  test("merged sessions equal each session fed its own elements") {
    val rnd = new Random(12L)
    val rows = streamRows(rnd)
    val got = throughOperator(aggregateSpec(SessionWindows(60, -1, true), all, false), rows)
    val windows = rows.groupBy(_.get(0)).flatMap { case (key, rs) =>
      val byTime = rs.sortBy(_.get(2).asInstanceOf[Long])
      val sessions = scala.collection.mutable.ArrayBuffer.empty[(Long, Long, Vector[ArrayRecord])]
      byTime.foreach { r =>
        val ts = r.get(2).asInstanceOf[Long]
        if (sessions.nonEmpty && ts <= sessions.last._2) {
          val (s, e, members) = sessions.last
          sessions(sessions.size - 1) = (s, math.max(e, ts + 60), members :+ r)
        } else sessions += ((ts, ts + 60, Vector(r)))
      }
      // A session's elements in arrival order, as the operator saw them.
      sessions.map { case (s, e, members) => (key: Any, s, e) -> rs.filter(members.contains) }
    }
    assertEquals(got.map { case (w, v) => w -> roundedResults(v) }, expected(windows))
  }
}
