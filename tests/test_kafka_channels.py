"""Per-partition watermarks on a real Kafka topic, read by Spark's Kafka source.

Four partitions: 0 and 1 run at real time, 3 replays ten minutes behind (a backfill) and 2
delivers once, long ago, and goes quiet. Spark's own windows drop most of partition 3's events
as late; sparkwin with ``channel="partition"`` keeps every one, lets partition 2 go idle after
the timeout, and gives what the harness gives when fed the same micro-batches channel by
channel (docs/DESIGN.md, "Channels on a live stream"), also across a restart.

Kafka makes each partition's records visible on their own, even within one produce, so a
micro-batch may catch a produce half-way. With the partitions declared (``channels=``) that
cannot matter: a partition not read yet holds the watermark back. Undeclared, a partition counts
from its first record, so what is late depends on what each batch caught; those tests compare
with the harness fed the offsets each batch really read.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from kafka_broker import createTopic, endOffsets, produce, readTopic
from pyspark.sql import functions as F  # noqa: N812
from sparkstreams import (
    StreamResult,
    awaitProgress,
    canonical,
    channelHarness,
    dataRows,
    runQuery,
)

import sparkwin as sw

VALUE = "user string, amount long, ts long"
BOUND = 1_000
# Longer than a produce-and-process round on a busy 2-core machine (1-3 s; the query's first
# batch with data takes up to 6 s), or the lagging partition would go idle between batches and
# its next events be late, rightly.
IDLE = 8_000
MIN = 60_000
TRIGGER = {"processingTime": "400 milliseconds"}
PARTITIONS = 4


def _batches(count: int) -> list[list[tuple[int, dict]]]:
    out = []
    for b in range(count):
        batch = []
        for part in (0, 1, 3):
            behind = 10 * MIN if part == 3 else 0
            for i in range(3):
                ts = 20 * MIN + b * 30_000 + i * 9_000 - behind
                batch.append(
                    (part, {"user": f"u{(b + i + part) % 3}", "amount": 1 + part, "ts": ts})
                )
        if b == 0:
            batch.append((2, {"user": "old", "amount": 7, "ts": 8 * MIN}))
        out.append(batch)
    return out


def _source(spark, servers: str, topic: str):
    return readTopic(spark, servers, topic, VALUE, "partition")


def _pipeline(df, idle: int | None = IDLE, channels=None) -> sw.Pipeline:
    strategy = sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND)
    if idle is not None:
        strategy = strategy.withIdleness(idle)
    return (
        sw.stream(df, "ts", channel="partition", channels=channels, watermark=strategy)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(MIN))
        .sideOutputLateData("late")
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )


def _feeder(spark, servers, topic, batches, others=()):
    """Produces one batch at a time and waits until the query (and `others`) processed it."""

    def feed(query) -> None:
        for batch in batches:
            produce(spark, servers, topic, [(p, None, v) for p, v in batch])
            latest = _nonEmpty(endOffsets(spark, servers, topic, range(PARTITIONS)))
            # The query runs a micro-batch every interval (its clock for idleness), so
            # processAllAvailable() would never return: wait for the offsets instead.
            awaitProgress(query, lambda end, latest=latest: _offsets(end, topic) == latest)
            for q in others:
                q.processAllAvailable()

    return feed


def _readBatches(result: StreamResult, batches, topic: str) -> list[list[dict]]:
    """The rows of each micro-batch that read data, from the Kafka offsets in its progress (a
    batch may have caught a produce half-way: its offsets say which records it read)."""
    byOffset: dict[tuple[int, int], dict] = {}
    counts: dict[int, int] = {}
    for batch in batches:
        for p, v in batch:
            byOffset[(p, counts.get(p, 0))] = {**v, "partition": p}
            counts[p] = counts.get(p, 0) + 1
    out = []
    for progress in result.progress:
        if not dataRows(progress):
            continue
        source = progress["sources"][0]
        start, end = (_offsets(source["startOffset"], topic), _offsets(source["endOffset"], topic))
        out.append([byOffset[(p, o)] for p in sorted(end) for o in range(start.get(p, 0), end[p])])
    assert sum(map(len, out)) == len(byOffset), "every record produced was read exactly once"
    return out


def _offsets(value, topic: str) -> dict[int, int]:
    parsed = json.loads(value) if isinstance(value, str) else value
    if parsed is None:  # a first batch's start: None, or the JSON text "null"
        return {}
    return _nonEmpty({int(p): int(o) for p, o in parsed[topic].items()})


def _nonEmpty(offsets: dict[int, int]) -> dict[int, int]:
    return {p: o for p, o in offsets.items() if o}


def _expected(
    spark, result: StreamResult, batches, topic: str, idle: int | None = IDLE, channels=None
) -> dict:
    pipeline = _pipeline(spark.createDataFrame([], f"{VALUE}, partition int"), idle, channels)
    read = _readBatches(result, batches, topic)
    h = channelHarness(pipeline, result, read, "partition", lambda m: m - BOUND - 1, idle)
    return {
        "main": h.extractOutput(),
        "late": h.extractSideOutput("late"),
        "errors": h.extractSideOutput("errors"),
    }


def _assertEqual(result: StreamResult, expected: dict) -> None:
    for tag, rows in expected.items():
        assert canonical(result.outputs.get(tag, [])) == canonical(rows), tag


def _native(spark, servers: str, topic: str, checkpoint: Path):
    counts = (
        _source(spark, servers, topic)
        .withColumn("t", F.timestamp_millis("ts"))
        .withWatermark("t", f"{BOUND + 1} milliseconds")
        .groupBy(F.window("t", "1 minute"), "user")
        .agg(F.count(F.lit(1)).alias("n"))
    )
    return (
        counts.writeStream.outputMode("append")
        .format("memory")
        .queryName(f"native_{topic.replace('-', '_')}")
        .option("checkpointLocation", str(checkpoint))
        .start()
    )


def test_a_lagging_partition_keeps_its_events_and_an_idle_one_stops_holding_back(
    spark, kafkaBroker, tmp_path: Path
) -> None:
    servers = kafkaBroker.bootstrapServers
    topic = f"lag-{uuid.uuid4().hex[:8]}"
    createTopic(spark, servers, topic, partitions=PARTITIONS)
    batches = _batches(6)
    native = _native(spark, servers, topic, tmp_path / "native")
    try:
        result = runQuery(
            _pipeline(_source(spark, servers, topic), channels=range(PARTITIONS)),
            tmp_path / "checkpoint",
            _feeder(spark, servers, topic, batches, others=(native,)),
            trigger=TRIGGER,
            linger=IDLE / 1000 + 2,
        )
    finally:
        native.stop()
        spark.catalog.dropTempView(f"native_{topic.replace('-', '_')}")

    expected = _expected(spark, result, batches, topic, channels=range(PARTITIONS))
    _assertEqual(result, expected)
    times = result.batchTimes()
    data = [times[b] for b, n in sorted(result.rowsByBatch.items()) if n]
    gaps = [b - a for a, b in zip(data, data[1:], strict=False)]
    # Late records here mean a round outlasted the idle timeout: partition 3 went idle, rightly.
    assert expected["main"] and expected["late"] == [], f"ms between data batches: {gaps}"
    # The idle partition's one event fired once partition 2 stopped holding the valve.
    assert {(r["user"], r["window_start"]) for r in expected["main"]} >= {("old", 8 * MIN)}

    # Spark's own windows follow the fastest partitions and drop the lagging one's events.
    dropped = sum(
        op["numRowsDroppedByWatermark"] for p in native.recentProgress for op in p["stateOperators"]
    )
    lagging = sum(1 for b in batches for p, _ in b if p == 3)
    assert lagging // 2 <= dropped <= lagging, (dropped, lagging)

    # Batches in which no key group ran (no data, no timer due) report no counters.
    metrics = [p["observedMetrics"]["sparkwin"] for p in result.progress]
    assert sum((m["droppedLate"] or 0) + (m["lateSideOutput"] or 0) for m in metrics) == 0
    reported = [
        ({c["channel"]: c for c in m["channels"]}, m["watermark"])
        for m in metrics
        if m["channels"] is not None
    ]
    # Once partition 2 is idle, the lagging partition 3 holds the stream back, and says so.
    channels, watermark = next((c, wm) for c, wm in reported if c["2"]["idle"])
    assert not channels["3"]["idle"] and watermark == channels["3"]["watermark"]
    assert watermark == min(c["watermark"] for c in channels.values() if not c["idle"])
    # After the linger every partition is quiet: the valve flushed to the furthest one.
    channels, watermark = reported[-1]
    assert all(c["idle"] for c in channels.values())
    assert watermark == max(c["watermark"] for c in channels.values())


@pytest.mark.parametrize("stopAfter", [2, 4])
def test_a_restarted_query_gives_what_an_uninterrupted_run_gives(
    spark, kafkaBroker, tmp_path: Path, stopAfter: int
) -> None:
    servers = kafkaBroker.bootstrapServers
    topic = f"restart-{uuid.uuid4().hex[:8]}"
    createTopic(spark, servers, topic, partitions=PARTITIONS)
    batches = _batches(6)
    checkpoint = tmp_path / "checkpoint"

    def run(part):
        return runQuery(
            _pipeline(_source(spark, servers, topic)),
            checkpoint,
            _feeder(spark, servers, topic, part),
            trigger=TRIGGER,
        )

    first = run(batches[:stopAfter])
    second = run(batches[stopAfter:])
    result = StreamResult.resumed(first, second)
    expected = _expected(spark, result, batches, topic)
    _assertEqual(result, expected)
    assert expected["main"]


def test_declared_partitions_hold_the_watermark_until_they_deliver(
    spark, kafkaBroker, tmp_path: Path
) -> None:
    """Partitions 2 and 3 replay 12 and 10 minutes behind, and their first records reach Kafka
    after the query has read a batch of 0's and 1's. With the topic's partitions declared
    (Flink's Kafka source knows them from the start), nothing is late; counted from their first
    records, as an undeclared column's values are, the backfills would be."""
    servers = kafkaBroker.bootstrapServers
    topic = f"declared-{uuid.uuid4().hex[:8]}"
    createTopic(spark, servers, topic, partitions=PARTITIONS)
    batches = []
    for b in range(5):
        batches.append(
            [
                (
                    p,
                    {
                        "user": f"u{(b + i) % 2}",
                        "amount": 1,
                        "ts": 20 * MIN + b * 30_000 + i * 9_000 - behind,
                    },
                )
                for p, behind in ((0, 0), (1, 0), (2, 12 * MIN), (3, 10 * MIN))
                if b > 0 or not behind
                for i in range(3)
            ]
        )
    result = runQuery(
        _pipeline(_source(spark, servers, topic), idle=None, channels=range(PARTITIONS)),
        tmp_path / "checkpoint",
        _feeder(spark, servers, topic, batches),
        trigger=TRIGGER,
    )
    expected = _expected(spark, result, batches, topic, idle=None, channels=range(PARTITIONS))
    _assertEqual(result, expected)
    assert expected["main"] and expected["late"] == []
    undeclared = _expected(spark, result, batches, topic, idle=None)
    assert {r["partition"] for r in undeclared["late"]} >= {2, 3}
