"""run.py's Spark systems on its workloads (benchmarks/workloads.py): sparkwin's pipeline, Spark's
own `window()` / `session_window()`, the applyInPandasWithState implementation, and the floor, a
stateless pass that keeps no row. Each reads the events as a stream of parquet files, one a
micro-batch, and gives rows of (key, window start in ms, value).

`run_spark` streams the files through one of them until all are processed and folds the results
into a fingerprint; run.py, scale.py (through run.py) and cluster.py time it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812

import sparkwin as sw
from benchmarks import fingerprint
from benchmarks.measure import measuredStream
from benchmarks.systems import pandas_windows
from benchmarks.workloads import BOUND_MS, Events, Workload


def sparkwin_pipeline(df: DataFrame, w: Workload) -> sw.Pipeline:
    assigner = {
        "tumbling": lambda: sw.TumblingEventTimeWindows.of(w.size_ms),
        "sliding": lambda: sw.SlidingEventTimeWindows.of(w.size_ms, w.slide_ms),
        "session": lambda: sw.EventTimeSessionWindows.withGap(w.gap_ms),
    }[w.kind]()
    agg = sw.agg.sum("amount") if w.aggregate == "sum" else sw.agg.count()
    channel = "part" if w.channels else None
    strategy = sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS)
    return (
        sw.stream(df, "ts", channel=channel, watermark=strategy)
        .keyBy("key")
        .window(assigner)
        .aggregate(agg.alias("value"))
    )


def sparkwin_windows(df: DataFrame, w: Workload, checkpoint: str | None = None) -> DataFrame:
    """sparkwin's query as a user writes it: given the query's checkpoint, a new one runs on
    flatMapGroupsWithState (docs/DESIGN.md, "Which operator hosts the key groups")."""
    out = sparkwin_pipeline(df, w).toDF(checkpointLocation=checkpoint)
    return out.select("key", F.unix_millis("window_start").alias("start"), "value")


def sparkwin_processor(df: DataFrame, w: Workload, _checkpoint: str | None = None) -> DataFrame:
    """sparkwin on transformWithState: `toDF()` without the checkpoint, as 0.5 ran every stream."""
    return sparkwin_windows(df, w)


def native_windows(df: DataFrame, w: Workload, _checkpoint: str | None = None) -> DataFrame:
    watermarked = df.withWatermark("ts", f"{BOUND_MS + 1} milliseconds")
    window = {
        "tumbling": lambda: F.window("ts", f"{w.size_ms} milliseconds"),
        "sliding": lambda: F.window(
            "ts", f"{w.size_ms} milliseconds", f"{w.slide_ms} milliseconds"
        ),
        "session": lambda: F.session_window("ts", f"{w.gap_ms} milliseconds"),
    }[w.kind]()
    agg = F.sum("amount") if w.aggregate == "sum" else F.count(F.lit(1))
    grouped = watermarked.groupBy(window.alias("w"), "key").agg(agg.alias("value"))
    return grouped.select("key", F.unix_millis("w.start").alias("start"), "value")


def pandas_impl(df: DataFrame, w: Workload, _checkpoint: str | None = None) -> DataFrame:
    watermarked = df.withWatermark("ts", f"{BOUND_MS + 1} milliseconds")
    return pandas_windows.windowed(watermarked, w).select("key", "start", "value")


def floor_pass(df: DataFrame, w: Workload, _checkpoint: str | None = None) -> DataFrame:
    """Reads and projects every event and keeps none: Spark's cost before any windowing."""
    out = df.select("key", F.unix_millis("ts").alias("start"), F.col("amount").alias("value"))
    # On computed values, so no parquet statistics can skip the files' rows.
    return out.where(F.col("start") + F.col("value") < 0)


SPARK_SYSTEMS: dict[str, Callable[[DataFrame, Workload, str], DataFrame]] = {
    "sparkwin": sparkwin_windows,
    "sparkwin-tws": sparkwin_processor,
    "native": native_windows,
    "pandas": pandas_impl,
    "floor": floor_pass,
}


def run_spark(
    spark: SparkSession, events: Events, w: Workload, system: str, measure: bool = False
) -> dict:
    """Streams the files through one system; returns seconds and the result fingerprint (and,
    with `measure`, the time breakdown)."""
    schema = "key string, ts timestamp, amount long" + (", part int" if w.channels else "")
    if w.lagged:
        schema += ", lagged timestamp"
    source = (
        spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(events.directory)
    )
    if w.lagged:  # every system sees the same events, with channel 7 ten minutes behind
        source = source.drop("ts").withColumnRenamed("lagged", "ts")
    checkpoint = tempfile.mkdtemp(
        prefix=f"checkpoint-{system}-", dir=os.path.dirname(events.directory)
    )
    results = SPARK_SYSTEMS[system](source, w, checkpoint)
    totals = [0, 0, 0]

    def fold(batch: DataFrame, _: int) -> None:
        # The flush key is left out here, not in the query: Spark would push such a filter
        # below its aggregation, drop the flush event, and never close the last windows.
        real = batch.where(F.col("key") != events.flush_key)
        for i, v in enumerate(fingerprint.fold(real, F.col("start"))):
            totals[i] += v

    seconds, query, spent = measuredStream(spark, results, fold, checkpoint, measure)
    result = {
        "seconds": seconds,
        "windows": totals[0],
        "sum": totals[1],
        "weighted": fingerprint.wrapped(totals[2]),
        # Events dropped as late: Spark's own count before its stateful operators, sparkwin's.
        "dropped_late": sum(
            op["numRowsDroppedByWatermark"]
            for p in query.recentProgress
            for op in p["stateOperators"]
        )
        + sum(sw.observedMetrics(p).get("droppedLate", 0) for p in query.recentProgress),
    }
    if spent is not None:
        result["breakdown"] = spent
    return result
