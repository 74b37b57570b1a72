package sparkwin.runtime.spark.task

import sparkwin.core.time.ChannelWatermarks
import sparkwin.plan.TimePolicy

/** A key group's record ([[GroupRecord]]) across one call of its loop: read when the call opens,
  * and at its end the group's wake-ups synced (its one Spark timer and its processing-time
  * wake-up report, as the plan's [[TimePolicy]] says) and the record written only if something in
  * it changed, or removed once nothing is left to keep.
  *
  * In real-time mode a call is one row of the same few groups, and a call whose group still holds
  * the bytes the task's last call left skips reading them (the record, its table and the channel
  * watermarks were a fifth of the loop's time at 10k rows a second). What is read is a function of
  * the bytes, so another group with the same bytes may use it too. Kept only when a call ends well.
  */
final class GroupSync(spec: LoopSpec, policy: TimePolicy) {
  import GroupSync._

  private var kept: Kept = _
  // This call's: the record as read (None: the group has none), its bytes, and what was reused.
  private var stored: Option[GroupRecord.Stored] = None
  private var storedBytes: Array[Byte] = _
  private var reused: Kept = _

  /** Reads the group's record at a call's start (or takes what the last call left of the same
    * bytes), refusing a checkpoint written with another number of key groups.
    */
  def open(host: GroupHost): Option[GroupRecord.Stored] = {
    storedBytes = host.get(RecordKey)
    reused =
      if (storedBytes != null && kept != null && java.util.Arrays.equals(storedBytes, kept.bytes)) kept
      else null
    kept = null // until this call ends well: its objects change as it runs
    stored =
      if (storedBytes == null) None
      else if (reused != null && reused.record != null) Some(reused.record)
      else Some(GroupRecord.read(storedBytes))
    stored.foreach { g =>
      if (g.keyGroups != spec.keyGroups)
        throw new IllegalStateException(
          s"this checkpoint was written with ${g.keyGroups} key groups, and this query runs " +
            s"${spec.keyGroups}: set spark.sparkwin.keyGroups to ${g.keyGroups} to resume the query " +
            "(the number of key groups is fixed for the life of a checkpoint)"
        )
    }
    stored
  }

  /** The channel watermarks the last call left over the same bytes (null: read them). */
  def reusedChannels: ChannelWatermarks = if (reused == null) null else reused.channels

  /** The call ends: the group's Spark timer at its keys' earliest event-time wake-up (one timer
    * per group), its earliest processing-time wake-up reported to the clock, its keys' and
    * wake-ups' writes, and its record, which goes once no key of it holds state or waits (with
    * channels it stays: it holds the group's copy of the channel watermarks). Returns whether the
    * group is left without a record.
    */
  def close(
      host: GroupHost,
      opened: Wakeups,
      store: KeyStore,
      liveKeys: Long,
      clocks: GroupClocks,
      firing: Boolean,
      tick: Long
  ): Boolean = {
    // A group whose table grew past a few hundred keys (or an older sparkwin's) moves to the index.
    val wakeups = opened.grown(host)
    val (earliestEvent, earliestProcessing) = wakeups.earliest()
    val current = stored.map(_.timer).getOrElse(Long.MinValue)
    val wake = policy.processingWake(earliestProcessing, earliestEvent != Long.MaxValue, clocks.idleDeadline)
    val wanted = policy.sparkTimer(earliestEvent, clocks.spark, wake, clocks.now)
    host.timer(current, wanted, firing)
    spec.wakes.foreach(_.report(wake, tick != Long.MinValue))
    val buckets = store.flush()
    wakeups.flush(host)
    val channels = clocks.recordBytes(stored.flatMap(_.channels))
    val record = new GroupRecord.Stored(
      spec.keyGroups,
      wanted,
      liveKeys,
      wakeups.table,
      channels,
      policy.processingTimers,
      buckets,
      wakeups.index
    )
    val empty = liveKeys == 0 && wanted == Long.MinValue && wakeups.isEmpty && channels.isEmpty
    if (empty) { if (stored.isDefined) host.remove(RecordKey) }
    else if (stored.forall(s => wakeups.changed || differs(s, record))) {
      val bytes = GroupRecord.write(record)
      host.put(RecordKey, bytes)
      kept = Kept(bytes, if (wakeups.settle()) record else null, clocks.watermarks)
    } else kept = Kept(storedBytes, if (wakeups.settle()) record else null, clocks.watermarks)
    empty
  }

  /** Whether the header or the channel watermarks of `now` differ from the record `was`. */
  private def differs(was: GroupRecord.Stored, now: GroupRecord.Stored): Boolean =
    was.timer != now.timer || was.liveKeys != now.liveKeys || was.buckets != now.buckets ||
      !((was.channels, now.channels) match {
        case (Some(x), Some(y)) => java.util.Arrays.equals(x, y)
        case (None, None) => true
        case _ => false
      })
}

object GroupSync {

  /** A group record's bytes and what they read as: the record (null: to be read again) and the
    * channel watermarks (null without).
    */
  private final case class Kept(bytes: Array[Byte], record: GroupRecord.Stored, channels: ChannelWatermarks)

  /** Where the group's record lives: no key's bytes are empty (a key row has at least one
    * field, so its `UnsafeRow` at least a null bitmap and a word).
    */
  val RecordKey: Array[Byte] = Array.emptyByteArray
}
