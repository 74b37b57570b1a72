"""One pipeline, run at once in Spark's real-time mode and in micro-batch mode on the same
Kafka topic, in a JVM of its own: real-time mode needs a task slot for every Kafka partition and
every shuffle partition at once, more than the shared test session's local[2] has.

Run by tests/test_realtime.py as ``python realtime_run.py <bootstrap servers> <work dir>``;
prints one JSON line: each mode's panes, late rows and errors, and when the real-time query's
first window reached its Kafka topic (against its batch's start and length).
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from kafka_broker import connectorJars, createTopic, readTopic
from pyspark.sql import functions as F  # noqa: N812

import sparkwin as sw

SCHEMA = "user string, amount long, ts long"
BATCH_SECONDS = 300  # one real-time batch covers the whole run (stopped inside it), however slow


def realTimeSession(appName: str) -> Any:
    """A session with a task slot for every Kafka and shuffle partition of these scripts (2 + 2)."""
    spark = sw.session(
        appName=appName,
        master="local[8]",
        **{
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.sparkwin.keyGroups": "2",
            "spark.ui.enabled": "false",
            "spark.jars": ",".join(connectorJars()),
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def writeRecords(
    spark: Any, servers: str, topic: str, records: list[tuple[int, str, dict[str, Any]]]
) -> None:
    """(partition, key, value as JSON) records into `topic`. kafka_broker.produce closes Spark's
    cached producers after writing, which would close the running queries' sinks' producers too
    (one JVM): this writes without that."""
    rows = [(p, key, json.dumps(value)) for p, key, value in records]
    df = spark.createDataFrame(rows, "partition int, key string, value string").coalesce(1)
    df.write.format("kafka").option("kafka.bootstrap.servers", servers).option(
        "topic", topic
    ).save()


def readRecords(spark: Any, servers: str, topic: str) -> list[dict[str, Any]]:
    """Every record of `topic`, its value read as JSON."""
    rows = spark.read.format("kafka").option("kafka.bootstrap.servers", servers)
    rows = rows.option("subscribe", topic).option("startingOffsets", "earliest").load()
    values = rows.selectExpr("CAST(value AS STRING) AS value").collect()
    return [json.loads(r.value) for r in values]


def truthByWindow(
    records: list[tuple[int, str, dict[str, Any]]], windowMs: int
) -> dict[str, dict[str, int]]:
    """What each tumbling window of `windowMs` holds, per "user@window start in ms": the
    records' count and the sum of their amounts (the producer's truth)."""
    out: dict[str, dict[str, int]] = {}
    for _, _, v in records:
        start = v["ts"] // windowMs * windowMs
        window = out.setdefault(f"{v['user']}@{start}", {"count": 0, "sum": 0})
        window["count"] += 1
        window["sum"] += v["amount"]
    return out


def panesByWindow(spark: Any, servers: str, topic: str, leaveOut: str) -> dict[str, list[dict]]:
    """Every pane in `topic` (a count and a sum of amounts) per "user@window start in ms", each
    copy of it (Kafka outputs are at least once); user `leaveOut`'s (closing rows) left out."""
    out: dict[str, list[dict[str, int]]] = {}
    for pane in readRecords(spark, servers, topic):
        if pane["user"] == leaveOut:
            continue
        start = datetime.fromisoformat(pane["window_start"])  # ISO 8601, in the session's UTC
        key = f"{pane['user']}@{round(start.timestamp() * 1000)}"
        out.setdefault(key, []).append({"count": pane["count"], "sum": pane["sum_amount"]})
    return out


def sourceAndSink(spark: Any, servers: str, source: str, out: str) -> Any:
    """Creates a run's input topic (2 partitions) and output topic (1), and streams the input."""
    createTopic(spark, servers, source, partitions=2)
    createTopic(spark, servers, out, partitions=1)
    return readTopic(spark, servers, source, SCHEMA)


def perUserSeconds(stream: Any) -> Any:
    """Each user's tumbling 1 s event-time windows over `stream`, 2 s of disorder allowed."""
    return (
        sw.stream(stream, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(2000))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(1000))
    )


def processingTimeWindows(spark: Any, servers: str, run: str, work: Path, send: Any) -> dict:
    """Processing-time windows in real-time mode: Spark's processing-time timers and the rows of a
    key group fire a window once a row reaches the group after the window's end, while the batch
    runs. Rows come in three waves 4 s apart (windows of 2 s): the third wave fires every window
    of the first two. At 2.5 s apart a CI run once saw 9 rows fired, most likely a late second
    wave sharing a window with the third: 4 s leaves a loaded machine 2 s of slack."""
    source, out = f"rt-pt-{run}", f"rt-pt-out-{run}"
    stream = sourceAndSink(spark, servers, source, out)
    pipeline = (
        sw.stream(stream, "ts")
        .keyBy("user")
        .window(sw.TumblingProcessingTimeWindows.of(2000))
        .aggregate(sw.agg.count())
    )
    query = pipeline.writeStream(
        str(work / "chk-pt"),
        {"main": sw.toKafka(out, servers)},
        trigger={"realTime": f"{BATCH_SECONDS} seconds"},
    )

    def wave(n: int) -> list[tuple[int, str, dict[str, Any]]]:
        return [(p, f"u{p}", {"user": f"u{p}", "amount": 1, "ts": 0}) for p in (0, 1)] * n

    def fired() -> list[dict[str, Any]]:
        return readRecords(spark, servers, out)

    send(wave(3), source)
    time.sleep(4.0)
    send(wave(1), source)
    time.sleep(4.0)
    send(wave(1), source)
    deadline = time.monotonic() + 60
    seen = fired()
    while sum(p["count"] for p in seen) < 8 and time.monotonic() < deadline:
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        time.sleep(0.5)
        seen = fired()
    done = [p["batchId"] for p in query.recentProgress]
    query.stop()
    return {"panes": seen, "batchesDone": done}


def microBatchPlanInRealTime(spark: Any, servers: str, run: str, work: Path, send: Any) -> dict:
    """A pipeline planned for micro-batches (``toDF()``) started by hand in real-time mode: its
    windows would wait for the batch's end, so the query fails at its first rows, naming
    ``toDF(realTime=True)``."""
    source, out = f"rt-mb-{run}", f"rt-mb-out-{run}"
    df = perUserSeconds(sourceAndSink(spark, servers, source, out)).aggregate(sw.agg.count()).toDF()
    query = (
        df.selectExpr("to_json(struct(*)) AS value")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("topic", out)
        .option("checkpointLocation", str(work / "chk-mb-in-rt"))
        .outputMode("update")
        .trigger(realTime=f"{BATCH_SECONDS} seconds")
        .start()
    )
    send(
        [
            (p, f"u{p}", {"user": f"u{p}", "amount": 1, "ts": 100 * i})
            for i in range(3)
            for p in (0, 1)
        ],
        source,
    )
    sent = time.monotonic()
    deadline = sent + 60
    while query.exception() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    failed = query.exception()
    query.stop()
    return {"error": None if failed is None else str(failed), "afterRows": time.monotonic() - sent}


def log(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


def main(servers: str, work: Path) -> None:
    spark = realTimeSession("sparkwin-realtime")
    run = uuid.uuid4().hex[:8]
    source = f"rt-in-{run}"
    createTopic(spark, servers, source, partitions=2)
    modes = {"realTime": {"realTime": f"{BATCH_SECONDS} seconds"}, "microBatch": None}
    topics = {m: {t: f"rt-{m}-{t}-{run}" for t in ("main", "late", "errors")} for m in modes}
    for names in topics.values():
        for topic in names.values():
            createTopic(spark, servers, topic, partitions=1)

    def pipeline() -> Any:
        # `seen`, a timestamp of the amount's microseconds, holds timestamp_micros(Long.MinValue)
        # for one row: a value without a java.sql form, which must reach errors as it came.
        stream = readTopic(spark, servers, source, SCHEMA)
        return (
            perUserSeconds(stream.withColumn("seen", F.timestamp_micros("amount")))
            .sideOutputLateData("late")
            .aggregate(sw.agg.count(), sw.agg.sum("amount"))
        )

    def produce(records: list[tuple[int, str, dict[str, Any]]], topic: str = source) -> None:
        writeRecords(spark, servers, topic, records)

    queries = {}
    started = {}
    for mode, trigger in modes.items():
        outputs = {t: sw.toKafka(topic, servers, key="user") for t, topic in topics[mode].items()}
        outputs["late"] = sw.toKafka(topics[mode]["late"], servers)
        outputs["errors"] = sw.toKafka(topics[mode]["errors"], servers)
        started[mode] = time.monotonic()
        # An hour between summaries: only a summary that closes a window (sent at once) can
        # fire phase 1's windows inside the batch.
        if mode == "realTime":
            spark.conf.set("spark.sparkwin.realTime.summaryIntervalMs", str(3_600_000))
        queries[mode] = pipeline().writeStream(
            str(work / f"chk-{mode}"),
            outputs,
            trigger=trigger or {"processingTime": "500 milliseconds"},
        )
        spark.conf.unset("spark.sparkwin.realTime.summaryIntervalMs")
    rtStart = started["realTime"]
    both = time.monotonic() - rtStart
    log(f"queries started: real-time {started['microBatch'] - rtStart:.1f} s, both {both:.1f} s")

    def records(mode: str, tag: str) -> list[dict[str, Any]]:
        return readRecords(spark, servers, topics[mode][tag])

    def waitFor(mode: str, tag: str, count: int, timeout: float = 90.0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(records(mode, tag)) >= count:
                return time.monotonic()
            for q in queries.values():
                if q.exception() is not None:
                    raise RuntimeError(str(q.exception()))
            time.sleep(0.2)
        raise TimeoutError(f"{mode}/{tag}: fewer than {count} records after {timeout} s")

    # Phase 1: three windows of two users over both partitions, then rows that move the
    # watermark past them (10_000 - 2000 - 1) on both partitions: in real-time mode each source
    # partition is a channel, and the watermark is the slower one's.
    phase1 = [
        (i % 2, f"u{i % 2}", {"user": f"u{i % 2}", "amount": i, "ts": 100 * i}) for i in range(30)
    ]
    produce(phase1)
    produced = time.monotonic()
    log(f"phase 1 produced at {produced - rtStart:.1f} s")
    produce([(p, f"u{p}", {"user": f"u{p}", "amount": 1, "ts": 10_000}) for p in (0, 1)])
    closed = time.monotonic()
    firstSeen = waitFor("realTime", "main", 6)
    batchesDone = [p["batchId"] for p in queries["realTime"].recentProgress]
    # Phase 2, once both modes have closed those windows: a late row, a row without a time, a row
    # whose `seen` Spark holds but java.sql cannot, and rows that close the phase-1 closing rows'
    # windows.
    waitFor("microBatch", "main", 6)
    phase2 = [
        (1, "u1", {"user": "u1", "amount": 7, "ts": 400}),
        (1, "u1", {"user": "u1", "amount": 8, "ts": None}),
        (0, "u0", {"user": "u0", "amount": -(2**63), "ts": 10_500}),
        (1, "u1", {"user": "u1", "amount": 9, "ts": 20_000}),
        (0, "u0", {"user": "u0", "amount": 9, "ts": 20_000}),
    ]
    produce(phase2)
    for mode in modes:
        waitFor(mode, "main", 8)
        waitFor(mode, "late", 1)
        waitFor(mode, "errors", 2)
    for q in queries.values():
        q.stop()
    processing = processingTimeWindows(spark, servers, run, work, produce)
    mismatch = microBatchPlanInRealTime(spark, servers, run, work, produce)
    out = {
        mode: {
            tag: sorted(json.dumps(r, sort_keys=True) for r in records(mode, tag))
            for tag in topics[mode]
        }
        for mode in modes
    }
    print(
        json.dumps(
            {
                "outputs": out,
                "firstWindowAfterClose": firstSeen - closed,
                "firstWindowAfterStart": firstSeen - rtStart,
                "producedAfterStart": produced - rtStart,
                "batchSeconds": BATCH_SECONDS,
                "batchesDoneBeforeFirstWindow": batchesDone,
                "processingTime": processing,
                "microBatchPlanInRealTime": mismatch,
            }
        )
    )
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
