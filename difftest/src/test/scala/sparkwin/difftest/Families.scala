package sparkwin.difftest

import scala.util.Random

/** Random pipelines and input sequences, family by family. Everything is drawn from one
  * seeded `Random`, so a family name and a seed reproduce a sequence exactly.
  */
object Gen {
  val allKeys = Vector("a", "b", "c")

  /** Mostly one to three keys; sometimes up to 80 (the packed operators page keys by 64). */
  def keys(r: Random): Vector[String] =
    if (r.nextInt(5) > 0) allKeys.take(1 + r.nextInt(3))
    else Vector.tabulate(1 + r.nextInt(80))(i => s"k$i")

  /** Mostly short sequences, sometimes long ones. */
  def length(r: Random): Int = if (r.nextInt(5) > 0) 8 + r.nextInt(30) else 40 + r.nextInt(160)

  /** Sometimes snap times to a grid, so they hit window bounds and each other exactly. */
  def snapper(r: Random, scale: Long): Long => Long =
    if (r.nextInt(3) > 0) identity
    else {
      val g = math.max(1L, pick(r, scale, scale / 2, scale / 3))
      val skew = pick(r, 0L, -1L, 1L)
      t => java.lang.Math.floorDiv(t, g) * g + skew
    }

  def pick[A](r: Random, xs: A*): A = xs(r.nextInt(xs.size))
  def between(r: Random, lo: Long, hi: Long): Long = lo + r.nextLong(hi - lo + 1) // inclusive

  /** Event-time input: a few keys, values, timestamps around a moving cursor with disorder
    * (negative ones too), watermarks that trail the cursor and sometimes jump ahead of it, and
    * elements behind the watermark (late, or within allowed lateness).
    */
  def eventTime(
      r: Random,
      scale: Long,
      negative: Boolean = true,
      withWatermarks: Boolean = true,
      value: Random => Long = r => 1L + r.nextInt(99)
  ): Vector[Step] = {
    val keys = Gen.keys(r)
    val n = length(r)
    val snap = snapper(r, scale)
    var cursor = if (negative && r.nextInt(3) == 0) -r.nextLong(4 * scale) else r.nextLong(2 * scale + 1)
    val disorder = r.nextLong(scale + 1)
    var wm = Long.MinValue
    val out = Vector.newBuilder[Step]
    for (_ <- 0 until n) {
      if (withWatermarks && r.nextInt(10) < 3) {
        val candidate = snap(
          if (r.nextInt(8) == 0) { cursor += r.nextLong(3 * scale + 1); cursor }
          else cursor - r.nextLong(disorder + 1)
        )
        if (candidate > wm) { wm = candidate; out += Step.Watermark(wm) }
      } else {
        val ts = snap(
          if (wm != Long.MinValue && r.nextInt(6) == 0) wm - r.nextLong(2 * scale + 1)
          else cursor + r.nextLong(2 * disorder + 1) - disorder
        )
        cursor += r.nextLong(scale / 3 + 1)
        out += Step.Element(Ev(keys(r.nextInt(keys.size)), ts, value(r)))
      }
    }
    out.result()
  }

  /** Several input channels: per-channel watermarks (any order: a channel's own older ones are
    * ignored by both valves), channels going idle and active again, elements.
    */
  def channels(r: Random, scale: Long, channels: Int): Vector[Step] = {
    val keys = Gen.keys(r)
    val n = length(r)
    val snap = snapper(r, scale)
    var cursor = r.nextLong(2 * scale + 1) - scale
    val disorder = r.nextLong(scale + 1)
    val out = Vector.newBuilder[Step]
    val churn = pick(r, 1, 2, 4) // idle and active steps, each, in 20
    for (_ <- 0 until n) {
      val c = r.nextInt(channels)
      r.nextInt(20) match {
        case k if k < churn => out += Step.Idle(c)
        case k if k < 2 * churn => out += Step.Active(c)
        case k if k < 2 * churn + 6 =>
          val wm =
            if (r.nextInt(6) == 0) { cursor += r.nextLong(3 * scale + 1); cursor }
            else cursor - r.nextLong(disorder + scale + 1)
          out += Step.ChannelWatermark(snap(wm), c)
        case _ =>
          val ts = snap(cursor + r.nextLong(2 * disorder + 1) - disorder)
          cursor += r.nextLong(scale / 3 + 1)
          out += Step.Element(Ev(keys(r.nextInt(keys.size)), ts, 1L + r.nextInt(99)))
      }
    }
    out.result()
  }

  /** Processing-time input: processing time moves forward (sometimes by a lot); elements carry
    * arbitrary event timestamps; watermarks may come too (processing-time windows ignore them).
    */
  def processingTime(r: Random, scale: Long, watermarks: Boolean): Vector[Step] = {
    val keys = Gen.keys(r)
    val n = length(r)
    val snap = snapper(r, scale)
    var now = r.nextLong(2 * scale + 1)
    var wm = Long.MinValue
    val out = Vector.newBuilder[Step]
    out += Step.ProcessingTime(now)
    for (_ <- 0 until n) {
      r.nextInt(10) match {
        case 0 | 1 | 2 =>
          now = math.max(
            now,
            snap(now + (if (r.nextInt(6) == 0) r.nextLong(4 * scale + 1) else r.nextLong(scale / 2 + 1)))
          )
          out += Step.ProcessingTime(now)
        case 3 if watermarks =>
          val candidate = now - r.nextLong(scale + 1)
          if (candidate > wm) { wm = candidate; out += Step.Watermark(wm) }
        case _ =>
          out += Step.Element(Ev(keys(r.nextInt(keys.size)), now - r.nextLong(scale + 1), 1 + r.nextInt(99)))
      }
    }
    out.result()
  }

  /** Storm input: elements with disorder, and ticks (periodic lag-watermark emissions). */
  def storm(r: Random, scale: Long, negative: Boolean): Vector[Step] = {
    val keys = Gen.keys(r)
    val n = if (r.nextInt(5) > 0) 8 + r.nextInt(35) else 100 + r.nextInt(300)
    val snap = snapper(r, scale)
    var cursor = if (negative && r.nextInt(3) == 0) -r.nextLong(4 * scale) else r.nextLong(2 * scale + 1)
    val disorder = r.nextLong(scale + 1)
    val out = Vector.newBuilder[Step]
    for (_ <- 0 until n) {
      if (r.nextInt(10) < 3) out += Step.Tick
      else {
        val ts = snap(cursor + r.nextLong(2 * disorder + 1) - disorder)
        cursor += (if (r.nextInt(10) == 0) r.nextLong(3 * scale + 1) else r.nextLong(scale / 3 + 1))
        out += Step.Element(Ev(keys(r.nextInt(keys.size)), ts, 1 + r.nextInt(99)))
      }
    }
    out.result()
  }

  def lateness(r: Random, size: Long): Long = pick(r, 0L, 0L, 1L, size / 2, 2 * size)

  def tumbling(r: Random): Assigner.Tumbling = {
    val size = pick(r, 1L, 3L, 5L, 10L, 20L)
    val offset = if (r.nextBoolean()) 0L else between(r, -(size - 1), size - 1)
    Assigner.Tumbling(size, offset, eventTime = true)
  }

  /** Size a multiple of the slide, or not (smaller than the slide too: gaps without windows). */
  def sliding(r: Random): Assigner.Sliding = {
    val slide = between(r, 1, 10)
    val size = r.nextInt(3) match {
      case 0 => slide * between(r, 1, 12)
      case 1 => between(r, slide + 1, 4 * slide + 1)
      case _ => between(r, 1, slide) // size <= slide
    }
    val offset = if (r.nextBoolean()) 0L else between(r, -(slide - 1), slide - 1)
    Assigner.Sliding(size, slide, offset, eventTime = true)
  }

  def session(r: Random): Assigner.Session = Assigner.Session(between(r, 1, 15))

  def eventTimeAssigner(r: Random): Assigner = r.nextInt(3) match {
    case 0 => tumbling(r)
    case 1 => sliding(r)
    case _ => session(r)
  }

  def scaleOf(a: Assigner): Long = a match {
    case Assigner.Tumbling(size, _, _) => math.max(size, 4)
    case Assigner.Sliding(size, slide, _, _) => math.max(math.max(size, slide), 4)
    case Assigner.Session(gap) => math.max(gap, 4)
    case Assigner.DynamicSession => 10
    case Assigner.Global => 10
  }

  def withLateness(
      r: Random,
      a: Assigner,
      trigger: Option[TriggerSpec] = None,
      evictor: Option[EvictorSpec] = None
  ) =
    Pipeline(a, trigger, evictor, lateness(r, scaleOf(a)), r.nextBoolean(), countSum = r.nextBoolean())
}

/** A family: how to draw a pipeline, and an input sequence for it. */
final case class Family(name: String, pipeline: Random => Pipeline, steps: (Random, Pipeline) => Vector[Step])

object Families {
  import Gen._

  private def et(r: Random, p: Pipeline): Vector[Step] = eventTime(r, scaleOf(p.assigner))

  val tumbling = Family("tumbling", r => withLateness(r, Gen.tumbling(r)), et)
  val sliding = Family("sliding", r => withLateness(r, Gen.sliding(r)), et)
  val sessions = Family("sessions", r => withLateness(r, session(r)), et)

  /** Sessions whose gap is the element's value (1 to 15 here). */
  val dynamicSessions = Family(
    "dynamicSessions",
    { r =>
      val trigger = r.nextInt(4) match {
        case 0 => Some(TriggerSpec.Count(between(r, 1, 4)))
        case 1 => Some(TriggerSpec.ContinuousEventTime(between(r, 1, 10)))
        case _ => None
      }
      withLateness(r, Assigner.DynamicSession, trigger)
    },
    (r, p) => eventTime(r, 10, value = r => between(r, 1, 15))
  )

  val count = Family(
    "countTrigger",
    r => withLateness(r, eventTimeAssigner(r), Some(TriggerSpec.Count(between(r, 1, 4)))),
    et
  )
  val purgingCount = Family(
    "purgingCountTrigger",
    r =>
      withLateness(r, eventTimeAssigner(r), Some(TriggerSpec.Purging(TriggerSpec.Count(between(r, 1, 4))))),
    et
  )

  /** Mostly non-negative times: a negative unaligned element excuses its windows. */
  val continuous = Family(
    "continuousEventTime",
    { r =>
      val a = if (r.nextInt(6) == 0) Assigner.Global else eventTimeAssigner(r)
      val t = TriggerSpec.ContinuousEventTime(between(r, 1, scaleOf(a)))
      withLateness(r, a, Some(if (r.nextInt(4) == 0) TriggerSpec.Purging(t) else t))
    },
    (r, p) => eventTime(r, scaleOf(p.assigner), negative = r.nextInt(4) == 0)
  )

  private def evicting(r: Random, evictor: EvictorSpec): Pipeline = {
    val a = eventTimeAssigner(r)
    val trigger = r.nextInt(3) match {
      case 0 => Some(TriggerSpec.Count(between(r, 1, 4)))
      case 1 => Some(TriggerSpec.Purging(TriggerSpec.Count(between(r, 1, 4))))
      case _ => None
    }
    withLateness(r, a, trigger, Some(evictor))
  }
  val countEvictor = Family(
    "countEvictor",
    r => evicting(r, EvictorSpec.CountEv(between(r, 0, 4), r.nextBoolean())),
    et
  )
  val timeEvictor = Family(
    "timeEvictor",
    r => evicting(r, EvictorSpec.TimeEv(between(r, 0, 12), r.nextBoolean())),
    et
  )

  /** `countWindow(size)` and `countWindow(size, slide)`, Flink's expansion. */
  val countWindows = Family(
    "countWindows",
    { r =>
      val size = between(r, 1, 5)
      r.nextInt(5) match {
        case 0 | 1 => Pipeline(Assigner.Global, Some(TriggerSpec.Purging(TriggerSpec.Count(size))))
        case 2 | 3 =>
          Pipeline(
            Assigner.Global,
            Some(TriggerSpec.Count(between(r, 1, 5))),
            Some(EvictorSpec.CountEv(size, after = false))
          )
        case _ => // a count trigger with a time evictor
          Pipeline(
            Assigner.Global,
            Some(TriggerSpec.Count(between(r, 1, 5))),
            Some(EvictorSpec.TimeEv(between(r, 0, 12), r.nextBoolean()))
          )
      }
    },
    (r, _) => eventTime(r, 10)
  )

  val processingTime = Family(
    "processingTime",
    { r =>
      val size = pick(r, 1L, 3L, 5L, 10L, 20L)
      val offset = if (r.nextBoolean()) 0L else between(r, -(size - 1), size - 1)
      val a =
        if (r.nextInt(3) == 0) {
          val slide = between(r, 1, size)
          Assigner.Sliding(size, slide, if (offset.abs < slide) offset else 0L, eventTime = false)
        } else Assigner.Tumbling(size, offset, eventTime = false)
      // Allowed lateness and the late output mean nothing in processing time.
      withLateness(r, a)
    },
    (r, p) => Gen.processingTime(r, scaleOf(p.assigner), watermarks = true)
  )

  /** Event-time input with processing time moving forward in between. */
  private def mixed(r: Random, p: Pipeline): Vector[Step] = {
    val steps = eventTime(r, scaleOf(p.assigner))
    var now = 0L
    steps.flatMap { s =>
      if (r.nextInt(4) == 0) {
        now += r.nextLong(8)
        Vector(Step.ProcessingTime(now), s)
      } else Vector(s)
    }
  }

  /** Periodic firings in processing time, on event-time or processing-time windows. */
  val continuousProcessingTime = Family(
    "continuousProcessingTime",
    { r =>
      val a =
        if (r.nextInt(4) == 0) Assigner.Tumbling(pick(r, 5L, 10L, 20L), 0L, eventTime = false)
        else eventTimeAssigner(r)
      val t = TriggerSpec.ContinuousProcessingTime(between(r, 1, 10))
      withLateness(r, a, Some(if (r.nextInt(4) == 0) TriggerSpec.Purging(t) else t))
    },
    mixed
  )

  /** Event-time windows whose trigger also times out in processing time. */
  val processingTimeout = Family(
    "processingTimeout",
    { r =>
      val a = if (r.nextBoolean()) Gen.tumbling(r) else Gen.sliding(r)
      val nested = if (r.nextBoolean()) TriggerSpec.EventTime else TriggerSpec.Count(between(r, 1, 4))
      val t = TriggerSpec.ProcessingTimeout(nested, between(r, 1, 10), r.nextBoolean(), r.nextInt(4) > 0)
      withLateness(r, a, Some(t)).copy(lateness = pick(r, 0L, 0L, 0L, scaleOf(a)))
    },
    { (r, p) =>
      val steps = eventTime(r, scaleOf(p.assigner))
      var now = 0L
      steps.flatMap { s =>
        if (r.nextInt(4) == 0) {
          now += r.nextLong(8)
          Vector(Step.ProcessingTime(now), s)
        } else Vector(s)
      }
    }
  )

  /** Two to four input channels meeting in the valve (Flink's StatusWatermarkValve). */
  val valve = Family(
    "valve",
    r => withLateness(r, eventTimeAssigner(r)).copy(channels = 2 + r.nextInt(3)),
    (r, p) => channels(r, scaleOf(p.assigner), p.channels)
  )

  val flink: Seq[Family] = Seq(
    tumbling,
    sliding,
    sessions,
    dynamicSessions,
    count,
    purgingCount,
    continuous,
    countEvictor,
    timeEvictor,
    countWindows,
    processingTime,
    processingTimeout,
    continuousProcessingTime,
    valve
  )
}

/** Storm families: a pipeline and a sequence of elements and ticks. */
final case class StormFamily(
    name: String,
    pipeline: Random => StormPipeline,
    timestamps: Boolean = true
)

object StormFamilies {
  import Gen._

  private def duration(r: Random) = StormSize.Duration(between(r, 2, 30).toInt)
  private def count(r: Random) = StormSize.Count(between(r, 1, 5).toInt)
  private def lag(r: Random) = pick(r, 0, 0, 1, 3, 10, 50)

  val timeTime =
    StormFamily("storm time/time", r => StormPipeline(duration(r), duration(r), lag(r), r.nextBoolean()))
  val timeCount =
    StormFamily("storm time/count", r => StormPipeline(duration(r), count(r), lag(r), r.nextBoolean()))
  val countTime =
    StormFamily("storm count/time", r => StormPipeline(count(r), duration(r), lag(r), r.nextBoolean()))
  val countCount =
    StormFamily("storm count/count", r => StormPipeline(count(r), count(r), lag(r), r.nextBoolean()))
  val plainCount =
    StormFamily(
      "storm count/count without timestamps",
      r => StormPipeline(count(r), count(r), 0, false),
      timestamps = false
    )

  val all: Seq[StormFamily] = Seq(timeTime, timeCount, countTime, countCount, plainCount)

  def steps(r: Random, p: StormPipeline): Vector[Step] = {
    val scale = (p.length, p.slide) match {
      case (StormSize.Duration(a), StormSize.Duration(b)) => math.max(a, b).toLong
      case (StormSize.Duration(a), _) => a.toLong
      case (_, StormSize.Duration(b)) => b.toLong
      case _ => 10L
    }
    Gen.storm(r, math.max(scale, 4), negative = true)
  }
}
