package sparkwin.runtime.spark.query

import sparkwin.plan._
import sparkwin.runtime.spark._
import sparkwin.runtime.spark.task.ReplayKeys

import org.apache.spark.sql.{DataFrame, Encoders, Row}
import org.apache.spark.sql.functions.{broadcast, col, lit, monotonically_increasing_id, unix_millis}
import org.apache.spark.sql.types._
import org.apache.spark.storage.StorageLevel

import sparkwin.core.RecordError
import sparkwin.runtime.local._
import sparkwin.core.time.WatermarkStrategy
import sparkwin.runtime.spark.task.{OutputLayout, Rows, SessionForms}

/** A replay's result: the union of all outputs (results carry `fired_at`), the watermark
  * timeline, and what the first pass cost. `unpersist()` releases the cached input.
  */
final class ReplayHandle(
    val union: DataFrame,
    val timeline: WatermarkTimeline,
    val watermarkPassMillis: Long,
    val channelValues: Array[String],
    prepared: DataFrame
) {
  def timelineSize(): Int = timeline.size
  def timelineTimes(): Array[Long] = timeline.positions.map(_.time)
  def timelineWatermarks(): Array[Long] = timeline.watermarks
  def unpersist(): Unit = prepared.unpersist()
}

/** Replaying a bounded DataFrame as the live stream that delivered it would have run.
  *
  * Pass 1 (parallel, then on the driver): each channel's elements, summarised per periodic
  * tick of arrival time, go through the watermark strategy's generators and the valve,
  * giving a monotone watermark timeline. Pass 2 (parallel across keys): each key's elements in
  * arrival order run through the engine with event time following the timeline and processing
  * time following arrival (see [[ReplayDriver]]).
  */
object ReplayRuntime {
  private val Arrival = "__sw_arrival"
  private val Ordinal = "__sw_ordinal"
  private val Channel = "__sw_channel"

  private val SummarySchema = StructType(
    Seq(
      StructField("channel", IntegerType),
      StructField("bucket", LongType),
      StructField("first", ArrayType(LongType)),
      StructField("lastArrival", LongType),
      StructField("maxTimestamp", LongType),
      StructField("markers", ArrayType(ArrayType(LongType)))
    )
  )

  def replay(df: DataFrame, plan: Plan, endOfInput: Boolean): ReplayHandle = {
    PlanRules.refuseReplay(plan, df.isStreaming) // so it has an arrival column and a strategy
    val arrivalIdx = plan.arrivalColumn.get
    val arrivalField = plan.inputSchema.fields(arrivalIdx)
    val strategy = plan.watermark.get
    val spark = df.sparkSession
    val java8 = spark.conf.get("spark.sql.datetime.java8API.enabled", "false").toBoolean
    val firedAtType = if (arrivalField.dataType == TimestampType) TimestampType else LongType
    val layout = new OutputLayout(plan, java8, Some(firedAtType))

    val arrivalMs = arrivalField.dataType match {
      case TimestampType => unix_millis(col(s"`${arrivalField.name}`"))
      case _ => col(s"`${arrivalField.name}`").cast(LongType)
    }
    // Channels: the distinct values, sorted, numbered from 0, then declared ones with no rows.
    val (withChannel, channelValues) = plan.channelColumn match {
      case None => (df.withColumn(Channel, org.apache.spark.sql.functions.lit(0)), Array("0"))
      case Some(c) =>
        val name = plan.inputSchema.fields(c).name
        val distinct = df.select(col(s"`$name`")).where(col(s"`$name`").isNotNull).distinct()
        // In the session's forms (the channels' ids are their text); a value without one makes
        // its rows errors, and no channel.
        val forms = new SessionForms(distinct.schema)
        val values = distinct
          .orderBy(col(s"`$name`"))
          .as[Row](SessionForms.reader(distinct.schema))
          .collect()
          .map(forms)
          .filter(r => Rows.unheld(r) == null)
        val mapping = spark.createDataFrame(
          java.util.Arrays.asList(values.zipWithIndex.map { case (r, i) => Row(r.get(0), i) }: _*),
          StructType(
            Seq(
              StructField("__sw_value", plan.inputSchema.fields(c).dataType),
              StructField(Channel, IntegerType)
            )
          )
        )
        // Declared channels without rows come after: they only hold the valve back until idle.
        val ids = values.map(r => String.valueOf(r.get(0)))
        (
          df.join(broadcast(mapping), df.col(s"`$name`") <=> mapping.col("__sw_value"), "left")
            .drop("__sw_value"),
          ids ++ plan.declaredChannels.filterNot(ids.contains)
        )
    }
    val inputCols = plan.inputSchema.fields.map(f => col(s"`${f.name}`"))
    val prepared = withChannel
      .select(
        (inputCols ++ Seq(
          arrivalMs.as(Arrival),
          col(Channel),
          monotonically_increasing_id().as(Ordinal)
        )).toIndexedSeq: _*
      )
      .persist(StorageLevel.MEMORY_AND_DISK)
    val n = plan.inputSchema.length // arrival, channel, ordinal follow the input's columns

    // Pass 1.
    val started = System.nanoTime()
    val ts = plan.timestampColumn
    val marker = strategy.kind match {
      case WatermarkStrategy.Punctuated(c, _) => c
      case _ => -1
    }
    val interval = strategy.interval
    // What the watermark needs of a row, no more: the other columns are the element pass's (a
    // value there may have no session form, and its row is an error then).
    val markerColumn = if (marker >= 0) col(s"`${plan.inputSchema.fields(marker).name}`") else lit(false)
    val summaries = prepared
      // Times outside the engine's range go to errors in the element pass and move no watermark.
      .where(
        SparkRuntime.inEventTimeRange(col(s"`${plan.timestampName}`"), plan) && col(Arrival).isNotNull && col(
          Channel
        ).isNotNull
      )
      .select(col(s"`${plan.timestampName}`"), markerColumn, col(Arrival), col(Channel), col(Ordinal))
      .groupByKey(r => (r.getInt(3), Activity.bucket(r.getLong(2), interval)))(
        Encoders.tuple(Encoders.scalaInt, Encoders.scalaLong)
      )
      .mapGroups { (group: (Int, Long), rows: Iterator[Row]) =>
        val (channel, bucket) = group
        val s = Activity.summarize(
          channel,
          bucket,
          rows.map { r =>
            val pos = Position.element(r.getLong(2), channel, r.getLong(4))
            (pos, Rows.millis(r.get(0)), !r.isNullAt(1) && r.getBoolean(1))
          }
        )
        def p(x: Position) = Seq(x.time, x.channel.toLong, x.ordinal)
        Row(
          s.channel,
          s.bucket,
          p(s.first),
          s.lastArrival,
          s.maxTimestamp,
          s.markers.map { case (pos, _, max) => p(pos) :+ max }
        )
      }(Encoders.row(SummarySchema))
      .collect()
      .map { r =>
        def pos(s: scala.collection.Seq[Long]) = Position.element(s(0), s(1).toInt, s(2))
        val markers = r.getSeq[scala.collection.Seq[Long]](5).map(m => (pos(m), m(0), m(3)))
        BucketSummary(
          r.getInt(0),
          r.getLong(1),
          pos(r.getSeq[Long](2)),
          r.getLong(3),
          r.getLong(4),
          markers.toSeq
        )
      }
    val punctuated = marker >= 0
    val timeline = WatermarkTimeline.compute(
      strategy,
      channelValues.length,
      Activity.merge(summaries.toSeq, punctuated),
      0L
    )
    val lastArrival = if (summaries.isEmpty) Long.MinValue else summaries.map(_.lastArrival).max
    val passMillis = (System.nanoTime() - started) / 1000000

    // Pass 2.
    val shared = spark.sparkContext.broadcast(timeline)
    val planJson = plan.json
    val union = prepared
      .groupBy(plan.keys.groupingColumns: _*)
      .as[Row, Row](SessionForms.reader(plan.keys.schema), SessionForms.reader(prepared.schema))
      .flatMapGroups { (key: Row, rows: Iterator[Row]) =>
        ReplayKeys.run(
          PlanDecoder.cached(planJson),
          java8,
          firedAtType,
          shared.value,
          lastArrival,
          endOfInput,
          key,
          rows
        )
      }(SessionForms.writer(layout.unionSchema))
    new ReplayHandle(union, timeline, passMillis, channelValues, prepared)
  }
}
