package sparkwin.core.time

import java.io.{DataInput, DataOutput}

import scala.collection.mutable.ArrayBuffer

/** The watermark of a stream that arrives in batches (Spark's micro-batches) from several input
  * channels (Kafka partitions, shards): a generator per channel, idleness, and the valve
  * ([[StatusWatermarkValve]]) over them, moved once per batch by [[boundary]].
  *
  * At the end of a batch, at its time `t`: first every active channel whose last data is at least
  * the idle timeout before `t` goes idle, in the order of those deadlines (then of channel id);
  * then each channel that delivered in the batch is active with its last data at `t`, and then
  * each (in channel-id order) emits its generator's watermark over everything it delivered. The
  * valve's output after that is the batch's watermark. A channel that has not delivered yet is
  * idle, so it does not hold the watermark back; when it first delivers it joins as an idle
  * channel coming back does, aligned only once it has caught up with the output.
  *
  * `declared` channels (a Kafka topic's partitions, known before they deliver) are what Flink's
  * Kafka source has: they join at the first batch that brings any data, before its idleness,
  * active with no watermark and their last data at that batch's time. So each holds the output
  * back until it delivers or goes idle, and a slow partition's first records are not late
  * because a fast one happened to be read first. A channel declared only after the output
  * moved (a restart with more partitions) joins the same way but is aligned only once it has
  * caught up, as any channel coming back is.
  *
  * With `holdNew` (the source partitions of a real-time batch) a channel holds the output back
  * from the moment it is known, even if it is behind it, as a split does in Flink's source
  * reader: otherwise a partition read a little behind the first one to deliver would stay
  * unaligned, the output would follow the other alone, and its rows would turn late as they
  * arrived. A batch names its channels before they deliver (`announced` in [[boundary]]: the
  * source partitions a real-time batch reads, which its map tasks know): they join as declared
  * channels do, and with `holdNew` they hold the output back even when it has moved (a partition
  * added later, or a restart with more), until they deliver or go idle.
  *
  * The outcome depends only on the batches' times and contents, not on how often `boundary` ran
  * in between: a boundary without data applies only idle transitions, which a later boundary
  * would apply in the same order. So copies kept in several places (Spark's key groups) and a
  * query restarted from its checkpoint compute the same watermarks.
  */
final class ChannelWatermarks private (
    strategy: WatermarkStrategy,
    declared: Seq[String],
    holdNew: Boolean,
    private val ids: ArrayBuffer[String],
    private val maxSeen: ArrayBuffer[Long],
    private val lastData: ArrayBuffer[Long],
    private val valve: StatusWatermarkValve
) {
  private val index = new java.util.HashMap[String, Integer]()
  ids.indices.foreach(i => index.put(ids(i), i))

  // Whether a boundary changed anything since these watermarks were made, read or written: a
  // runtime that keeps them as bytes encodes them again only then.
  private var changed = false

  private val (bound, idleTimeout) = strategy.kind match {
    case WatermarkStrategy.BoundedOutOfOrderness(b) => (b + 1, strategy.idleTimeout)
    case WatermarkStrategy.StormLag(lag) => (lag, strategy.idleTimeout)
    case other =>
      throw new IllegalArgumentException(
        s"$other watermarks cannot be generated per channel on a live stream: use " +
          "WatermarkStrategy.forBoundedOutOfOrderness or forStormLag"
      )
  }

  /** The batch watermark (Long.MinValue before the first). */
  def watermark: Long = valve.currentWatermark

  /** The end of batch at `time`, in which each channel of `delivered` brought data whose largest
    * event time is the value, and which reads the `announced` channels (delivering or not);
    * returns the new watermark.
    */
  def boundary(time: Long, delivered: Iterable[(String, Long)], announced: Iterable[String] = Nil): Long = {
    // Only a batch with data: a boundary without data applies idleness alone (see above).
    if (delivered.nonEmpty) {
      changed = true
      (declared.iterator ++ announced.iterator).foreach { id =>
        if (!index.containsKey(id)) {
          val i = channel(id)
          lastData(i) = time
          if (holdNew) valve.join(i) else valve.markActive(i)
        }
      }
    }
    idleTimeout.foreach { timeout =>
      val due = ids.indices.filter { i =>
        !valve.isChannelIdle(i) && lastData(i) != Long.MinValue && lastData(i) <= time - timeout
      }
      if (due.nonEmpty) changed = true
      due.sortBy(i => (lastData(i), ids(i))).foreach(valve.markIdle)
    }
    // Every channel that delivered is active first, then each emits: channels of one batch do
    // not decide each other's alignment by the order they are listed in.
    val batch = delivered.toSeq.sortBy(_._1).map { case (id, max) =>
      val known = index.containsKey(id)
      val i = channel(id)
      if (max > maxSeen(i)) maxSeen(i) = max
      lastData(i) = time
      if (holdNew && !known) valve.join(i)
      else if (valve.isChannelIdle(i)) valve.markActive(i)
      i
    }
    batch.foreach(i => valve.inputWatermark(generated(maxSeen(i)), i))
    watermark
  }

  /** The next time at which a channel goes idle (Long.MaxValue: none will). */
  def nextIdleDeadline: Long = idleTimeout match {
    case None => Long.MaxValue
    case Some(timeout) =>
      var next = Long.MaxValue
      for (i <- ids.indices if !valve.isChannelIdle(i) && lastData(i) != Long.MinValue)
        next = math.min(next, lastData(i) + timeout)
      next
  }

  /** Each channel's id, generated watermark and whether it is idle, in order of first data. */
  def channels: Seq[(String, Long, Boolean)] =
    ids.indices.map(i => (ids(i), valve.channelWatermark(i), valve.isChannelIdle(i)))

  def isIdle: Boolean = valve.numChannels == 0 || valve.isIdle

  /** Whether a [[boundary]] may have changed them since they were made, read or written. */
  def isChanged: Boolean = changed

  private def channel(id: String): Int = {
    val known = index.get(id)
    if (known != null) known.intValue
    else {
      val i = valve.addChannel()
      ids += id
      maxSeen += Long.MinValue
      lastData += Long.MinValue
      index.put(id, i)
      i
    }
  }

  private def generated(max: Long): Long =
    if (max == Long.MinValue || max < Long.MinValue + bound) Long.MinValue else max - bound

  /** The whole state, for a runtime that keeps it in a checkpoint. */
  def write(out: DataOutput): Unit = {
    changed = false
    out.writeInt(ids.size)
    ids.indices.foreach { i => out.writeUTF(ids(i)); out.writeLong(maxSeen(i)); out.writeLong(lastData(i)) }
    valve.write(out)
  }
}

object ChannelWatermarks {

  /** Channel watermarks before any channel delivered; `declared` channels hold the output back
    * from the first batch with data until they deliver or go idle; with `holdNew` every channel
    * holds it back from when it is first known (announced or delivering).
    */
  def apply(
      strategy: WatermarkStrategy,
      declared: Seq[String] = Nil,
      holdNew: Boolean = false
  ): ChannelWatermarks =
    new ChannelWatermarks(
      strategy,
      checked(declared),
      holdNew,
      ArrayBuffer.empty,
      ArrayBuffer.empty,
      ArrayBuffer.empty,
      new StatusWatermarkValve(0)
    )

  /** As [[ChannelWatermarks.write]] left them; `declared` may name channels they do not know. */
  def read(
      strategy: WatermarkStrategy,
      in: DataInput,
      declared: Seq[String] = Nil,
      holdNew: Boolean = false
  ): ChannelWatermarks = {
    val n = sparkwin.core.CorruptStateException.count(in, 18, "channels") // a name's length and two times
    val ids = ArrayBuffer.empty[String]
    val maxSeen = ArrayBuffer.empty[Long]
    val lastData = ArrayBuffer.empty[Long]
    for (_ <- 0 until n) { ids += in.readUTF(); maxSeen += in.readLong(); lastData += in.readLong() }
    val valve = StatusWatermarkValve.read(in)
    if (valve.numChannels != n)
      throw new IllegalStateException(
        s"saved channel watermarks of $n channels and a valve of ${valve.numChannels}"
      )
    new ChannelWatermarks(strategy, checked(declared), holdNew, ids, maxSeen, lastData, valve)
  }

  /** `declared`, refused if it names a channel twice (the plan decoder's check too). */
  def checked(declared: Seq[String]): Seq[String] = {
    val twice = declared.diff(declared.distinct)
    if (twice.nonEmpty)
      throw new IllegalArgumentException(s"channels declared twice: ${twice.distinct.mkString(", ")}")
    declared
  }
}
