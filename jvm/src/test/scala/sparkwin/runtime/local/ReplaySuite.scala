package sparkwin.runtime.local

import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import sparkwin.TestSupport._
import sparkwin.core.agg.{Aggregate, NumericKind}
import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._
import sparkwin.core.time.WatermarkStrategy
import sparkwin.core.trigger._
import sparkwin.core.window._
import sparkwin.runtime.TimeMove

object ReplaySuite {

  /** An element: (key, value, ts, marker) arriving at `arrival` on `channel`. */
  final case class Event(
      arrival: Long,
      channel: Int,
      ordinal: Long,
      key: String,
      value: Long,
      ts: Long,
      marker: Boolean
  ) {
    def record: Record = new ArrayRecord(Array(key, value, ts, marker))
    def position: Position = Position.element(arrival, channel, ordinal)
  }

  final case class Fired(key: Any, window: Window, pane: PaneInfo, values: Seq[Any], firedAt: Long)
}

/** Replay (a watermark timeline, then each key on its own) must reproduce exactly what a live
  * runner with the same channels emits when the same elements arrive in the same order.
  */
class ReplaySuite extends munit.FunSuite {

  import ReplaySuite._

  private final class Recorder(firedAt: () => Long) extends Emitter {
    val out = ArrayBuffer.empty[Any]
    def emitResult(key: Any, window: Window, pane: PaneInfo, values: Array[Any]): Unit =
      out += Fired(key, window, pane, values.toSeq, firedAt())
    def emitElements(key: Any, window: Window, pane: PaneInfo, elements: java.util.List[Element]): Unit = ()
    def emitLate(key: Any, record: Record, ts: Long): Unit = out += (("late", record.get(0), ts, firedAt()))
    def emitError(record: Record, message: String): Unit = throw new AssertionError(message)
    def emitWindowError(key: Any, window: Window, message: String): Unit = throw new AssertionError(message)
  }

  private def spec(kind: Int): OperatorSpec = {
    val sum = Aggregate.Sum("s", 1, NumericKind.Integral)
    val (assigner, trigger, lateness) = kind match {
      case 0 => (TumblingWindows(100, 0, isEventTime = true), EventTimeTrigger, 50L)
      case 1 => (SessionWindows(40, -1, isEventTime = true), EventTimeTrigger, 30L)
      case 2 =>
        val t = AfterWatermark(Some(AfterProcessingTime(70)), Some(AfterPane(1)))
        (SlidingWindows(120, 60, 0, isEventTime = true), t, 40L)
      case 3 => (TumblingWindows(200, 0, isEventTime = true), ContinuousEventTimeTrigger(50), 0L)
    }
    OperatorSpec(
      assigner,
      trigger,
      None,
      lateness,
      lateOutput = true,
      WindowFunction.Aggregates(IndexedSeq(sum)),
      AccumulationMode.Accumulating
    )
  }

  private def strategy(kind: Int): WatermarkStrategy = kind match {
    case 0 => WatermarkStrategy.forBoundedOutOfOrderness(15).copy(interval = 20)
    case 1 => WatermarkStrategy.forBoundedOutOfOrderness(5).copy(interval = 25, idleTimeout = Some(90))
    case 2 => WatermarkStrategy(WatermarkStrategy.Punctuated(3, 3), Some(120L), 30)
  }

  private def events(rnd: Random, channels: Int): Seq[Event] = {
    var t = rnd.nextInt(50).toLong
    (0 until 40 + rnd.nextInt(120)).map { i =>
      t += (if (rnd.nextInt(15) == 0) 100 + rnd.nextInt(300) else rnd.nextInt(12))
      val ch = rnd.nextInt(channels)
      val disorder = if (rnd.nextInt(12) == 0) 150 + rnd.nextInt(150) else rnd.nextInt(30)
      Event(
        t,
        ch,
        i.toLong,
        s"k${rnd.nextInt(4)}",
        1L + rnd.nextInt(9),
        t - disorder - ch * 7L,
        rnd.nextInt(6) == 0
      )
    }
  }

  private def live(s: OperatorSpec, w: WatermarkStrategy, channels: Int, in: Seq[Event]): Seq[Any] = {
    var runner: LocalRunner = null
    val rec = new Recorder(() => runner.currentProcessingTime)
    runner = new LocalRunner(s, r => r.get(0), channels, Some(w), rec)
    for (e <- in.sortBy(_.position)) {
      runner.moveClocks(TimeMove.ProcessingTime(e.arrival))
      runner.processElement(e.record, e.ts, e.channel)
    }
    rec.out.toSeq
  }

  private def replayed(kind: Int, w: WatermarkStrategy, channels: Int, in: Seq[Event]): Seq[Any] = {
    val summaries = in
      .groupBy(e => (e.channel, Activity.bucket(e.arrival, w.interval)))
      .map { case ((c, b), es) =>
        Activity.summarize(c, b, es.iterator.map(e => (e.position, e.ts, e.marker)))
      }
      .toSeq
    val punctuated = w.kind.isInstanceOf[WatermarkStrategy.Punctuated]
    val timeline = WatermarkTimeline.compute(w, channels, Activity.merge(summaries, punctuated), 0L)
    val lastArrival = in.map(_.arrival).max
    in.groupBy(_.key).toSeq.flatMap { case (key, es) =>
      val clock = new ReplayDriver.Clock
      val rec = new Recorder(() => clock.firedAt)
      val backend = new LocalBackend(packable = false)
      val driver = new sparkwin.runtime.Driver(spec(kind), _ => key, 2, backend, rec)
      backend.setCurrentKey(key)
      val elements = es.sortBy(_.position).iterator.map(e => (e.position, e.record, e.ts))
      ReplayDriver.run(driver, timeline, elements, lastArrival, clock)
      rec.out.toSeq
    }
  }

  private def key(x: Any): String = x.toString

  for (kind <- 0 to 3; wk <- 0 to 2) {
    test(s"replay equals the live runner (pipeline $kind, watermark strategy $wk)") {
      for (seed <- 1 to 60) {
        val rnd = new Random(seed * 31 + kind * 7 + wk)
        val channels = 1 + rnd.nextInt(3)
        val in = events(rnd, channels)
        val w = strategy(wk)
        val expected = live(spec(kind), w, channels, in).map(key).sorted
        val actual = replayed(kind, w, channels, in).map(key).sorted
        if (actual != expected) {
          val missing = expected.diff(actual).take(4)
          val extra = actual.diff(expected).take(4)
          fail(
            s"seed $seed, $channels channels\nmissing ${missing.mkString("\n  ")}\nextra ${extra.mkString("\n  ")}"
          )
        }
      }
    }
  }

  test("an idle channel stops holding the watermark back, and rejoins when it catches up") {
    val w = WatermarkStrategy.forBoundedOutOfOrderness(0).copy(interval = 10, idleTimeout = Some(50))
    // Channel 1 sends one element and goes quiet; channel 0 keeps going.
    val in = Seq(
      Event(1, 1, 0, "a", 1, 1, marker = false),
      Event(2, 0, 1, "a", 1, 2, marker = false)
    ) ++ (1 to 20).map(i => Event(2L + i * 10, 0, 1L + i, "b", 1, 2L + i * 10, marker = false))
    val timeline = WatermarkTimeline.compute(
      w,
      2,
      Activity.merge(
        in.groupBy(e => (e.channel, Activity.bucket(e.arrival, 10)))
          .map { case ((c, b), es) =>
            Activity.summarize(c, b, es.iterator.map(e => (e.position, e.ts, false)))
          }
          .toSeq,
        punctuated = false
      ),
      0L
    )
    // Before channel 1 is idle (deadline 1 + 50, first tick at 60) the valve holds at its 0.
    val early = timeline.positions.zip(timeline.watermarks).filter(_._1.time < 60).map(_._2)
    assert(early.forall(_ <= 0), early.toList)
    val later = timeline.positions.zip(timeline.watermarks).filter(_._1.time >= 60).map(_._2)
    assert(later.nonEmpty && later.head >= 50, later.toList)
  }
}
