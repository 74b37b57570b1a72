package sparkwin.operator.store

import sparkwin.operator.algorithms.Algorithms
import scala.jdk.CollectionConverters._

import sparkwin.TestSupport._
import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._
import sparkwin.core.evictor.CountEvictor
import sparkwin.runtime.spark.task.SparkKeyBackend
import sparkwin.core.trigger._
import sparkwin.core.window._

/** A key's state written out and read back between any two steps changes nothing: the Spark
  * runtime does exactly that around every handler call.
  */
object KeyStateCodecSuite {
  sealed trait Step
  final case class Element(value: Long, ts: Long) extends Step
  final case class Watermark(wm: Long) extends Step
}

class KeyStateCodecSuite extends munit.FunSuite {

  test("the aggregates' signature is the same on every Scala version (a state moves from 3.5 to 4.x)") {
    import sparkwin.core.agg.{Aggregate, NumericKind}
    val aggregates = Seq(
      Aggregate.Count("n", 1),
      Aggregate.Sum("s", 2, NumericKind.Integral),
      Aggregate.PercentileApprox(
        "p",
        2,
        IndexedSeq(0.5, 0.9),
        10000L,
        array = true,
        sparkwin.core.agg.NumberType.LongNumber
      )
    )
    // Pinned: the 2.12 and 2.13 builds each run this suite. A CRC-32 of the aggregates' text.
    assertEquals(KeyStateCodec.aggregateSignature(aggregates), SignatureOfThree)
    assertEquals(
      KeyStateCodec.aggregateSignature(aggregates.map {
        case c: Aggregate.Count => c.copy(alias = "renamed")
        case other => other
      }),
      SignatureOfThree,
      "a name is not part of it"
    )
  }

  // CRC-32 of "Count(1);Sum(2,Integral,38);PercentileApprox(2,[0.5,0.9],10000,true,LongNumber)".
  private val SignatureOfThree = 630269737

  import KeyStateCodecSuite._

  private def spec(
      assigner: WindowAssigner,
      trigger: Trigger,
      evictor: Option[sparkwin.core.evictor.Evictor] = None,
      aggregates: Seq[sparkwin.core.agg.Aggregate] = Seq(sumValue, collectValues),
      mode: AccumulationMode = AccumulationMode.Accumulating
  ) = OperatorSpec(
    assigner,
    trigger,
    evictor,
    40,
    lateOutput = true,
    WindowFunction.Aggregates(aggregates.toIndexedSeq),
    mode
  )

  private val specs = Map(
    "sessions, count trigger, evictor (elements, merging set, trigger state)" -> spec(
      SessionWindows(25, -1, isEventTime = true),
      CountTrigger(3),
      evictor = Some(CountEvictor(2, doEvictAfter = false))
    ),
    "sliding, Beam early and late firings, discarding" -> spec(
      SlidingWindows(60, 20, 0, isEventTime = true),
      AfterWatermark(Some(AfterPane(2)), Some(AfterPane(1))),
      mode = AccumulationMode.Discarding
    ),
    "Storm count length, time slide (queue, policy positions)" -> spec(
      StormWindows(StormSize.Count(4), StormSize.Duration(30), lag = 10),
      EventTimeTrigger
    ),
    "Storm in arrival order, count length and slide (queue, tuples since the trigger)" -> spec(
      StormWindows(StormSize.Count(4), StormSize.Count(3), lag = 0, isEventTime = false),
      EventTimeTrigger
    )
  )

  private def aggregatesOf(s: OperatorSpec) = s.function match {
    case WindowFunction.Aggregates(a) => a
    case _ => IndexedSeq.empty
  }

  /** Runs `steps` for one key, saving and reloading the state after each step in `cuts`. */
  private def run(s: OperatorSpec, steps: Seq[Step], cuts: Set[Int]): (List[Out], List[Long]) = {
    val out = new Collect
    var bytes: Array[Byte] = null
    var backend: SparkKeyBackend = null
    var operator: Operator = null
    var wm = Long.MinValue
    def open(): Unit = {
      backend = new SparkKeyBackend(aggregatesOf(s))
      operator = Algorithms.operator(s, backend, out)
      backend.load("k", bytes)
      if (wm != Long.MinValue) operator.moveClocks(wm, ClockMove.Keep, ClockMove.Advance)
    }
    open()
    steps.zipWithIndex.foreach { case (step, i) =>
      step match {
        case Element(v, ts) => operator.processElement(rec("k", v, ts), ts)
        case Watermark(w) => wm = w; operator.moveClocks(w, ClockMove.Keep, ClockMove.Advance)
      }
      if (cuts(i)) {
        backend.save(b => bytes = b, () => bytes = null)
        open()
      }
    }
    (out.take(), out.late.map(_._1.get(1).asInstanceOf[Long]).toList)
  }

  private def randomSteps(seed: Long): Seq[Step] = {
    val rnd = new scala.util.Random(seed)
    var t = 0L
    var wm = Long.MinValue
    (0 until 60).map { i =>
      t += rnd.nextInt(12)
      if (rnd.nextInt(4) == 0) { wm = math.max(wm, t - rnd.nextInt(30)); Watermark(wm) }
      else Element(i.toLong, t - rnd.nextInt(50))
    } :+ Watermark(Long.MaxValue)
  }

  for ((name, s) <- specs; seed <- 1L to 15L)
    test(s"$name: saved and reloaded at random points, seed $seed") {
      val steps = randomSteps(seed)
      val rnd = new scala.util.Random(seed * 31)
      val cuts = steps.indices.filter(_ => rnd.nextInt(3) == 0).toSet
      val whole = run(s, steps, Set.empty)
      assert(whole._1.nonEmpty, "the case must produce results to compare")
      assertEquals(run(s, steps, cuts), whole)
      assertEquals(run(s, steps, steps.indices.toSet), whole)
    }

  test("a state written by version 1 (with the runtime's timers) is still read") {
    val s = specs.head._2
    val backend = new SparkKeyBackend(aggregatesOf(s))
    val operator = Algorithms.operator(s, backend, new Collect)
    backend.load("k", null)
    Seq((1L, 5L), (2L, 9L), (3L, 70L)).foreach { case (v, ts) =>
      operator.processElement(rec("k", v, ts), ts)
    }
    var current: Array[Byte] = null
    backend.save(b => current = b, () => ())
    assertEquals(current(0).toInt, KeyStateCodec.Version)
    val codec = new KeyStateCodec(operator.asInstanceOf[WindowOperator].stateKind, aggregatesOf(s))
    val stored = codec.decode(current)
    // Version 1: the general layout, then the runtime's per-domain timers.
    val v1 = LegacyStates.write(
      1,
      stored.state.asInstanceOf[sparkwin.operator.general.GeneralState],
      stored,
      Seq(34L, Long.MinValue)
    )
    assertEquals(canonical(codec.decode(v1)), canonical(stored))
    assert(canonical(stored).contains("TimeWindow"), canonical(stored))
    intercept[IllegalStateException](codec.decode(Array[Byte]((KeyStateCodec.Version + 1).toByte)))
  }

  /** A general state and its timers as text, independent of hash-map iteration order. */
  private def canonical(s: KeyStateCodec.Stored): String = {
    val st = s.state.asInstanceOf[sparkwin.operator.general.GeneralState]
    val contents =
      st.contents.asScala.toSeq.map { case (w, c) =>
        s"$w=${if (c.accumulators != null) c.accumulators.map(_.save.toSeq).toSeq else c.elements}"
      }
    val meta = st.meta.asScala.toSeq.map { case (w, m) =>
      s"$w=${m.triggerState.toSeq},${m.paneIndex},${m.nonEarlyFired},${m.createdLate},${m.closed},${m.sinceLastPane}"
    }
    val mapping = Option(st.merging).map(_.mapping.toSeq.map(_.toString)).getOrElse(Nil)
    val timers = Seq(s.eventTimers, s.processingTimers).map(_.iterator.map(_.toString).toSeq)
    Seq(contents.sorted, meta.sorted, mapping.sorted, timers).mkString("\n")
  }

  test("a sliced pipeline refuses a state from before slicing that holds whole sliding windows") {
    val aggs = IndexedSeq[sparkwin.core.agg.Aggregate](sumValue)
    val old = new sparkwin.operator.general.GeneralState
    old.contents.put(TimeWindow(0, 600), new WindowContents(Array(sumValue.newAccumulator()), null))
    val empty = KeyStateCodec.Stored(old)
    val bytes = LegacyStates.write(2, old, empty, Nil)
    // Read as before by a pipeline that is not sliced, and by one sliced whole (tumbling).
    def general = new KeyStateCodec(
      new sparkwin.operator.general.GeneralStateKind(
        aggs,
        new sparkwin.core.trigger.TriggerLayout(EventTimeTrigger)
      ),
      aggs
    )
    def sliced(width: Long) = new KeyStateCodec(new sparkwin.operator.slice.SliceStateKind(aggs, width), aggs)
    assertEquals(general.decode(bytes).state.numEntries, 1)
    assertEquals(sliced(600).decode(bytes).state.numEntries, 1)
    val e = intercept[IllegalStateException](sliced(60).decode(bytes))
    assert(e.getMessage.contains("new checkpoint"), e.getMessage)
    // Slices are read back as they were written.
    val codec = sliced(60)
    val s4 = codec.empty()
    val st = s4.state.asInstanceOf[sparkwin.operator.slice.SliceState]
    st.put(120L, Array(sumValue.newAccumulator()))
    st.put(60L, Array(sumValue.newAccumulator()))
    val back = codec.decode(codec.encode(s4)).state.asInstanceOf[sparkwin.operator.slice.SliceState]
    assertEquals(back.starts, Seq(60L, 120L))
  }

  test("a state written by one algorithm is refused by another, never misread") {
    val aggs = IndexedSeq[sparkwin.core.agg.Aggregate](sumValue)
    val sliced = new KeyStateCodec(new sparkwin.operator.slice.SliceStateKind(aggs, 60), aggs)
    val s = sliced.empty()
    s.state
      .asInstanceOf[sparkwin.operator.slice.SliceState]
      .put(0L, Array(sumValue.newAccumulator()))
    val bytes = sliced.encode(s)
    val general = new KeyStateCodec(
      new sparkwin.operator.general.GeneralStateKind(
        aggs,
        new sparkwin.core.trigger.TriggerLayout(EventTimeTrigger)
      ),
      aggs
    )
    val e = intercept[IllegalStateException](general.decode(bytes))
    assert(
      e.getMessage.contains("sliced algorithm") && e.getMessage.contains("general algorithm"),
      e.getMessage
    )
    // A general state met by slices: windows of more than 256 slices ran on the general
    // algorithm up to 0.3.0; the message says so, for a pipeline that did not change.
    val e2 = intercept[IllegalStateException](sliced.decode(general.encode(general.empty())))
    assert(e2.getMessage.contains("256 slices") && e2.getMessage.contains("new checkpoint"), e2.getMessage)
    assert(!e.getMessage.contains("256 slices"), e.getMessage)
    // A changed slice width (a new window size or slide) is refused too.
    val wider = new KeyStateCodec(new sparkwin.operator.slice.SliceStateKind(aggs, 120), aggs)
    intercept[IllegalStateException](wider.decode(bytes))
  }

  test("a state written for other aggregates is refused, never misread; a renamed one is read") {
    val sum = IndexedSeq[sparkwin.core.agg.Aggregate](sumValue)
    def codec(aggs: IndexedSeq[sparkwin.core.agg.Aggregate]) =
      new KeyStateCodec(new sparkwin.operator.slice.SliceStateKind(aggs, 60), aggs)
    val s = codec(sum).empty()
    s.state.asInstanceOf[sparkwin.operator.slice.SliceState].put(0L, Array(sumValue.newAccumulator()))
    val bytes = codec(sum).encode(s)
    val more = sum :+ countAll
    val e = intercept[IllegalStateException](codec(more).decode(bytes))
    assert(e.getMessage.contains("other aggregates") && e.getMessage.contains("new checkpoint"), e.getMessage)
    val otherColumn = IndexedSeq[sparkwin.core.agg.Aggregate](
      sparkwin.core.agg.Aggregate.Sum("sum", 2, sparkwin.core.agg.NumericKind.Integral)
    )
    intercept[IllegalStateException](codec(otherColumn).decode(bytes))
    val renamed = IndexedSeq[sparkwin.core.agg.Aggregate](
      sumValue.asInstanceOf[sparkwin.core.agg.Aggregate.Sum].copy(alias = "total")
    )
    assertEquals(codec(renamed).decode(bytes).state.numEntries, 1)
  }
}

/** States in the layout of versions 1 to 3, written as those versions did, for the tests that
  * hold the codec to reading them.
  */
object LegacyStates {
  import java.io.{ByteArrayOutputStream, DataOutputStream}

  def write(
      version: Int,
      st: sparkwin.operator.general.GeneralState,
      timers: KeyStateCodec.Stored,
      runtimeTimers: Seq[Long]
  ): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new DataOutputStream(bytes)
    out.writeByte(version)
    out.writeInt(st.contents.size)
    st.contents.forEach { (w, c) => ValueCodec.writeWindow(out, w); KeyStateCodec.writeContents(out, c) }
    out.writeInt(st.meta.size)
    st.meta.forEach { (w, m) =>
      ValueCodec.writeWindow(out, w)
      ValueCodec.writeSeq(out, m.triggerState)
      out.writeLong(m.paneIndex)
      out.writeBoolean(m.nonEarlyFired)
      out.writeBoolean(m.createdLate)
      out.writeBoolean(m.closed)
      out.writeLong(m.sinceLastPane)
    }
    val mapping = if (st.merging == null) Map.empty[TimeWindow, TimeWindow] else st.merging.mapping
    out.writeInt(mapping.size)
    mapping.foreach { case (w, sw) => ValueCodec.writeWindow(out, w); ValueCodec.writeWindow(out, sw) }
    out.writeBoolean(false) // no Storm queue
    for (q <- Seq(timers.eventTimers, timers.processingTimers)) {
      out.writeInt(q.size)
      q.iterator.foreach { t => out.writeLong(t.timestamp); ValueCodec.writeWindow(out, t.window) }
    }
    if (version == 1) { out.writeInt(runtimeTimers.size); runtimeTimers.foreach(out.writeLong) }
    out.flush()
    bytes.toByteArray
  }
}
