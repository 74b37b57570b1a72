"""How replay scales: N events (default 10M) from 4 channels and 10k keys replayed on
local[2], with the watermark pass timed separately from the per-key pass.

    python benchmarks/replay_scale.py [--events N] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from pyspark.sql import functions as F  # noqa: N812

import sparkwin as sw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    spark = sw.session("sparkwin-replay-scale", **{"spark.sql.shuffle.partitions": "8"})
    spark.sparkContext.setLogLevel("ERROR")
    path = os.path.join(tempfile.mkdtemp(prefix="sparkwin-replay-"), "events")
    # Arrival 1 ms apart; event time = arrival minus up to 2 s of disorder; 4 channels, one of
    # which lags 500 ms behind the others.
    (
        spark.range(args.events)
        .select(
            (F.col("id") % args.keys).cast("string").alias("user"),
            (F.col("id") % 100).alias("amount"),
            F.col("id").alias("arrival"),
            (F.col("id") % 4).cast("int").alias("part"),
        )
        .withColumn(
            "ts",
            F.col("arrival")
            - F.abs(F.hash("arrival") % 2000).cast("long")
            - F.when(F.col("part") == 3, 500).otherwise(0),
        )
        .write.parquet(path)
    )
    df = spark.read.parquet(path)
    strategy = (
        sw.WatermarkStrategy.forBoundedOutOfOrderness(1000)
        .withAutoWatermarkInterval(200)
        .withIdleness(5000)
    )
    pipeline = (
        sw.stream(df, "ts", arrival="arrival", channel="part", watermark=strategy)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(60_000))
        .allowedLateness(1000)
        .sideOutputLateData("late")
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )
    started = time.perf_counter()
    replayed = pipeline.replay()
    first = replayed.watermarkPassSeconds
    results = replayed.toDF()
    windows = results.count()
    late = replayed.getSideOutput("late").count()
    total = time.perf_counter() - started
    replayed.unpersist()
    report = {
        "events": args.events,
        "keys": args.keys,
        "channels": 4,
        "watermark_pass_seconds": round(first, 2),
        "total_seconds": round(total, 2),
        "per_key_pass_seconds": round(total - first, 2),
        "timeline_entries": len(replayed.timeline()),
        "result_rows": windows,
        "late_rows": late,
        "events_per_s": round(args.events / total),
    }
    print(json.dumps(report, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    spark.stop()


if __name__ == "__main__":
    main()
