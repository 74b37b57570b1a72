package sparkwin.operator

import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._

import scala.collection.mutable
import scala.util.Random

import org.scalacheck.{Gen, Prop}

import sparkwin.TestSupport._
import sparkwin.core.window._

object ReferenceModelSuite {
  sealed trait Step
  final case class Add(key: String, value: Long, ts: Long) extends Step
  final case class Watermark(wm: Long) extends Step
}

/** The operator against a deliberately naive model of Flink's default event-time trigger
  * with allowed lateness, on random interleavings of elements and watermarks.
  *
  * The model keeps plain lists per (key, window) and re-derives everything at each step; it
  * shares no code with the engine beyond the window arithmetic written out below.
  */
class ReferenceModelSuite extends munit.ScalaCheckSuite {
  import ReferenceModelSuite._

  /** (key, start, end, sum, count, timing) for results; ("late", key, value, ts) for late. */
  type Output = Any

  /** Tumbling and sliding windows: every window [s, s + size) with s on the slide grid. */
  private def windowsOf(ts: Long, size: Long, slide: Long): Seq[(Long, Long)] = {
    val last = ts - Math.floorMod(ts, slide)
    Iterator.iterate(last)(_ - slide).takeWhile(_ > ts - size).map(s => (s, s + size)).toSeq
  }

  private def fixedModel(steps: Seq[Step], size: Long, slide: Long, lateness: Long): Seq[Output] = {
    val out = mutable.ArrayBuffer.empty[Output]
    val contents = mutable.Map.empty[(String, Long, Long), List[Long]]
    val fired = mutable.Set.empty[(String, Long, Long)]
    var wm = Long.MinValue
    def emit(w: (String, Long, Long), timing: String): Unit =
      out += ((w._1, w._2, w._3, contents(w).sum, contents(w).size.toLong, timing))
    for (step <- steps) step match {
      case Watermark(w) if w > wm =>
        wm = w
        for (win <- contents.keys.toSeq.sortBy(_._3)) {
          if (win._3 - 1 <= wm && !fired(win)) { emit(win, "ON_TIME"); fired += win }
          if (win._3 - 1 + lateness <= wm) { contents.remove(win); fired.remove(win) }
        }
      case Watermark(_) => ()
      case Add(k, v, ts) =>
        val open = windowsOf(ts, size, slide).filter(w => w._2 - 1 + lateness > wm)
        if (open.isEmpty) out += (("late", k, v, ts))
        for ((s, e) <- open) {
          val win = (k, s, e)
          contents(win) = contents.getOrElse(win, Nil) :+ v
          // The watermark already passed the window's end: every element fires it, LATE
          // (again after the on-time pane, or first for a window whose data all came late).
          if (e - 1 <= wm) { emit(win, "LATE"); fired += win }
        }
    }
    out.toSeq
  }

  /** Sessions without lateness: live sessions per key as plain intervals. */
  private def sessionModel(steps: Seq[Step], gap: Long): Seq[Output] = {
    val out = mutable.ArrayBuffer.empty[Output]
    val live = mutable.Map.empty[String, List[(Long, Long, List[Long])]]
    var wm = Long.MinValue
    for (step <- steps) step match {
      case Watermark(w) if w > wm =>
        wm = w
        for ((k, ss) <- live.toSeq) {
          val (done, rest) = ss.partition(_._2 - 1 <= wm)
          done.sortBy(_._2).foreach(s => out += ((k, s._1, s._2, s._3.sum, s._3.size.toLong, "ON_TIME")))
          live(k) = rest
        }
      case Watermark(_) => ()
      case Add(k, v, ts) =>
        val ss = live.getOrElse(k, Nil)
        val (touching, others) = ss.partition(s => s._1 <= ts + gap && s._2 >= ts)
        val merged = touching.foldLeft((ts, ts + gap, List(v))) { case ((a, b, vs), (c, d, ws)) =>
          (math.min(a, c), math.max(b, d), vs ++ ws)
        }
        if (touching.isEmpty && merged._2 - 1 <= wm) out += (("late", k, v, ts))
        else live(k) = merged :: others
    }
    out.toSeq
  }

  private def engine(steps: Seq[Step], h: Harness): Seq[Output] = {
    for (step <- steps) step match {
      case Add(k, v, ts) => h.add(k, v, ts)
      case Watermark(w) => h.watermark(w)
    }
    h.take().map(o => (o.key, o.start, o.end, o.values(0), o.values(1), o.pane.timing.name)) ++
      h.out.late.map { case (r, ts) => ("late", r.get(0), r.get(1), ts) }
  }

  private val steps: Gen[Seq[Step]] = for {
    n <- Gen.choose(5, 80)
    seed <- Gen.long
  } yield {
    val rnd = new Random(seed)
    var clock = rnd.nextInt(40).toLong - 20
    (0 until n).map { _ =>
      clock += rnd.nextInt(6)
      if (rnd.nextInt(5) == 0) Watermark(clock - rnd.nextInt(10))
      else Add(s"k${rnd.nextInt(3)}", 1L + rnd.nextInt(9), clock - rnd.nextInt(25))
    }
  }

  private val aggs = Seq(sumValue, countAll)
  private def sorted(xs: Seq[Output]) = xs.map(_.toString).sorted

  property("tumbling windows with allowed lateness match the model, pane timing included") {
    Prop.forAll(steps, Gen.choose(0L, 15L)) { (s, lateness) =>
      val h = harness(TumblingWindows(10, 0, isEventTime = true), lateness = lateness, aggregates = aggs)
      assertEquals(sorted(engine(s, h)), sorted(fixedModel(s, 10, 10, lateness)))
    }
  }

  property("sliding windows (size not a multiple of slide) with lateness match the model") {
    Prop.forAll(steps, Gen.choose(0L, 10L)) { (s, lateness) =>
      val h = harness(SlidingWindows(10, 4, 0, isEventTime = true), lateness = lateness, aggregates = aggs)
      assertEquals(sorted(engine(s, h)), sorted(fixedModel(s, 10, 4, lateness)))
    }
  }

  property("session windows match the model") {
    Prop.forAll(steps, Gen.choose(1L, 12L)) { (s, gap) =>
      val h = harness(SessionWindows(gap, -1, isEventTime = true), aggregates = aggs)
      assertEquals(sorted(engine(s, h)), sorted(sessionModel(s, gap)))
    }
  }

  property("every element ends in its window's last pane or the late output") {
    Prop.forAll(steps) { s =>
      val h = harness(TumblingWindows(10, 0, isEventTime = true), lateness = 5, aggregates = aggs)
      val out = engine(s :+ Watermark(Long.MaxValue - 1), h)
      val lastCounts =
        out.collect { case (k, a, _, _, n: Long, _) => ((k, a), n) }.groupBy(_._1).map { case (k, ns) =>
          (k, ns.map(_._2).max)
        }
      val late = out.count { case ("late", _, _, _) => true; case _ => false }
      assertEquals(lastCounts.values.sum + late, s.count(_.isInstanceOf[Add]).toLong)
      assertEquals(h.stateEntries, 0)
    }
  }
}
