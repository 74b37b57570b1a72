package sparkwin.difftest

import java.util.{List => JList}

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.storm.generated.GlobalStreamId
import org.apache.storm.windowing.{
  CountEvictionPolicy,
  CountTriggerPolicy,
  Event,
  EvictionPolicy,
  TriggerPolicy,
  WaterMarkEvent,
  WaterMarkEventGenerator,
  WatermarkCountEvictionPolicy,
  WatermarkCountTriggerPolicy,
  WatermarkTimeEvictionPolicy,
  WatermarkTimeTriggerPolicy,
  WindowLifecycleListener,
  WindowManager
}

/** Storm's windowing, as `WindowedBoltExecutor` sets it up, with one bolt instance (one
  * `WindowManager`) per key, since sparkwin windows each key on its own.
  *
  * With timestamps, the policies are the watermark ones (`WatermarkTime/CountTriggerPolicy`,
  * `WatermarkTime/CountEvictionPolicy` with the lag), Storm's own `WaterMarkEventGenerator`
  * decides the watermark (`max - lag`, emitted when it grows) and which tuples are late
  * (`ts < last watermark`); a [[StormReference.Broadcast]] hands its watermark events to every
  * key's manager, as one generator per bolt would with the same input. The generator runs on
  * [[tick]], where the bolt's scheduler would run it.
  *
  * Storm starts its window search at time 0 and treats a timestamp below its first watermark
  * (0) as late; sparkwin starts at the earliest tuple (an exclusion). So every time given to
  * Storm is shifted up by `shift`, a multiple of the sliding interval, and shifted back in its
  * results: translation by whole slides changes nothing else in Storm's windows.
  *
  * Without timestamps (`timestamps = false`), the policies are `CountTriggerPolicy` and
  * `CountEvictionPolicy`: a window of the last `length` tuples every `slide` tuples.
  */
final class StormReference(
    p: StormPipeline,
    keys: Seq[String],
    timestamps: Boolean,
    shifted: Boolean = true
) {
  import StormReference._

  val shift: Long =
    if (!shifted) 0L
    else
      p.slide match {
        case StormSize.Duration(s) => (1000000000L / s) * s
        case StormSize.Count(_) => 1000000000L
      }

  private val emitted = mutable.ArrayBuffer.empty[StormPane]
  private val previous = mutable.HashMap.empty[String, Seq[Ev]]
  private val triggers = mutable.HashMap.empty[String, TriggerPolicy[Ev, _]]
  private val late = mutable.ArrayBuffer.empty[Ev]

  /** Late tuples without a late-tuple stream: Storm logs and acks them. */
  var lateDropped = 0L
  private lazy val managers: Map[String, WindowManager[Ev]] = keys.distinct.map(k => k -> manager(k)).toMap
  private val stream = new GlobalStreamId("source", "default")
  private val broadcast = new Broadcast(managers.values.toSeq)
  private val generator =
    if (timestamps) new WaterMarkEventGenerator[Ev](broadcast, 1000, p.lag, java.util.Set.of(stream))
    else null

  private def manager(key: String): WindowManager[Ev] = {
    val listener = new WindowLifecycleListener[Ev] {
      def onExpiry(events: JList[Ev]): Unit = ()
      override def onActivation(
          events: JList[Ev],
          newEvents: JList[Ev],
          expired: JList[Ev],
          ref: java.lang.Long
      ): Unit = {
        val vs = events.asScala.map(_.value).toSeq
        val (start, end) =
          if (!timestamps) (None, None)
          else
            p.length match {
              case StormSize.Duration(len) => (Some(ref - shift - len), Some(ref - shift))
              case StormSize.Count(_) => (None, Some(ref - shift))
            }
        val tuples = events.asScala.toSeq
        // DESIGN.md's count-window repeat: the same tuples as the key's previous window, and no
        // tuple after this window's end queued.
        val repeat = timestamps && p.length.isInstanceOf[StormSize.Count] &&
          p.slide.isInstanceOf[StormSize.Duration] && previous.get(key).contains(tuples) &&
          !queueOf(managers(key)).asScala.exists(_.getTimestamp > ref)
        previous(key) = tuples
        emitted += StormPane(Pane.of(key, start, end, vs), repeat)
      }
    }
    val m = new WindowManager[Ev](listener)
    val eviction: EvictionPolicy[Ev, _] = (p.length, timestamps) match {
      case (StormSize.Count(n), true) => new WatermarkCountEvictionPolicy[Ev](n)
      case (StormSize.Duration(ms), true) => new WatermarkTimeEvictionPolicy[Ev](ms, p.lag)
      case (StormSize.Count(n), false) => new CountEvictionPolicy[Ev](n)
      case (StormSize.Duration(_), false) =>
        throw new IllegalArgumentException("only count windows without timestamps")
    }
    val trigger: TriggerPolicy[Ev, _] = (p.slide, timestamps) match {
      case (StormSize.Count(n), true) => new WatermarkCountTriggerPolicy[Ev](n, m, eviction, m)
      case (StormSize.Duration(ms), true) => new WatermarkTimeTriggerPolicy[Ev](ms, m, eviction, m)
      case (StormSize.Count(n), false) => new CountTriggerPolicy[Ev](n, m, eviction)
      case (StormSize.Duration(_), false) =>
        throw new IllegalArgumentException("only count windows without timestamps")
    }
    m.setEvictionPolicy(eviction)
    m.setTriggerPolicy(trigger)
    triggers(key) = trigger
    trigger.start()
    m
  }

  /** Whether the last element was late. */
  var lastWasLate = false

  /** The next window end of a key's WatermarkTimeTriggerPolicy, unshifted (time slides). */
  def nextWindowEnd(key: String): Option[Long] = triggers.get(key).collect {
    case t: WatermarkTimeTriggerPolicy[_] => t.getState.longValue - shift
  }

  /** The last watermark the managers got, unshifted (Long.MinValue before the first). */
  def watermark: Long = if (broadcast.last == Long.MinValue) Long.MinValue else broadcast.last - shift

  def element(e: Ev): Unit =
    if (!timestamps) managers(e.key).add(e, e.ts)
    else {
      val ts = e.ts + shift
      lastWasLate = !generator.track(stream, ts)
      if (!lastWasLate) managers(e.key).add(e, ts)
      else if (p.lateStream) late += e
      else lateDropped += 1
    }

  /** The bolt's periodic watermark task. */
  def tick(): Unit = if (timestamps) generator.run()

  /** A watermark straight to every manager (the end of the input). */
  def advanceTo(wm: Long): Unit = broadcast.add(new WaterMarkEvent[Ev](wm + shift))

  /** Windows per key (in firing order) and late tuples since the last call. */
  def drain(): StepOut[StormPane] = {
    val r = StepOut(emitted.toVector, late.toVector)
    emitted.clear()
    late.clear()
    r
  }

  /** Tuples still queued in any manager. */
  def queued: Int = managers.values.map(m => queueOf(m).size).sum

  /** The tuples queued for `key`, in arrival order, with their unshifted timestamps. */
  def queuedFor(key: String): Seq[Long] =
    queueOf(managers(key)).asScala.map(_.getTimestamp - (if (timestamps) shift else 0L)).toSeq
}

/** A Storm window; `repeat`: it is a [[Exclusion.StormCountWindowNotRepeated]] candidate. */
final case class StormPane(pane: Pane, repeat: Boolean)

object StormReference {

  /** Hands watermark events to every key's manager. */
  final class Broadcast(targets: Seq[WindowManager[Ev]])
      extends WindowManager[Ev](new WindowLifecycleListener[Ev] {
        def onExpiry(events: JList[Ev]): Unit = ()
      }) {
    var last = Long.MinValue
    override def add(event: Event[Ev]): Unit = {
      require(event.isWatermark, "only watermarks go to every key")
      last = event.getTimestamp
      targets.foreach(_.add(event))
    }
  }

  private val queueField = {
    val f = classOf[WindowManager[_]].getDeclaredField("queue")
    f.setAccessible(true)
    f
  }

  def queueOf(m: WindowManager[Ev]): java.util.Collection[Event[Ev]] =
    queueField.get(m).asInstanceOf[java.util.Collection[Event[Ev]]]
}
