package sparkwin.runtime.spark.task

import scala.jdk.CollectionConverters._

import sparkwin.core.CorruptStateException
import sparkwin.core.time.ChannelWatermarks
import sparkwin.operator.store.{ByteSource, Bytes}
import sparkwin.plan.{Plan, PlanException, TimePolicy}
import sparkwin.runtime.TimeMove

/** A key group's clocks in one call of its loop ([[KeyGroupLoop]]), as the plan's [[TimePolicy]]
  * says: the processing time, the watermark a key's rows meet ([[before]]) and the one that
  * follows them ([[after]]).
  *
  * Event time is Spark's watermark; with channels (`channel=`, and in real-time mode) it is the
  * group's own [[ChannelWatermarks]], kept in its record and moved by the batch's per-channel
  * summaries ([[ChannelSummaries]]), which every group sees alike; a chained pipeline's rows meet
  * the watermark the group saw last (kept under [[GroupClocks.PreviousWatermarkKey]], where on
  * Spark's watermark a pipeline with processing-time timers keeps it too). Processing
  * time is a clock tick's when the call is one ([[ClockSource]]'s), else the micro-batch's.
  */
final class GroupClocks(plan: Plan, policy: TimePolicy) {

  /** Spark's event-time watermark in this call (0 or less: none yet). */
  var spark: Long = Long.MinValue

  /** Processing time in this call. */
  var now: Long = Long.MinValue

  /** The watermark a key's rows meet. */
  var before: Long = Long.MinValue

  /** The watermark that follows them: windows it closes fire in this call. */
  var after: Long = Long.MinValue

  /** The watermark the group's last call ended at, where its keys' processing-time timers due
    * now fire ([[TimeMove.Unsettled]]: not kept, or not known: a group of an older checkpoint).
    */
  var settled: Long = TimeMove.Unsettled

  // The group's own channel watermarks (null: the watermark is Spark's).
  private var channels: ChannelWatermarks = _

  /** A call begins, its group's record `stored` (with `reused` its channel watermarks as the
    * last call left them, or null), the batch's `delivered` channel watermarks from `partitions`
    * source partitions, and the `tick`'s time when the call is one (Long.MinValue: none).
    */
  def open(
      host: GroupHost,
      stored: Option[GroupRecord.Stored],
      reused: ChannelWatermarks,
      delivered: java.util.TreeMap[String, java.lang.Long],
      partitions: Int,
      tick: Long
  ): Unit = {
    spark = host.watermark
    val batch = host.batchTime
    now = math.max(tick, if (batch >= 0) batch else System.currentTimeMillis())
    channels = if (!policy.ownWatermark) null else if (reused != null) reused else read(stored)
    settled = if (policy.keepsWatermark) previous(host) else TimeMove.Unsettled
    val (rowsMeet, follows) = policy.groupWatermarks(
      {
        val was = channels.watermark
        val moves = delivered.asScala.map { case (c, t) => (c, t.longValue) }
        // Every source partition the batch reads holds the watermark back before it delivers.
        (was, channels.boundary(now, moves, ChannelSummaries.partitionChannels(partitions)))
      },
      spark,
      if (settled == TimeMove.Unsettled) Long.MinValue else settled
    )
    before = rowsMeet
    after = follows
  }

  /** The call ends: the group keeps the watermark its next call starts from (a chained
    * pipeline's rows meet it; see [[TimePolicy.keepsWatermark]]), unless it is `empty` (no key
    * of it holds state or waits) and only its processing-time timers needed it.
    */
  def close(host: GroupHost, empty: Boolean): Unit =
    if (policy.inheritsWatermark) { if (after != before) keep(host) }
    else if (policy.keepsWatermark) {
      if (!empty) { if (after != settled) keep(host) }
      else if (settled != TimeMove.Unsettled) host.remove(GroupClocks.PreviousWatermarkKey)
    }

  private def keep(host: GroupHost): Unit =
    host.put(GroupClocks.PreviousWatermarkKey, { val b = new Array[Byte](8); Bytes.putLong(b, 0, after); b })

  /** The group's channel watermarks (null: the watermark is Spark's). */
  def watermarks: ChannelWatermarks = channels

  /** When an idle timeout next turns a channel idle (Long.MaxValue: never, or no channels). */
  def idleDeadline: Long = if (channels == null) Long.MaxValue else channels.nextIdleDeadline

  /** The channel watermarks' bytes for the group's record (None without): the stored ones when
    * nothing moved them (a row's call: only a summary does).
    */
  def recordBytes(stored: Option[Array[Byte]]): Option[Array[Byte]] =
    if (channels == null) None
    else
      stored match {
        case Some(bytes) if !channels.isChanged => Some(bytes)
        case _ =>
          val bytes = new java.io.ByteArrayOutputStream()
          val out = new java.io.DataOutputStream(bytes)
          channels.write(out)
          out.flush()
          Some(bytes.toByteArray)
      }

  /** The valve as metrics show it: the group's watermark and its channels, once any is known. */
  def valve: Option[(Long, Seq[(String, Long, Boolean)])] =
    if (channels == null) None
    else {
      val each = channels.channels
      if (each.isEmpty) None else Some((channels.watermark, each))
    }

  private def read(stored: Option[GroupRecord.Stored]): ChannelWatermarks = {
    val strategy = plan.watermark.getOrElse(
      throw new PlanException("channel= on a live stream needs a watermark strategy")
    )
    stored.flatMap(_.channels) match {
      case Some(bytes) =>
        val source = new ByteSource
        source.point(bytes)
        val in = new java.io.DataInputStream(source)
        CorruptStateException.reading(
          "a key group's channel watermarks",
          bytes.length,
          () => source.position
        ) {
          ChannelWatermarks.read(strategy, in, plan.declaredChannels, policy.partitionChannels)
        }
      case None =>
        if (stored.isDefined)
          throw new IllegalStateException(
            "this checkpoint was written by a pipeline whose watermark was Spark's (micro-batch " +
              "mode without channel=): start the query from a new checkpoint to read watermarks " +
              "per channel or to run it in real-time mode"
          )
        ChannelWatermarks(strategy, plan.declaredChannels, policy.partitionChannels)
    }
  }

  /** The watermark this group's last call ended at ([[TimeMove.Unsettled]]: none kept). */
  private def previous(host: GroupHost): Long =
    Option(host.get(GroupClocks.PreviousWatermarkKey)).fold(TimeMove.Unsettled)(Bytes.getLong(_, 0))
}

object GroupClocks {

  /** Where a group of a chained pipeline keeps the watermark of its last call (one byte: no
    * key's bytes are that short).
    */
  val PreviousWatermarkKey: Array[Byte] = Array[Byte](0)
}
