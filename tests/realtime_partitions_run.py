"""Real-time mode without ``channel=``: every source partition a batch reads holds the watermark
back from the batch's start, before its first row (DESIGN.md, "Real-time mode"), in a JVM of its
own (local[8], as realtime_run.py).

- ``late``: the README's shape, a 4-partition topic written round-robin (3 users, 2 s windows,
  100 ms of disorder), except that partition 3's rows are produced only once a real-time batch
  that read the other three partitions' rows has ended. Partition 3 holds the watermark all that
  time, so no window fires early and every window's count and sum are the producer's.
- ``idle``: partition 3 never delivers; with ``withIdleness`` it goes idle and the windows of the
  other partitions fire, exact.

Run by tests/test_realtime.py as ``python realtime_partitions_run.py <bootstrap servers> <work
dir>``; prints one JSON line: per case, the panes, the producer's truth, and the panes written
before partition 3 delivered.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from kafka_broker import createTopic, endOffsets, readTopic
from realtime_run import SCHEMA, log, panesByWindow, realTimeSession, truthByWindow, writeRecords

import sparkwin as sw

PARTITIONS = 4
LATE = 3  # the partition that starts late (case "late") or never (case "idle")
USERS = 3
WINDOW_MS = 2_000
DISORDER_MS = 100
BATCH = "5 seconds"  # Spark's shortest (realTimeMode.minBatchDuration)
END_USER = "~end"


def roundRobin(count: int) -> list[tuple[int, str, dict[str, Any]]]:
    """Record i to partition i % 4, of user i % 3, at event time 100 ms * i (in order within each
    partition); its amount is i."""
    return [
        (i % PARTITIONS, f"u{i % USERS}", {"user": f"u{i % USERS}", "amount": i, "ts": 100 * i})
        for i in range(count)
    ]


def closing(partitions: range) -> list[tuple[int, str, dict[str, Any]]]:
    """A row far ahead on each partition: it closes every window of the records above."""
    return [(p, END_USER, {"user": END_USER, "amount": 0, "ts": 60_000}) for p in partitions]


def run(spark: Any, servers: str, work: Path, case: str) -> dict[str, Any]:
    tag = f"{case}-{uuid.uuid4().hex[:8]}"
    source, out = f"rtp-in-{tag}", f"rtp-out-{tag}"
    createTopic(spark, servers, source, partitions=PARTITIONS)
    createTopic(spark, servers, out, partitions=1)
    strategy = sw.WatermarkStrategy.forBoundedOutOfOrderness(DISORDER_MS)
    if case == "idle":
        strategy = strategy.withIdleness(2_000)
    pipeline = (
        sw.stream(readTopic(spark, servers, source, SCHEMA), "ts", watermark=strategy)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(WINDOW_MS))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )
    query = pipeline.writeStream(
        str(work / f"chk-{case}"), {"main": sw.toKafka(out, servers)}, trigger={"realTime": BATCH}
    )

    def failed() -> None:
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))

    records = roundRobin(60)  # event times 0..5.9 s: three windows per user
    first = [r for r in records if r[0] != LATE]
    writeRecords(spark, servers, source, first + ([] if case == "late" else closing(range(LATE))))
    ends = endOffsets(spark, servers, source, range(PARTITIONS))
    # A batch that read all of it has ended (its offsets are in a progress report).
    deadline = time.monotonic() + 90
    log(f"{case}: first rows written")
    while not any(_read(p, source, ends) for p in query.recentProgress):
        failed()
        if time.monotonic() > deadline:
            raise TimeoutError(f"no real-time batch read {ends} of {source} within 90 s")
        time.sleep(0.2)
    log(f"{case}: a batch read them")
    before = panesByWindow(spark, servers, out, END_USER)
    expected = truthByWindow(records if case == "late" else first, WINDOW_MS)
    if case == "late":
        writeRecords(spark, servers, source, [r for r in records if r[0] == LATE])
        writeRecords(spark, servers, source, closing(range(PARTITIONS)))
    deadline = time.monotonic() + 90
    seen = panesByWindow(spark, servers, out, END_USER)
    while len(seen) < len(expected) and time.monotonic() < deadline:
        failed()
        time.sleep(0.3)
        seen = panesByWindow(spark, servers, out, END_USER)
    log(f"{case}: {len(seen)} windows of {len(expected)}")
    query.stop()
    return {"panes": seen, "expected": expected, "panesBeforeLatePartition": before}


def _read(progress: Any, topic: str, ends: dict[int, int]) -> bool:
    """Whether a progress report's source read `topic` to `ends` (offsets per partition)."""
    for source in progress["sources"] or []:
        end = source["endOffset"]
        offsets = (json.loads(end) if isinstance(end, str) else end or {}).get(topic, {})
        if all(int(offsets.get(str(p), -1)) >= o for p, o in ends.items()):
            return True
    return False


def main(servers: str, work: Path) -> None:
    spark = realTimeSession("sparkwin-realtime-partitions")
    report = {case: run(spark, servers, work, case) for case in ("late", "idle")}
    print(json.dumps(report))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
