package sparkwin.runtime.spark.task

import sparkwin.plan._
import sparkwin.runtime.spark._

import scala.util.Random

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

import sparkwin.core.agg.{Accumulator, Aggregate => A, NumericKind}
import sparkwin.core.agg.PackedAggregates
import sparkwin.operator.Selection
import sparkwin.core.window._

/** The combiner's groups are exactly "same key, same windows", in order of first appearance,
  * with the right counts and accumulators; rows without a timestamp pass through untouched.
  */
class CombinerSuite extends munit.FunSuite {
  private val schema = StructType(
    Seq(
      StructField("user", StringType),
      StructField("region", IntegerType),
      StructField("ts", LongType),
      StructField("amount", LongType)
    )
  )
  // Sum and count lead both sets. The first packs into long slots; max keeps the second on
  // accumulators.
  private val packedAggs =
    sparkwin.TestSupport.packableAggregates(long = 3, nullable = 0, double = 3).toIndexedSeq
  private val objectAggs = IndexedSeq(A.Sum("s", 3, NumericKind.Integral), A.Count("n", -1), A.Max("m", 3))
  private val noClock = new WindowAssignerContext { def currentProcessingTime = 0L }

  private def plan(
      assigner: WindowAssigner,
      keys: IndexedSeq[Int],
      aggs: IndexedSeq[A] = packedAggs
  ): Plan = {
    val spec = sparkwin.TestSupport.aggregateSpec(assigner, aggs, lateOutput = false)
    assert(spec.combinable)
    Plan("{}", schema, 2, keys, None, None, None, spec, None, IndexedSeq.empty, None)
  }

  private def rows(seed: Long): Seq[Row] = {
    val rnd = new Random(seed)
    Seq.fill(300) {
      val user = if (rnd.nextInt(20) == 0) null else s"u${rnd.nextInt(4)}"
      val ts: Any = if (rnd.nextInt(25) == 0) null else (rnd.nextInt(80) - 30).toLong
      Row(user, rnd.nextInt(2), ts, rnd.nextInt(9).toLong)
    }
  }

  private val assigners = Seq(
    TumblingWindows(10, 0, isEventTime = true),
    TumblingWindows(10, 3, isEventTime = true),
    SlidingWindows(10, 4, 0, isEventTime = true), // size not a multiple of the slide
    SlidingWindows(12, 4, 1, isEventTime = true),
    SlidingWindows(3, 5, 0, isEventTime = true) // gaps: some elements are in no window
  )

  test("the first aggregate set packs into long slots, the second does not") {
    val p = plan(assigners.head, IndexedSeq(0))
    assert(Selection.packs(p.spec))
    assert(!Selection.packs(plan(assigners.head, IndexedSeq(0), objectAggs).spec))
  }

  for (
    assigner <- assigners; keys <- Seq(IndexedSeq(0), IndexedSeq(0, 1), IndexedSeq.empty[Int]);
    (kind, aggs) <- Seq("packed" -> packedAggs, "object" -> objectAggs)
  )
    test(s"$assigner keyed by ${keys.mkString(",")}, $kind aggregates: groups are key x window set") {
      val p = plan(assigner, keys, aggs)
      for (seed <- 1L to 20L) {
        val input = rows(seed)
        val out = Combiner.combine(p, input.iterator).toSeq
        // One codec decodes every group, as in a task: a reused decode target must not leak.
        val codec = new Combiner.PartialCodec(p.spec)
        val width = math.max(keys.size, 1)
        def keyOf(r: Row): Seq[Any] = if (keys.isEmpty) Seq(0) else keys.map(r.get)

        val (timed, untimed) = input.partition(r => !r.isNullAt(2))
        // Untimed rows first, unchanged, behind their key.
        val passed = out.filter(r => !r.isNullAt(width + 3))
        assertEquals(passed.map(_.getStruct(width + 3)), untimed)
        assertEquals(passed.map(r => (0 until width).map(r.get)), untimed.map(keyOf))
        assert(out.take(passed.size).forall(r => !r.isNullAt(width + 3)))

        def id(r: Row) = (keyOf(r), assigner.assignWindows(null, r.getLong(2), noClock))
        val expected = timed.groupBy(id)
        val order = timed.map(id).distinct
        val groups = out.drop(passed.size)
        assertEquals(groups.size, order.size)
        for ((g, want) <- groups.zip(order)) {
          val members = expected(want)
          assertEquals((0 until width).map(g.get), want._1)
          // The group's timestamp is one of its members': the operator reads its windows from it.
          assertEquals(id(Row(want._1.head, 0, g.getLong(width), 0L)) match { case (_, w) => w }, want._2)
          assertEquals(g.getLong(width + 1), members.size.toLong)
          val accs = codec.decode(g.getAs[Array[Byte]](width + 2))
          assertEquals(accs(0).result, members.map(_.getLong(3)).sum)
          assertEquals(accs(1).result, members.size.toLong)
          val folded = Accumulator.fresh(aggs.toArray)
          members.foreach(r => folded.foreach(_.add(new RowRecord(r), r.getLong(2))))
          assertEquals(Accumulator.results(accs).toSeq, Accumulator.results(folded).toSeq)
        }
      }
    }

  test("a packed partial is its slots' longs, and one of another length is refused") {
    val p = plan(assigners.head, IndexedSeq(0))
    val codec = new Combiner.PartialCodec(p.spec)
    val slots = codec.newSlots()
    slots.indices.foreach(i => slots(i) = (i + 1) * 1000003L * (if (i % 2 == 0) 1 else -1))
    val bytes = codec.encode(null, slots)
    assertEquals(bytes.length, slots.length * 8)
    val fresh = new Combiner.PartialCodec(p.spec)
    // The decoded accumulators hold what loading the same slots gives.
    val expected = Accumulator.fresh(packedAggs.toArray)
    new PackedAggregates(packedAggs.toArray).load(expected, slots, 0)
    assertEquals(Accumulator.results(fresh.decode(bytes)).toSeq, Accumulator.results(expected).toSeq)
    val e = intercept[IllegalStateException](fresh.decode(bytes.dropRight(1)))
    assert(e.getMessage.contains("packed partial"), e.getMessage)
  }

  test("structs fold into partials as records: maxByAll of a struct column, every split alike") {
    val bids = StructType(
      Seq(
        StructField("ts", LongType),
        StructField("price", LongType),
        StructField(
          "bid",
          StructType(Seq(StructField("auction", LongType), StructField("bidder", StringType)))
        )
      )
    )
    val aggs = IndexedSeq[A](A.ExtremeByAll("m", 2, 1, wantMax = true, tieByValue = true))
    val spec = sparkwin.TestSupport.aggregateSpec(TumblingWindows(100, 0, isEventTime = true), aggs, false)
    assert(spec.combinable)
    val p = Plan("{}", bids, 0, IndexedSeq.empty, None, None, None, spec, None, IndexedSeq.empty, None)
    val rnd = new Random(3)
    val input = Seq.fill(200)(
      Row(rnd.nextInt(100).toLong, rnd.nextInt(4).toLong, Row(rnd.nextInt(9).toLong, s"b${rnd.nextInt(3)}"))
    )
    val whole =
      new Combiner.PartialCodec(spec).decode(Combiner.combine(p, input.iterator).next().getAs[Array[Byte]](3))
    val top =
      input.filter(_.getLong(1) == 3L).map(_.getStruct(2)).map(r => (r.getLong(0), r.getString(1))).sorted
    val result = whole(0).result.asInstanceOf[Seq[sparkwin.core.Record]].map(r => (r.get(0), r.get(1)))
    assertEquals(result, top: Seq[(Any, Any)])
    // Halves combined apart and merged give the same, as the operator merges partials.
    val (a, b) = input.splitAt(77)
    val codec = new Combiner.PartialCodec(spec)
    val merged =
      Seq(b, a).map(h => codec.decode(Combiner.combine(p, h.iterator).next().getAs[Array[Byte]](3))(0))
    merged(0).merge(merged(1))
    assertEquals(merged(0).result, whole(0).result)
  }

  test("a row's nested rows are stored as records; values without any, as they are") {
    val numbers = Seq(1L, 2L)
    val row = Row("k", Row(1L, "x"), Seq(Row(2L)), numbers, null)
    val record = new RowRecord(row)
    assertEquals(record.stored(1), new sparkwin.core.ArrayRecord(Array[Any](1L, "x")))
    assertEquals(record.stored(2), Seq(new sparkwin.core.ArrayRecord(Array[Any](2L))))
    assert(record.stored(3).asInstanceOf[AnyRef] eq numbers)
    assertEquals(record.stored(4), null)
    assertEquals(record.stored(0), "k")
  }

  test("window sets: counts match the assigner's windows") {
    for (
      assigner <- assigners.collect { case s: SlidingWindows => s };
      ts <- -40L to 40L
    ) {
      val sets = AlignedWindows.grid(assigner).get
      val windows = assigner.assignWindows(null, ts, noClock)
      assertEquals(sets.windowsHolding(ts), windows.size, s"$assigner at $ts")
      if (windows.nonEmpty) assertEquals(sets.lastStart(ts), windows.head.asInstanceOf[TimeWindow].start)
    }
  }
}
