package sparkwin.operator.store

import sparkwin.operator.algorithms.Algorithms
import java.io.{ByteArrayOutputStream, DataInputStream, DataOutputStream}

import org.scalacheck.Gen

import sparkwin.Fuzz
import sparkwin.TestSupport._
import sparkwin.core._
import sparkwin.core.agg.Aggregate
import sparkwin.core.evictor.CountEvictor
import sparkwin.core.trigger._
import sparkwin.core.window._
import sparkwin.operator._
import sparkwin.runtime.spark.task.SparkKeyBackend

/** A key's state from someone sparkwin does not trust (a checkpoint copied between clusters, a
  * damaged file): valid states mutated byte by byte are read, or refused with a
  * [[CorruptStateException]] (or an [[IncompatibleStateException]] when the damage makes it
  * look like another pipeline's), never another exception, a hang, or an allocation that the
  * bytes cannot back.
  */
class StateFuzzSuite extends munit.FunSuite {

  /** A bound a reader's allocation keeps under: a constant for the codec's own objects, and a
    * multiple of the input's length (a tag's byte may become a boxed value in an array).
    */
  private def bound(length: Int): Long = (1L << 20) + 256L * length

  private def typed(e: Throwable): Boolean =
    e.isInstanceOf[CorruptStateException] || e.isInstanceOf[IncompatibleStateException]

  // -------------------------------------------------------------------------------------------
  // ValueCodec

  private val values: Seq[Any] = Seq(
    null,
    true,
    false,
    42,
    -7L,
    Long.MinValue,
    1.5,
    2.5f,
    3.toShort,
    4.toByte,
    "",
    "naïve ⏱ 𝄞",
    "x" * 300,
    new java.math.BigDecimal("12345.678"),
    new java.sql.Timestamp(1700000000123L),
    java.time.Instant.ofEpochSecond(1700000000L, 5),
    java.time.LocalDate.of(2026, 11, 28),
    new java.sql.Date(1700000000000L),
    java.time.LocalDateTime.of(2026, 11, 28, 3, 0),
    Array[Byte](1, 2, 3),
    TimeWindow(0, 10),
    GlobalWindow,
    new ArrayRecord(Array("k", 1L, Seq(1, 2))),
    Map("a" -> 1, "b" -> Seq("c", null)),
    Seq(Seq(Seq(1L)), Map(1 -> Array[Byte](9)))
  ) ++ edges

  /** Values at the edges of what Spark's types hold, as a row brings them to state: timestamps
    * and dates at both ends of Spark's range (java.time's and java.sql's forms), decimals of 38
    * digits, day-time and year-month intervals and times of day at their ends, NaN, infinite and
    * negative zero doubles and floats, and nested.
    */
  private def edges: Seq[Any] = {
    val minMicros = java.time.Instant.ofEpochSecond(Math.floorDiv(Long.MinValue, 1000000L), 224192000L)
    val maxMicros = java.time.Instant.ofEpochSecond(Math.floorDiv(Long.MaxValue, 1000000L), 775807000L)
    val farTimestamp = new java.sql.Timestamp(Long.MaxValue / 1000); farTimestamp.setNanos(775807000)
    Seq(
      minMicros,
      maxMicros,
      farTimestamp,
      new java.sql.Timestamp(Long.MinValue / 1000),
      java.time.LocalDate.ofEpochDay(Int.MinValue.toLong),
      java.time.LocalDate.ofEpochDay(Int.MaxValue.toLong),
      new java.sql.Date(Int.MaxValue.toLong * 86400000L),
      java.time.LocalDateTime
        .ofEpochSecond(Math.floorDiv(Long.MinValue, 1000000L), 0, java.time.ZoneOffset.UTC),
      new java.math.BigDecimal("-99999999999999999999999999999.999999999"),
      new java.math.BigDecimal("1E-38"),
      java.time.Duration.ofSeconds(Math.floorDiv(Long.MinValue, 1000000L), 224192000L),
      java.time.Duration.ofSeconds(Math.floorDiv(Long.MaxValue, 1000000L), 775807000L),
      java.time.Period.of(Int.MinValue / 12, -8, 0),
      java.time.Period.of(Int.MaxValue / 12, 7, 0),
      java.time.LocalTime.MIN,
      java.time.LocalTime.MAX,
      Double.NaN,
      Double.NegativeInfinity,
      -0.0,
      Double.MinPositiveValue,
      java.lang.Double.longBitsToDouble(0x7ff8000000000123L), // a NaN with a payload, as Spark keeps it
      Float.NaN,
      java.lang.Float.intBitsToFloat(0x7fc00123),
      Float.PositiveInfinity,
      -0.0f,
      Seq(Double.NaN, null, Double.PositiveInfinity),
      new ArrayRecord(Array(minMicros, Seq(maxMicros, null), java.time.Duration.ZERO)),
      Map(java.time.LocalDate.ofEpochDay(Int.MinValue.toLong) -> Seq(java.time.Period.ZERO))
    )
  }

  private def encoded(v: Any): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    ValueCodec.write(new DataOutputStream(out), v)
    out.toByteArray
  }

  /** A value read from `b` as the codecs read one: under their guard, at the source's offset. */
  private def decoded(b: Array[Byte]): Any = {
    val source = new ByteSource
    source.point(b)
    CorruptStateException.reading("a value", b.length, () => source.position) {
      ValueCodec.read(new DataInputStream(source))
    }
  }

  test("fuzz ValueCodec: a mutated value reads, or is refused as corrupt with its offset") {
    val valid = values.map(encoded) :+ encoded(values.toArray)
    val gen = Gen.frequency(9 -> Fuzz.mutatedBytes(valid), 1 -> Fuzz.randomBytes)
    Fuzz.bytes("ValueCodec", Fuzz.cases(3000), gen, bound)(typed)(decoded)
  }

  test("every value a row brings, at the edges of Spark's types too, reads back as it was written") {
    def same(a: Any, b: Any): Boolean = (a, b) match {
      case (x: Array[Byte], y: Array[Byte]) => x.sameElements(y)
      case (x: Array[_], y: scala.collection.Seq[_]) =>
        x.length == y.length && x.zip(y).forall { case (p, q) => same(p, q) }
      case (x: ArrayRecord, y: ArrayRecord) => same(x.values, y.values.toSeq)
      case (x: scala.collection.Seq[_], y: scala.collection.Seq[_]) =>
        x.length == y.length && x.zip(y).forall { case (p, q) => same(p, q) }
      case (x: scala.collection.Map[_, _], y: scala.collection.Map[_, _]) =>
        x.size == y.size && x.forall { case (k, v) =>
          y.exists { case (k2, v2) => same(k, k2) && same(v, v2) }
        }
      // Doubles and floats by their bits: NaN is itself, and -0.0 is not 0.0.
      case (x: Double, y: Double) =>
        java.lang.Double.doubleToRawLongBits(x) == java.lang.Double.doubleToRawLongBits(y)
      case (x: Float, y: Float) =>
        java.lang.Float.floatToRawIntBits(x) == java.lang.Float.floatToRawIntBits(y)
      case (x, y) => x == y
    }
    for (v <- values) assert(same(v, decoded(encoded(v))), s"$v read back as ${decoded(encoded(v))}")
  }

  test("a value's length beyond its bytes is refused before anything is allocated") {
    for (tag <- Seq(7, 11, 12, 13, 20)) { // a string, bytes, a sequence, a record, a map
      val b = java.nio.ByteBuffer.allocate(5).put(tag.toByte).putInt(Int.MaxValue - 8).array()
      val e = intercept[CorruptStateException](decoded(b))
      assert(e.getMessage.contains(s"found ${Int.MaxValue - 8} with 0 left"), e.getMessage)
      assert(e.getMessage.contains("at byte 5"), e.getMessage)
    }
  }

  test("values nested deeper than the codec reads are refused, on writing and on reading") {
    var deep: Any = 1
    (0 to ValueCodec.MaxDepth).foreach(_ => deep = Seq(deep))
    intercept[IllegalArgumentException](encoded(deep))
    val bytes = Array.fill(100000)(Array[Byte](12, 0, 0, 0, 1)).flatten // sequences of one sequence
    val e = intercept[CorruptStateException](decoded(bytes))
    assert(e.getMessage.contains(s"nested at most ${ValueCodec.MaxDepth} deep"), e.getMessage)
  }

  // -------------------------------------------------------------------------------------------
  // KeyStateCodec: every algorithm's state

  private def spec(
      assigner: WindowAssigner,
      trigger: Trigger,
      evictor: Option[sparkwin.core.evictor.Evictor] = None,
      aggregates: Seq[Aggregate] = Seq(sumValue, collectValues)
  ) = OperatorSpec(
    assigner,
    trigger,
    evictor,
    40,
    lateOutput = true,
    WindowFunction.Aggregates(aggregates.toIndexedSeq),
    AccumulationMode.Accumulating
  )

  private val specs = Seq(
    "general" -> spec(
      SessionWindows(25, -1, isEventTime = true),
      CountTrigger(3),
      evictor = Some(CountEvictor(2, doEvictAfter = false))
    ),
    "Beam triggers" -> spec(
      SlidingWindows(60, 20, 0, isEventTime = true),
      AfterWatermark(Some(AfterPane(2)), None)
    ),
    "sliced" -> spec(SlidingWindows(60, 20, 0, isEventTime = true), EventTimeTrigger),
    "sessions" -> spec(SessionWindows(25, -1, isEventTime = true), EventTimeTrigger),
    "Storm" -> spec(StormWindows(StormSize.Count(4), StormSize.Duration(30), lag = 10), EventTimeTrigger),
    "Storm arrival" -> spec(
      StormWindows(StormSize.Count(4), StormSize.Count(3), lag = 0, isEventTime = false),
      EventTimeTrigger
    )
  )

  /** A spec's codec, and states its operator saved after each of 40 random elements. */
  private def statesOf(s: OperatorSpec): (() => KeyStateCodec, Seq[Array[Byte]]) = {
    val aggs = s.function.asInstanceOf[WindowFunction.Aggregates].aggregates
    val backend = new SparkKeyBackend(aggs)
    val operator = Algorithms.operator(s, backend, new Collect)
    backend.load("k", null)
    val rnd = new scala.util.Random(50)
    val saved = (0 until 40).flatMap { i =>
      val ts = i * 7L - rnd.nextInt(30)
      operator.processElement(rec("k", i.toLong, ts), ts)
      if (i % 9 == 8) operator.moveClocks(ts - 20, ClockMove.Keep, ClockMove.Advance)
      var bytes: Array[Byte] = null
      backend.save(b => bytes = b, () => ())
      Option(bytes)
    }
    val kind = operator.asInstanceOf[WindowOperator].stateKind
    (() => new KeyStateCodec(kind, aggs), saved)
  }

  for ((name, s) <- specs)
    test(s"fuzz KeyStateCodec ($name): a mutated state reads, or is refused as corrupt") {
      val (codec, valid) = statesOf(s)
      assert(valid.nonEmpty)
      val decoder = codec()
      valid.foreach(decoder.decode) // the unmutated states read
      Fuzz.bytes(s"KeyStateCodec $name", Fuzz.cases(1500), Fuzz.mutatedBytes(valid), bound)(typed)(
        decoder.decode
      )
    }

  test("a truncated state is refused naming the layout, the offset and what was expected") {
    val (codec, valid) = statesOf(specs.head._2)
    val whole = valid.last
    val e = intercept[CorruptStateException](codec().decode(whole.take(whole.length - 3)))
    assert(
      e.getMessage.contains(s"a key's state, layout ${KeyStateCodec.Version} of ${whole.length - 3} bytes"),
      e.getMessage
    )
    assert(e.getMessage.contains("expected more bytes, it ends early"), e.getMessage)
    assert(e.getMessage.contains("at byte"), e.getMessage)
  }

  test("a state whose count of elements is huge is refused without allocating it") {
    val (codec, valid) = statesOf(specs.last._2) // Storm's queue leads the body
    val b = valid.last.clone
    java.nio.ByteBuffer.wrap(b).putInt(7, Int.MaxValue) // version, ids, signature: 7 bytes
    val e = intercept[CorruptStateException](codec().decode(b))
    assert(e.getMessage.contains("expected a count of elements"), e.getMessage)
  }
}
