package sparkwin.runtime

import sparkwin.core.{EventTime, Record, UnheldValue, Values}

/** The bad-record rules, in one function: what makes an input record one the engine cannot take.
  * Such a record goes to the errors output with the reason instead of failing a task (which, on
  * a stream, would fail every restart). Every runtime asks [[reason]]: the driver (stream, batch,
  * local runner, harness), the map-side combiner (which passes such a row on whole, so the
  * driver names it) and replay.
  */
object BadRecords {

  /** Why the engine cannot take `record`, or null when it can. The rules, in the order they are
    * checked (the first that applies is the reason): a value that has no form in the session's
    * types ([[Record.unheld]]: the record could not be read as every other is), a null timestamp,
    * a null arrival (replay's arrival column), a null channel (pipelines with `channel=`), an
    * event time outside [[EventTime]]'s range. `timestampColumn` negative: the record has no
    * event time (arrival order), so only the other rules apply. The caller says whether a column
    * of its own layout is null (`arrivalMissing`, `channelMissing`).
    */
  def reason(record: Record, timestampColumn: Int, arrivalMissing: Boolean, channelMissing: Boolean): String =
    if (record.unheld != null) unheld(record.unheld)
    else if (timestampColumn >= 0 && record.isNullAt(timestampColumn)) "the timestamp is null"
    else if (arrivalMissing) "the arrival is null"
    else if (channelMissing) "the channel is null"
    else if (timestampColumn >= 0) {
      val ts = Values.toMillis(record.get(timestampColumn))
      if (EventTime.inRange(ts)) null else EventTime.outOfRange(ts)
    } else null

  private def unheld(u: UnheldValue): String =
    s"column '${u.column}' holds ${u.value}, which Spark holds but a ${u.form} cannot (the rebase to " +
      "its calendar overflows); set spark.sql.datetime.java8API.enabled=true to read times as " +
      "java.time, which holds every value Spark can"
}
