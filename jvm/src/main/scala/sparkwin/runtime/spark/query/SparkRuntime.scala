package sparkwin.runtime.spark.query

import sparkwin.plan._
import sparkwin.runtime.spark._

import org.apache.spark.TaskContext
import org.apache.spark.sql.{Column, DataFrame, Dataset, Encoders, Row}
import org.apache.spark.sql.functions.{
  col,
  element_at,
  explode,
  hash,
  lit,
  pmod,
  spark_partition_id,
  timestamp_millis,
  unix_millis,
  when
}
import org.apache.spark.sql.types.{LongType, Metadata, StringType, StructType}

import sparkwin.runtime.spark.task.BatchRunner
import sparkwin.core.EventTime
import sparkwin.runtime.spark.task.{
  ChannelSummaries,
  Closings,
  Combiner,
  LoopSpec,
  OutputLayout,
  Rows,
  SessionForms,
  WakeReports
}

/** Runs a plan on a DataFrame: for streams, the key groups' input (map-side combining, channel
  * summaries, clock ticks) and the Spark line's stateful operator over it ([[SparkShim]]:
  * `transformWithState` on 4.x, `flatMapGroupsWithState` on 3.5); for bounded data, the same
  * engine per key in `flatMapGroups`. Either way the result has the union schema of
  * [[OutputLayout]]. Nothing here names a Spark version.
  */
object SparkRuntime {
  private val EventTimeColumn = "__sw_event_time"
  private val KeyGroup = "__sw_key_group"
  private val TickColumn = "__sw_tick"

  val MapSideCombineConf = "spark.sparkwin.mapSideCombine"

  /** How often, at most, a real-time query's map side sends each key group what its rows moved
    * the watermark to (milliseconds; 0: with every row that moves it). The default is Flink's
    * periodic watermark interval halved: a summary is a row per key group, and one per moving row
    * (nearly every row of an ordered input) cost more than the rows themselves.
    */
  val SummaryIntervalConf = "spark.sparkwin.realTime.summaryIntervalMs"
  val DefaultSummaryIntervalMs = 100L

  /** The plan run on `df`; a stream runs in `mode`: micro-batches, or Spark's real-time mode
    * (DESIGN.md, "Real-time mode"). A stream's `checkpoint`, where known, keeps
    * its number of key groups ([[KeyGroupCount]]).
    */
  def windowed(
      df: DataFrame,
      plan: Plan,
      mode: RunMode = RunMode.MicroBatch,
      checkpoint: Option[String] = None
  ): DataFrame = {
    val java8 = df.sparkSession.conf.get("spark.sql.datetime.java8API.enabled", "false").toBoolean
    val layout = new OutputLayout(plan, java8)
    if (mode == RunMode.RealTime) PlanRules.refuseRealTime(plan, Some(df.isStreaming), None)
    refuseNondeterministicInputs(df, plan)
    if (df.isStreaming) streaming(df, plan.timeIn(mode), plan, layout, checkpoint)
    else batch(df, plan, layout)
  }

  /** Where Python's builder puts an aggregate's input given as a Spark Column: a hidden column
    * of this prefix, which Spark computes before the engine reads it.
    */
  val ComputedPrefix = "__sparkwin_"

  /** Refuses a computed input that is not deterministic (`rand()`, `uuid()`, the current time):
    * a micro-batch Spark runs again after a failure, and a replay, must give the same panes.
    */
  private def refuseNondeterministicInputs(df: DataFrame, plan: Plan): Unit = {
    val computed = plan.inputSchema.fieldNames.filter(_.startsWith(ComputedPrefix)).toSet
    nondeterministicInputs(df).find { case (name, _) => computed(name) }.foreach { case (_, sql) =>
      throw new PlanException(
        s"the Column $sql given to sparkwin is not deterministic: a micro-batch Spark runs again " +
          "after a failure, and a replay, must give the same panes; compute a deterministic value " +
          "instead (e.g. a hash of the row's columns)"
      )
    }
  }

  /** The computed input columns of `df` (hidden, [[ComputedPrefix]]) that are not deterministic,
    * with their expressions' SQL: what the builder refuses as it adds them (classic sessions), and
    * a query refuses before it starts.
    */
  def nondeterministicInputs(df: DataFrame): Seq[(String, String)] = {
    val found = Seq.newBuilder[(String, String)]
    df.queryExecution.analyzed.foreach {
      case p: org.apache.spark.sql.catalyst.plans.logical.Project =>
        p.projectList.foreach {
          case a: org.apache.spark.sql.catalyst.expressions.Alias
              if a.name.startsWith(ComputedPrefix) && !a.child.deterministic =>
            found += ((a.name, a.child.sql))
          case _ =>
        }
      case _ =>
    }
    found.result()
  }

  /** `spark.sparkwin.realTime.summaryIntervalMs`, validated. */
  def summaryInterval(df: DataFrame): Long = {
    val text = df.sparkSession.conf.get(SummaryIntervalConf, DefaultSummaryIntervalMs.toString)
    scala.util.Try(text.trim.toLong).toOption.filter(_ >= 0).getOrElse {
      throw new PlanException(
        s"$SummaryIntervalConf must be a whole number of milliseconds, 0 or more, got '$text'"
      )
    }
  }

  /** Input columns without watermark metadata: a watermark the user set on the timestamp
    * would make Spark drop late rows before the engine could route them.
    */
  private def plainColumns(df: DataFrame): Seq[Column] =
    df.schema.fields.toSeq.map(f => col(s"`${f.name}`").as(f.name, Metadata.empty))

  private def grouped(input: DataFrame, plan: Plan) =
    input
      .groupBy(plan.keys.groupingColumns: _*)
      .as[Row, Row](SessionForms.reader(plan.keys.schema), SessionForms.reader(plan.inputSchema))

  /** `df`'s rows as sparkwin reads them ([[SessionForms]]): every value Spark can hold. */
  private def readable(df: DataFrame): Dataset[Row] = df.as[Row](SessionForms.reader(df.schema))

  /** Pre-aggregated input (see [[Combiner]]), led by the key columns. */
  private def combinedInput(input: DataFrame, plan: Plan, java8: Boolean): DataFrame = {
    val planJson = plan.json
    readable(input.select(combinerColumns(plan, java8): _*))
      .mapPartitions { rows =>
        val p = PlanDecoder.cached(planJson)
        Combiner.combine(p, rows, p.inputSchema.size)
      }(SessionForms.writer(Combiner.partialSchema(plan)))
  }

  /** The combiner's input: the input columns, then the event time in epoch milliseconds. A row
    * is turned into objects column by column, so what the combiner does not read stays null,
    * and a timestamp from 1900 on is read as its milliseconds, not as a `java.sql.Timestamp`
    * (with a time zone lookup and a rebase per row). Before 1900 Spark's rebase from the
    * Proleptic Gregorian calendar can shift a timestamp's milliseconds, so those still go as
    * objects. A row the engine may not take is read whole, as it came, for the error output and
    * its reason (`BadRecords`, asked by the combiner): its timestamp null or outside the
    * engine's range, its channel null, or (the session reading `java.sql` times) a time anywhere
    * in it outside 0001..9999, which may have no `java.sql` form ([[SessionForms]]): read as an
    * element is, an unread column could make it an error row.
    */
  private def combinerColumns(plan: Plan, java8: Boolean): Seq[Column] = {
    val schema = plan.inputSchema
    val ts = col(s"`${plan.timestampName}`")
    val read = plan.keyColumns.toSet ++ plan.spec.aggregates.flatMap(_.columns)
    val modern = ts >= lit(java.sql.Timestamp.from(java.time.Instant.parse("1900-01-01T00:00:00Z")))
    val unread = schema.fields.indices.filterNot(read)
    val whole = Seq(
      Some(ts.isNull || !inEventTimeRange(ts, plan)),
      plan.channelColumn.map(c => col(s"`${schema.fields(c).name}`").isNull),
      if (java8) None
      else
        unread
          .map(i => SessionForms.farTimes(col(s"`${schema.fields(i).name}`"), schema.fields(i).dataType))
          .reduceOption(_ || _)
    ).flatten.reduce(_ || _)
    val columns = schema.fields.toSeq.zipWithIndex.map { case (f, i) =>
      val c = col(s"`${f.name}`")
      val kept =
        if (read(i)) c
        else if (i == plan.timestampColumn && !plan.timestampIsLong) when(whole || !modern, c)
        else if (i == plan.timestampColumn) c
        else when(whole, c)
      kept.as(f.name, f.metadata)
    }
    val millis =
      if (plan.timestampIsLong) lit(null).cast(LongType)
      else when(modern && !whole, unix_millis(ts))
    columns :+ millis.as(Combiner.Millis)
  }

  /** A stream's rows grouped by key group: a hash of the key columns (windowAll: one group),
    * sent to the shuffle as its [[KeyGroupLabels]] label so partitions get even shares. The
    * group is a plain `Int`: Spark builds the grouping key's encoders for every state variable
    * and timer in every task, and a primitive's are the cheapest.
    */
  private def keyGrouped(input: DataFrame, plan: Plan, groups: Int): (DataFrame, Column) = {
    val keyGroup =
      if (plan.keys.isWindowAll) lit(0)
      else {
        val group = pmod(hash(plan.keys.groupingColumns: _*), lit(groups))
        element_at(lit(KeyGroupLabels(groups)), group + 1)
      }
    (input, keyGroup)
  }

  /** Whether combinable pipelines pre-aggregate before the shuffle (on unless set to false). */
  def mapSideCombine(df: DataFrame): Boolean =
    df.sparkSession.conf.get(MapSideCombineConf, "true").trim.toLowerCase match {
      case "true" => true
      case "false" => false
      case other =>
        throw new PlanException(s"$MapSideCombineConf must be true or false, got '$other'")
    }

  /** Non-null and inside [[EventTime]]'s range: what may move a watermark. */
  private[spark] def inEventTimeRange(ts: Column, plan: Plan): Column =
    (if (plan.timestampIsLong) ts else unix_millis(ts)).between(EventTime.Min, EventTime.Max)

  private def streaming(
      df: DataFrame,
      policy: TimePolicy,
      plan: Plan,
      layout: OutputLayout,
      checkpoint: Option[String]
  ): DataFrame = {
    var input = df.select(plainColumns(df): _*)
    // Spark's watermark advances from a throw-away copy of the event time; dropping the copy
    // before the operator keeps Spark from filtering late rows, which the engine routes. With
    // channels (and in real-time mode) the engine keeps its own watermarks: Spark has none.
    if (!policy.ownWatermark) plan.watermark.flatMap(_.sparkDelayMillis).foreach { delay =>
      val ts = col(s"`${plan.timestampName}`")
      // Outside the engine's range a time is an error row, and must not overflow Spark's
      // conversion (a task failure on every restart) nor move the watermark: null it here.
      val eventTime = when(inEventTimeRange(ts, plan), if (plan.timestampIsLong) timestamp_millis(ts) else ts)
      input = input
        .withColumn(EventTimeColumn, eventTime)
        .withWatermark(EventTimeColumn, s"$delay milliseconds")
        .drop(EventTimeColumn)
    }
    // A real-time batch's partitions end only with the batch: combining them would hold every
    // row back until then.
    val combined = !policy.realTime && plan.spec.combinable && mapSideCombine(df)
    val stored = KeyGroupCount.at(df.sparkSession, checkpoint)
    // Chosen (or refused) before a fresh checkpoint keeps its count.
    val upstream = SparkShim.operatorsOf(df).map(_.operator)
    val host = HostChoice.of(
      df.sparkSession,
      SparkShim.Operators,
      stored,
      policy.realTime,
      policy.inheritsWatermark,
      upstream,
      plan.watermark.isDefined
    )
    val groupCount = KeyGroupCount.of(df.sparkSession, stored, policy.realTime).count
    val java8 = layout.java8Time
    val (rows, group) =
      if (policy.ownWatermark) {
        val every = if (policy.realTime) Some(summaryInterval(df)) else None
        withChannelSummaries(input, plan, combined, groupCount, java8, every)
      } else keyGrouped(if (combined) combinedInput(input, plan, java8) else input, plan, groupCount)
    val wakes = if (policy.needsClock) Some(WakeReports.register(df.sparkSession)) else None
    val (grouped, keyGroup) = wakes match {
      case None => (rows, group.as(KeyGroup))
      case Some((token, _)) =>
        // Every group that can hold keys: windowAll's one is 0 without channels (keyGrouped).
        val labels =
          if (plan.keys.isWindowAll && !policy.ownWatermark) Array(0) else groupLabels(plan, groupCount)
        (withTicks(rows, group, token, labels), col(KeyGroup))
    }
    val tickColumn = if (wakes.isDefined) grouped.schema.fieldIndex(TickColumn) else -1
    val spec =
      LoopSpec(
        plan.json,
        layout.java8Time || SparkShim.InstantOutput,
        combined,
        groupCount,
        wakes.map(_._2),
        tickColumn,
        policy.mode,
        operator = host.operator
      )
    SparkShim.keyGroupOperator(grouped, keyGroup, spec, plan, layout.unionSchema)
  }

  /** The labels of the key groups that can hold keys (windowAll's one, or all of them). */
  private def groupLabels(plan: Plan, groups: Int): Array[Int] =
    if (plan.keys.isWindowAll) KeyGroupLabels(groups).take(1) else KeyGroupLabels(groups)

  /** The rows with their key group, and the clock's ticks ([[ClockSource]]): a tick becomes a
    * row per key group, every input column null and the tick's time in the last column (null on
    * the input's rows). The source reads one row per tick: a query's input-row count grows by one.
    */
  private def withTicks(rows: DataFrame, group: Column, token: String, labels: Array[Int]): DataFrame = {
    val clock = rows.sparkSession.readStream
      .format(classOf[ClockSource].getName)
      .option("token", token)
      .load()
    val nulls = rows.schema.fields.toSeq.map(f => lit(null).cast(f.dataType).as(f.name))
    val ticks = clock.select(
      nulls :+ explode(lit(labels)).as(KeyGroup) :+ col("at").as(TickColumn): _*
    )
    rows.withColumn(KeyGroup, group).withColumn(TickColumn, lit(null).cast(LongType)).union(ticks)
  }

  /** The channel path's map side ([[ChannelSummaries]]): rows (or pre-aggregated groups) with
    * their channel's id, and per partition one summary row for every key group; summary rows go
    * to the group their label names, the others to their key's group. A real-time pipeline
    * without `channel=` has a channel per source partition (Flink's watermark per split, the
    * valve's minimum over them): partitions reach a group at their own pace, and one watermark
    * for all would turn a slower partition's rows late. Its summaries say how many partitions the
    * batch reads (the map stage's task count), so every one of them holds the watermark back
    * from the group's first summary, before it delivers, as Flink's Kafka source knows its splits.
    * Its map side sends a summary whenever its rows move a channel's largest time
    * (`realTimeEvery`: at most that often, in milliseconds), not only when its partition ends,
    * which is the batch's end.
    */
  private def withChannelSummaries(
      input: DataFrame,
      plan: Plan,
      combined: Boolean,
      groups: Int,
      java8: Boolean,
      realTimeEvery: Option[Long] = None
  ): (DataFrame, Column) = {
    import ChannelSummaries._
    val channelId = plan.channelColumn match {
      case Some(c) => col(s"`${plan.inputSchema.fields(c).name}`").cast(StringType)
      case None => spark_partition_id().cast(StringType)
    }
    val byPartition = plan.channelColumn.isEmpty && realTimeEvery.isDefined
    // Summaries go to every group that can hold keys.
    val labels = groupLabels(plan, groups)
    val planJson = plan.json
    val mapped =
      if (combined) {
        val columns = combinerColumns(plan, java8) :+ channelId.as(ChannelColumn)
        val payload = Combiner.partialSchema(plan)
        val millis = plan.inputSchema.size
        readable(input.select(columns: _*))
          .mapPartitions { rows =>
            val p = PlanDecoder.cached(planJson)
            Combiner.combine(p, rows, millis, Some((millis + 1, labels)))
          }(
            SessionForms.writer(
              nullable(payload).add(ChannelColumn, StringType).add(SummaryColumn, SummarySchema)
            )
          )
      } else {
        val width = plan.inputSchema.size
        val schema =
          nullable(plan.inputSchema).add(ChannelColumn, StringType).add(SummaryColumn, SummarySchema)
        val tsColumn = plan.timestampColumn
        val inputSchema = plan.inputSchema
        readable(
          input.select(
            plainColumns(input) :+ channelId
              .as(ChannelColumn) :+ lit(null).cast(SummarySchema).as(SummaryColumn): _*
          )
        ).mapPartitions { rows =>
          // In real-time mode a summary that closes a window leaves at once; without channel=,
          // summaries name the batch's source partitions, this task's and its siblings.
          val closings = realTimeEvery.flatMap(_ => Closings.of(PlanDecoder.cached(planJson))).orNull
          val tap = new Tap(closings, if (byPartition) TaskContext.get().numPartitions() else 0)
          val forms = new SessionForms(inputSchema) // the times the engine will see
          val tapped = rows.map { read =>
            val row = forms(read)
            // A row the engine cannot take goes to errors, and moves no watermark.
            if (!row.isNullAt(width) && !row.isNullAt(tsColumn) && Rows.unheld(row) == null) {
              val t = Rows.millis(row.get(tsColumn))
              if (EventTime.inRange(t)) tap.see(row.getString(width), t)
            }
            row
          }
          realTimeEvery match {
            case None => tapped ++ tap.summaryRows(labels, width)
            case Some(every) => tap.interleaved(tapped, labels, width, every)
          }
        }(SessionForms.writer(schema))
      }
    val ownGroup =
      if (plan.keys.isWindowAll) lit(labels(0))
      else element_at(lit(labels), pmod(hash(keyColumnsOf(mapped, plan, combined): _*), lit(groups)) + 1)
    (mapped, when(col(SummaryColumn).isNull, ownGroup).otherwise(col(s"$SummaryColumn.group")))
  }

  /** The key columns of a map side's rows: the input's, or the partial rows' leading ones. */
  private def keyColumnsOf(mapped: DataFrame, plan: Plan, combined: Boolean): Seq[Column] =
    if (combined) plan.keys.fields.map(f => mapped.col(s"`${f.name}`"))
    else plan.keys.groupingColumns

  /** `schema` with every top-level field nullable (summary rows fill none of them). */
  private def nullable(schema: StructType): StructType =
    StructType(schema.fields.map(_.copy(nullable = true)))

  /** Bounded data: per key, every element in event-time order (arrival order among equal
    * timestamps), then a watermark of +infinity; processing time stands still at the job's
    * start, and pending processing-time timers fire once at the end.
    */
  private def batch(df: DataFrame, plan: Plan, layout: OutputLayout): DataFrame = {
    val planJson = plan.json
    val java8 = layout.java8Time
    val startTime = System.currentTimeMillis()
    grouped(df.select(plainColumns(df): _*), plan).flatMapGroups { (key: Row, rows: Iterator[Row]) =>
      BatchRunner.run(PlanDecoder.cached(planJson), java8, startTime, key, rows)
    }(SessionForms.writer(layout.unionSchema))
  }
}
