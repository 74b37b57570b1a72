package sparkwin.operator.store

import sparkwin.TestSupport._
import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._
import sparkwin.core.evictor.CountEvictor
import sparkwin.runtime.spark.SparkKeyBackend
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
    )
  )

  private def aggregatesOf(s: OperatorSpec) = s.function match {
    case WindowFunction.Aggregates(a) => a
    case _ => IndexedSeq.empty
  }

  /** Runs `steps` for one key, saving and reloading the state after each step in `cuts`. */
  private def run(s: OperatorSpec, steps: Seq[Step], cuts: Set[Int]): (List[Out], List[Long]) = {
    val out = new Collect
    val codec = new KeyStateCodec(aggregatesOf(s))
    var bytes: Array[Byte] = null
    var backend: SparkKeyBackend = null
    var operator: Operator = null
    var wm = Long.MinValue
    def open(): Unit = {
      backend = new SparkKeyBackend(codec)
      backend.load("k", bytes)
      operator = Operator(s, backend, out)
      if (wm != Long.MinValue) operator.advanceWatermark(wm)
    }
    open()
    steps.zipWithIndex.foreach { case (step, i) =>
      step match {
        case Element(v, ts) => operator.processElement(rec("k", v, ts), ts)
        case Watermark(w) => wm = w; operator.advanceWatermark(w)
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
    val codec = new KeyStateCodec(aggregatesOf(s))
    val backend = new SparkKeyBackend(codec)
    backend.load("k", null)
    val operator = Operator(s, backend, new Collect)
    Seq((1L, 5L), (2L, 9L), (3L, 70L)).foreach { case (v, ts) =>
      operator.processElement(rec("k", v, ts), ts)
    }
    var current: Array[Byte] = null
    backend.save(b => current = b, () => ())
    assertEquals(current(0).toInt, 3)
    // Version 1: the same fields, then the runtime's per-domain timers.
    val v1 = new java.io.ByteArrayOutputStream()
    val out = new java.io.DataOutputStream(v1)
    out.writeByte(1)
    out.write(current, 1, current.length - 1)
    out.writeInt(2); out.writeLong(34L); out.writeLong(Long.MinValue)
    out.flush()
    assertEquals(codec.encode(codec.decode(v1.toByteArray)).toSeq, current.toSeq)
    intercept[IllegalStateException](codec.decode(Array[Byte](4)))
  }

  test("a sliced pipeline refuses a state from before slicing that holds whole sliding windows") {
    val aggs = IndexedSeq[sparkwin.core.agg.Aggregate](sumValue)
    val old = new KeyStateCodec(aggs)
    val stored = old.empty()
    stored.state.contents.put(TimeWindow(0, 600), new WindowContents(Array(sumValue.newAccumulator()), null))
    val bytes = old.encode(stored)
    bytes(0) = 2 // as version 2 wrote it
    // Read as before by a pipeline that is not sliced, and by one sliced whole (tumbling).
    assertEquals(new KeyStateCodec(aggs).decode(bytes).state.contents.size, 1)
    assertEquals(new KeyStateCodec(aggs, sliceWidth = 600).decode(bytes).state.contents.size, 1)
    val e = intercept[IllegalStateException](new KeyStateCodec(aggs, sliceWidth = 60).decode(bytes))
    assert(e.getMessage.contains("new checkpoint"), e.getMessage)
    // Version 3 slices are read back as they were written.
    val sliced = new KeyStateCodec(aggs, sliceWidth = 60)
    val s3 = sliced.empty()
    s3.state.contents.put(TimeWindow(60, 120), new WindowContents(Array(sumValue.newAccumulator()), null))
    assertEquals(sliced.decode(sliced.encode(s3)).state.contents.keySet, s3.state.contents.keySet)
  }
}
