package sparkwin.runtime.spark.task

import sparkwin.core.CorruptStateException
import sparkwin.core.time.ChannelWatermarks
import sparkwin.operator.store.ByteSource
import sparkwin.plan.{Plan, RunMode}

/** A key group's entries read from another checkpoint, written into a new one as they are (the
  * loop reads every layout an earlier release wrote, and moves a group to the current one as it
  * writes it), except the group's Spark timer: it is set again as this release's policy wants
  * it, since the other checkpoint may have kept it on another clock (sparkwin 0.4 kept
  * processing time on Spark's processing-time timers). The task side of
  * `runtime.checkpoint.Migration`.
  */
object GroupImport {

  /** Puts `entries` into `host` and gives the group its Spark timer, as a call of the loop would
    * leave it at Spark watermark `watermark` and processing time `now`.
    */
  def restore(
      host: GroupHost,
      entries: Iterator[(Array[Byte], Array[Byte])],
      plan: Plan,
      mode: RunMode,
      keyGroups: Int,
      watermark: Long,
      now: Long
  ): Unit = {
    var record: Array[Byte] = null
    entries.foreach { case (k, v) =>
      if (GroupEntries.of(k) == GroupEntries.Record) record = v else host.put(k, v)
    }
    if (record != null) {
      val r = GroupRecord.read(record)
      if (r.keyGroups != keyGroups)
        throw new IllegalStateException(
          s"the checkpoint was written with ${r.keyGroups} key groups and the new one is planned with " +
            s"$keyGroups: set spark.sparkwin.keyGroups to ${r.keyGroups} to move it"
        )
      val policy = plan.timeIn(mode)
      val (earliestEvent, earliestProcessing) =
        if (r.index != null) r.index.earliest() else r.table.earliest()
      val idleDeadline = r.channels.fold(Long.MaxValue)(c => channels(plan, c).nextIdleDeadline)
      val wake = policy.processingWake(earliestProcessing, earliestEvent != Long.MaxValue, idleDeadline)
      val engineWatermark = if (watermark > 0) watermark else Long.MinValue
      val wanted = policy.sparkTimer(earliestEvent, engineWatermark, wake, now)
      host.timer(Long.MinValue, wanted, firing = false)
      host.put(
        GroupSync.RecordKey,
        GroupRecord.write(
          r.keyGroups,
          wanted,
          r.liveKeys,
          r.table,
          r.channels,
          r.processing,
          r.buckets,
          r.index
        )
      )
    }
  }

  private def channels(plan: Plan, bytes: Array[Byte]): ChannelWatermarks = {
    val source = new ByteSource
    source.point(bytes)
    CorruptStateException.reading("a key group's channel watermarks", bytes.length, () => source.position) {
      ChannelWatermarks.read(
        plan.watermark.getOrElse(
          throw new IllegalStateException(
            "the checkpoint keeps channel watermarks and the plan has no watermark"
          )
        ),
        new java.io.DataInputStream(source),
        plan.declaredChannels
      )
    }
  }
}
