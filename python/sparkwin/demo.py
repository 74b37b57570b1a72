"""A real streaming job on local Spark: ``python -m sparkwin.demo``.

A generated clickstream (out of order, with a few very late clicks) lands as JSON files in a
directory; one streaming query reads it file by file and keeps per-user session windows
(5 minutes of inactivity) that fire early every 5 clicks, on time when the session closes,
and late for clicks within 2 minutes of allowed lateness. Clicks later than that go to the
late side output. Results, late clicks and errors are written to parquet, then printed output
by output in order (by window, then user), with the query's counters, and drawn as
``timeline.png`` in the output folder (with matplotlib: ``pip install "sparkwin[plot]"``).

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


def clickstream(spark: Any, out: str, users: int, files: int, seed: int) -> dict[str, Any]:
    """Runs the clickstream job over generated clicks in ``out``: writes each output under
    ``out`` and returns the ``paths`` of the outputs, the stopped ``query``, the ``clicks`` and
    the ``counters`` summed over its micro-batches."""
    for sub in ("clicks", "checkpoint", "sessions", "late", "errors"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    clicks = generateClicks(users, seed)
    writeFiles(clicks, os.path.join(out, "clicks"), files)
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
        for k, v in sw.observedMetrics(progress).items():
            if isinstance(v, int):
                counters[k] = counters.get(k, 0) + v
    return {"paths": paths, "query": query, "clicks": clicks, "counters": counters}


def orderedPanes(sessions: Any) -> Any:
    """Session panes by window, then user; a window's panes in the order they fired (micro-batch,
    then the growing session's end, then pane index: a merged session numbers its panes anew)."""
    return sessions.orderBy("window_start", "user", "batch_id", "window_end", "pane_index")


def report(spark: Any, out: str, run: dict[str, Any]) -> None:
    """Prints each output in its own section, in order, and draws the run's timeline."""
    paths = run["paths"]

    def read(tag: str) -> Any:
        # writeStream writes an output's directory only once a micro-batch has rows for it.
        return spark.read.parquet(paths[tag]) if os.path.exists(paths[tag]) else None

    sessions, lateClicks, errors = read("main"), read("late"), read("errors")
    panes = 0 if sessions is None else sessions.count()
    print(
        f"== main: {panes} session panes, by window then user, each window's panes in the order "
        "they fired\n   (EARLY every 5 clicks, ON_TIME when the session ends, LATE for late "
        "clicks; batch: the micro-batch)"
    )
    if sessions is not None:
        orderedPanes(sessions).select(
            F.date_format("window_start", "HH:mm:ss").alias("start"),
            "user",
            F.date_format("window_end", "HH:mm:ss").alias("end"),
            F.col("batch_id").alias("batch"),
            "pane_timing",
            "pane_index",
            "pane_is_last",
            "clicks",
            F.array_join(F.array_sort("pages"), ",").alias("pages"),
        ).show(max(panes, 1), truncate=False)
    late = 0 if lateClicks is None else lateClicks.count()
    print(f"== late: {late} clicks too late for their session, by time then user")
    if lateClicks is not None:
        lateClicks.select(
            F.date_format("ts", "HH:mm:ss").alias("ts"),
            "user",
            "page",
            F.col("batch_id").alias("batch"),
        ).orderBy("ts", "user").show(max(late, 1), truncate=False)
    print(f"== errors: {0 if errors is None else errors.count()} records the engine could not take")
    if errors is not None:
        errors.orderBy("ts", "user").show(truncate=False)
    counters = run["counters"]
    print("\n== counters (observedMetrics['sparkwin'], summed over micro-batches)")
    print("  " + ", ".join(f"{k}={v}" for k, v in counters.items()))
    open_ = counters.get("windowsOpened", 0) - counters.get("windowsCleaned", 0)
    print(f"  {open_} session windows are still open: the watermark has not passed them yet.")
    if sessions is not None:
        path = os.path.join(out, "timeline.png")
        outputs = {"main": sessions, **({"late": lateClicks} if lateClicks is not None else {})}
        try:
            sw.plot.timeline(outputs, path, query=run["query"])
            print(f"\n== timeline: {path}")
        except ImportError as exc:  # matplotlib is an optional extra
            print(f"\n== timeline: not drawn ({exc})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=12)
    parser.add_argument("--files", type=int, default=16, help="micro-batches")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=None, help="output directory (default: a temp dir)")
    args = parser.parse_args(argv)

    out = args.out or tempfile.mkdtemp(prefix="sparkwin-demo-")
    spark = sw.session("sparkwin-demo", **{"spark.sql.session.timeZone": "UTC"})
    spark.sparkContext.setLogLevel("ERROR")
    run = clickstream(spark, out, args.users, args.files, args.seed)
    print(
        f"\n{len(run['clicks'])} clicks from {args.users} users in {args.files} micro-batches "
        f"-> {out}\n"
    )
    report(spark, out, run)

    print("\n== A Kafka-like stream whose partition 3 replays ten minutes behind the others")
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
