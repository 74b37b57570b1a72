"""A real streaming job on local Spark: ``python -m sparkwin.demo``.

A generated clickstream (out of order, with a few very late clicks) lands as JSON files in a
directory; one streaming query reads it file by file and keeps per-user session windows
(5 minutes of inactivity) that fire early every 5 clicks, on time when the session closes,
and late for clicks within 2 minutes of allowed lateness. Clicks later than that go to the
late side output. Results, late clicks and the query's counters are written to parquet and
printed.

A second, smaller job shows per-partition watermarks: four partitions of which one replays ten
minutes behind the others. Spark's own windows drop most of that partition's events as late;
sparkwin with ``channel="partition"`` keeps every one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import functions as F  # noqa: N812

import sparkwin as sw

START = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
PAGES = ["home", "search", "product", "cart", "checkout", "help"]


def generateClicks(users: int, seed: int) -> list[dict[str, object]]:
    """Clicks in arrival order: sessions per user, jittered up to 20 s out of order, and a
    few clicks that arrive minutes late."""
    rng = random.Random(seed)
    clicks: list[tuple[float, dict[str, object]]] = []
    for u in range(users):
        t = START + timedelta(seconds=rng.randint(0, 120))
        for _session in range(rng.randint(1, 3)):
            for _ in range(rng.randint(2, 12)):
                t += timedelta(seconds=rng.randint(5, 90))
                click: dict[str, object] = {
                    "user": f"user{u:02d}",
                    "page": rng.choice(PAGES),
                    "ts": t.isoformat(),
                }
                arrival = t.timestamp() + rng.uniform(0, 20)
                if rng.random() < 0.05:  # a phone that was offline for a while
                    arrival += rng.uniform(900, 2400)
                clicks.append((arrival, click))
            t += timedelta(minutes=rng.randint(8, 30))
    clicks.sort(key=lambda c: c[0])
    return [c for _, c in clicks]


def writeFiles(clicks: list[dict[str, object]], directory: str, files: int) -> None:
    """One JSON file per micro-batch, with increasing modification times (arrival order)."""
    os.makedirs(directory, exist_ok=True)
    size = -(-len(clicks) // files)
    base = time.time() - 3600
    for i in range(files):
        path = os.path.join(directory, f"clicks-{i:03d}.json")
        with open(path, "w") as f:
            for click in clicks[i * size : (i + 1) * size]:
                f.write(json.dumps(click) + "\n")
        os.utime(path, (base + i, base + i))


def laggingPartitions(spark: Any, directory: str, batches: int = 6) -> dict[str, int]:
    """Streams events from four partitions, partition 3 ten minutes behind, through Spark's own
    tumbling windows and through sparkwin with per-partition watermarks; returns how many of
    the lagging partition's events each let through."""
    rows = []
    for b in range(batches):
        batch = []
        for part in range(4):
            behind = 600_000 if part == 3 else 0
            for i in range(4):
                ts = 1_800_000 + b * 30_000 + i * 7_000 - behind
                batch.append({"user": f"u{(b + i) % 3}", "ts": ts, "partition": part})
        rows.append(batch)
    source = os.path.join(directory, "partitions")
    writeFiles([r for batch in rows for r in batch], source, batches)
    schema = "user string, ts long, partition int"
    lagging = sum(1 for batch in rows for r in batch if r["partition"] == 3)

    def stream() -> Any:
        return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(source)

    native = (
        stream()
        .withColumn("t", F.timestamp_millis("ts"))
        .withWatermark("t", "5 seconds")
        .groupBy(F.window("t", "1 minute"), "user")
        .count()
    )
    q = native.writeStream.format("noop").outputMode("append").start()
    q.processAllAvailable()
    q.stop()
    dropped = sum(
        op["numRowsDroppedByWatermark"] for p in q.recentProgress for op in p["stateOperators"]
    )
    pipeline = (
        sw.stream(
            stream(),
            "ts",
            channel="partition",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(timedelta(seconds=5)),
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(timedelta(minutes=1)))
        .sideOutputLateData("late")
        .aggregate(sw.agg.count())
    )
    paths = {t: os.path.join(directory, "partitions-" + t) for t in ("main", "late", "errors")}
    query = pipeline.writeStream(os.path.join(directory, "partitions-checkpoint"), paths)
    query.processAllAvailable()
    query.stop()
    late = sum(sw.observedMetrics(p).get("lateSideOutput", 0) for p in query.recentProgress)
    return {"lagging": lagging, "nativeDropped": dropped, "sparkwinLate": late}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=12)
    parser.add_argument("--files", type=int, default=16, help="micro-batches")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=None, help="output directory (default: a temp dir)")
    args = parser.parse_args(argv)

    out = args.out or tempfile.mkdtemp(prefix="sparkwin-demo-")
    for sub in ("clicks", "checkpoint", "sessions", "late", "errors"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    clicks = generateClicks(args.users, args.seed)
    writeFiles(clicks, os.path.join(out, "clicks"), args.files)

    spark = sw.session("sparkwin-demo", **{"spark.sql.session.timeZone": "UTC"})
    spark.sparkContext.setLogLevel("ERROR")
    source = (
        spark.readStream.schema("user string, page string, ts timestamp")
        .option("maxFilesPerTrigger", 1)
        .json(os.path.join(out, "clicks"))
    )
    early = sw.AfterPane.elementCountAtLeast(5)
    late = sw.AfterPane.elementCountAtLeast(1)
    pipeline = (
        sw.stream(
            source,
            "ts",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(timedelta(seconds=30)),
        )
        .keyBy("user")
        .window(sw.EventTimeSessionWindows.withGap(timedelta(minutes=5)))
        .trigger(sw.AfterWatermark.pastEndOfWindow().withEarlyFirings(early).withLateFirings(late))
        .allowedLateness(timedelta(minutes=2))
        .sideOutputLateData("late")
        .aggregate(sw.agg.count().alias("clicks"), sw.agg.collectSet("page").alias("pages"))
    )
    paths = {
        t: os.path.join(out, d)
        for t, d in (("main", "sessions"), ("late", "late"), ("errors", "errors"))
    }
    query = pipeline.writeStream(os.path.join(out, "checkpoint"), paths)
    query.processAllAvailable()
    query.stop()

    counters: dict[str, int] = {}
    for progress in query.recentProgress:
        for k, v in progress["observedMetrics"].get("sparkwin", {}).asDict().items():
            counters[k] = counters.get(k, 0) + int(v)
    print(
        f"\n{len(clicks)} clicks from {args.users} users in {args.files} micro-batches -> {out}\n"
    )
    sessions = spark.read.parquet(paths["main"]).orderBy("user", "window_start", "pane_index")
    print(
        "Session panes (EARLY every 5 clicks, ON_TIME when the session ends, LATE for late clicks):"
    )
    sessions.select(
        "user",
        F.date_format("window_start", "HH:mm:ss").alias("start"),
        F.date_format("window_end", "HH:mm:ss").alias("end"),
        "clicks",
        F.array_join(F.array_sort("pages"), ",").alias("pages"),
        "pane_timing",
        "pane_index",
        "pane_is_last",
    ).show(30, truncate=False)
    lateClicks = spark.read.parquet(paths["late"]) if os.path.exists(paths["late"]) else None
    print("Clicks too late for their session (late side output):")
    if lateClicks is None:
        print("(none)\n")
    else:
        lateClicks.drop("batch_id").orderBy("ts").show(truncate=False)
    print("Counters (observedMetrics['sparkwin'], summed over micro-batches):")
    print("  " + ", ".join(f"{k}={v}" for k, v in counters.items()))
    open_ = counters.get("windowsOpened", 0) - counters.get("windowsCleaned", 0)
    print(f"  {open_} session windows are still open: the watermark has not passed them yet.")

    print("\nA Kafka-like stream whose partition 3 replays ten minutes behind the others:")
    for sub in ("partitions", "partitions-checkpoint", "partitions-main", "partitions-late"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    lag = laggingPartitions(spark, out)
    print(
        f"  Spark's own windows (one watermark): {lag['nativeDropped']} of the lagging "
        f"partition's {lag['lagging']} events dropped as late"
    )
    print(
        "  sparkwin with channel='partition' (a watermark per partition): "
        f"{lag['sparkwinLate']} late"
    )
    spark.stop()


if __name__ == "__main__":
    main()
