"""latency.py's systems: each reads the producer's events from an input topic of `PARTITIONS`
partitions and writes a row `key,start,end,count,sum` per window to an output topic, with a
watermark bound of `BOUND_MS`.

- `sparkwin-mb`, `sparkwin-mb-1s`: the pipeline's toDF(checkpointLocation=...) in micro-batch
  mode, append, no trigger interval or a 1 s one; `sparkwin-valve-1s` the same with a watermark
  per Kafka partition (`channel="partition"`, the valve's minimum, as Flink's); `sparkwin-rt` in
  real-time mode;
- `spark-mb`, `spark-mb-1s`: `groupBy(key, window(...))` with `withWatermark`, append;
  `spark-rt`: the same in real-time mode, update mode only (a row per change of a window);
- `flink`: LatencyFlinkJob, a DataStream job on a local MiniCluster (parallelism 2).

`readPanes` reads an output topic back as the panes latency_stats checks.
"""

from __future__ import annotations

import subprocess
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812
from pyspark.sql.streaming import StreamingQuery

import sparkwin as sw
from benchmarks import topics
from benchmarks.latency_stats import Pane

BOUND_MS = 200
PARTITIONS = 4
SYSTEMS = [
    "sparkwin-mb",
    "sparkwin-mb-1s",
    "sparkwin-valve-1s",
    "sparkwin-rt",
    "spark-mb",
    "spark-mb-1s",
    "spark-rt",
    "flink",
]
WORKLOADS = ["tumbling", "sliding"]
# Which watermark each system closes windows with (latency_stats.closingTimes).
# sparkwin in real-time mode keeps a channel per source partition: the valve's, as Flink.
# sparkwin-valve-1s asks for the same in micro-batch mode (channel="partition").
VALVE = ("flink", "sparkwin-rt", "sparkwin-valve-1s")
WATERMARK = {s: "valve" if s in VALVE else "global" for s in SYSTEMS}


def events(spark: SparkSession, servers: str, topic: str) -> DataFrame:
    """The producer's events as a stream: key, amount, ts (epoch ms), and the Kafka partition."""
    raw = topics.records(spark.readStream, servers, topic)
    f = F.split(F.col("value").cast("string"), ",")
    return raw.select(
        f[0].alias("key"),
        f[1].cast("long").alias("amount"),
        f[2].cast("long").alias("ts"),
        "partition",
    )


def toKafka(df: DataFrame, servers: str, topic: str, checkpoint: str) -> Any:
    """A writer of rows `key,start,end,count,sum` to the output topic, each sent at once."""
    return (
        df.writeStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("topic", topic)
        .option("kafka.linger.ms", "0")
        .option("checkpointLocation", checkpoint)
    )


def sparkwinPanes(
    ev: DataFrame,
    workload: str,
    realTime: bool = False,
    valve: bool = False,
    checkpoint: str | None = None,
) -> DataFrame:
    """With `valve`, a watermark per Kafka partition and their minimum (Flink's; real-time mode
    keeps one per source partition by itself): in micro-batch mode a window then fires in the
    batch that brings its closing event, not the batch after, as Spark's watermark does."""
    windows = (
        sw.TumblingEventTimeWindows.of(1000)
        if workload == "tumbling"
        else sw.SlidingEventTimeWindows.of(10_000, 1000)
    )
    pipeline = (
        sw.stream(
            ev if valve else ev.drop("partition"),
            timestamp="ts",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS),
            **({"channel": "partition", "channels": range(PARTITIONS)} if valve else {}),
        )
        .keyBy("key")
        .window(windows)
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )
    return pipeline.toDF(realTime=realTime, checkpointLocation=checkpoint).select(
        F.concat_ws(
            ",",
            "key",
            F.unix_millis("window_start"),
            F.unix_millis("window_end"),
            "count",
            "sum_amount",
        ).alias("value")
    )


def sparkPanes(ev: DataFrame, workload: str) -> DataFrame:
    size, slide = ("1 second", "1 second") if workload == "tumbling" else ("10 seconds", "1 second")
    return (
        ev.withColumn("ts", F.timestamp_millis("ts"))
        .withWatermark("ts", f"{BOUND_MS} milliseconds")
        .groupBy("key", F.window("ts", size, slide))
        .agg(F.count("*").alias("count"), F.sum("amount").alias("sum"))
        .select(
            F.concat_ws(
                ",",
                "key",
                F.unix_millis("window.start"),
                F.unix_millis("window.end"),
                "count",
                "sum",
            ).alias("value")
        )
    )


def startSparkwinRealTime(
    ev: DataFrame, workload: str, servers: str, topic: str, checkpoint: str, batch: str
) -> StreamingQuery:
    """sparkwin in real-time mode: the pipeline's real-time plan (windows fire inside a batch,
    on the key groups' own watermark) through Spark's Kafka writer in update mode, with the same
    `key,start,end,count,sum` values as the other Spark systems."""
    return (
        toKafka(
            sparkwinPanes(ev, workload, realTime=True, checkpoint=checkpoint),
            servers,
            topic,
            checkpoint,
        )
        .outputMode("update")
        .trigger(realTime=batch)
        .start()
    )


def startSpark(
    system: str,
    spark: SparkSession,
    servers: str,
    inTopic: str,
    outTopic: str,
    workload: str,
    rtBatch: str,
    checkpoint: str,
    intervalMs: int | None = None,
) -> StreamingQuery:
    """One of the Spark systems (all but `flink`), started on the input topic."""
    ev = events(spark, servers, inTopic)
    if system == "sparkwin-rt":
        # Read when the plan is made: the map side's summaries leave at most this often.
        if intervalMs is not None:
            spark.conf.set("spark.sparkwin.realTime.summaryIntervalMs", str(intervalMs))
        else:
            spark.conf.unset("spark.sparkwin.realTime.summaryIntervalMs")
        return startSparkwinRealTime(ev, workload, servers, outTopic, checkpoint, rtBatch)
    panes = (
        sparkwinPanes(ev, workload, valve=system in VALVE, checkpoint=checkpoint)
        if system.startswith("sparkwin")
        else sparkPanes(ev, workload)
    )
    writer = toKafka(panes, servers, outTopic, checkpoint)
    if system.endswith("-rt"):
        return writer.outputMode("update").trigger(realTime=rtBatch).start()
    if system.endswith("-1s"):
        writer = writer.trigger(processingTime="1 second")
    return writer.outputMode("append").start()


def startFlink(
    classpath: str,
    servers: str,
    inTopic: str,
    outTopic: str,
    workload: str,
    intervalMs: int | None = None,
) -> subprocess.Popen:
    """LatencyFlinkJob in a JVM of its own, returned once its job runs; `intervalMs`: its
    periodic watermark interval (Flink's default: 200 ms)."""
    process = subprocess.Popen(
        [
            "java",
            "-Xmx2g",
            "-cp",
            classpath,
            "sparkwin.bench.LatencyFlinkJob",
            servers,
            inTopic,
            outTopic,
            workload,
            str(BOUND_MS),
            "2",
            *([str(intervalMs)] if intervalMs is not None else []),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.strip() == "running":
            return process
    raise RuntimeError(f"the Flink job ended before it ran (exit code {process.wait()})")


def readPanes(
    spark: SparkSession, servers: str, topic: str, updates: bool
) -> tuple[list[Pane], int]:
    """The rows of an output topic with the broker's arrival time, in offset order, and how many
    there were. With `updates` (a row per change of a window: Spark's update mode) only one per
    window: the first that holds its final count and sum (counts only grow), reduced in Spark."""
    rows = (
        topics.records(spark.read, servers, topic)
        .select(
            F.split(F.col("value").cast("string"), ",").alias("f"),
            "offset",
            F.unix_millis("timestamp").alias("at"),
        )
        .select(
            F.col("f")[0].alias("key"),
            *[
                F.col("f")[i].cast("long").alias(n)
                for i, n in [(1, "start"), (2, "end"), (3, "count"), (4, "total")]
            ],
            "offset",
            "at",
        )
    )
    count = rows.count()
    if updates:
        final = F.struct(F.col("count"), -F.col("offset"))
        rows = rows.groupBy("key", "start", "end").agg(
            F.max("count").alias("count"),
            F.max_by("total", final).alias("total"),
            F.max_by("at", final).alias("at"),
            F.min("offset").alias("offset"),
        )
    # Streamed a partition at a time: at a million keys a run has about a million panes.
    panes = [
        Pane(r.key, r.start, r.end, r["count"], r.total, r.at)
        for r in rows.orderBy("offset").toLocalIterator()
    ]
    return panes, count
