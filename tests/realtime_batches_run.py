"""Real-time mode with short batches: a window's rows arrive in one batch and the rows that close
it in a later one, in a JVM of its own (local[8], as realtime_run.py). In real-time mode a data
row's call leaves its state unwritten until its key group's next summary (DESIGN.md, "Real-time
mode"); the map side's last summary of each partition is what writes it before Spark commits the
batch. If that write were missing, the next batch would start without the first batch's rows
and the pane would count none of them (or never fire).

Run by tests/test_realtime.py as ``python realtime_batches_run.py <bootstrap servers> <work dir>``;
prints one JSON line: the panes, and the batches before and after the window's rows.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from realtime_run import perUserSeconds, readRecords, realTimeSession, sourceAndSink, writeRecords

import sparkwin as sw

BATCH = "5 seconds"


def main(servers: str, work: Path) -> None:
    spark = realTimeSession("sparkwin-realtime-batches")
    run = uuid.uuid4().hex[:8]
    source, out = f"rtb-in-{run}", f"rtb-out-{run}"
    stream = sourceAndSink(spark, servers, source, out)
    pipeline = perUserSeconds(stream).aggregate(sw.agg.count(), sw.agg.sum("amount"))
    query = pipeline.writeStream(
        str(work / "chk"), {"main": sw.toKafka(out, servers)}, trigger={"realTime": BATCH}
    )

    def produce(records: list[tuple[int, str, dict[str, Any]]]) -> None:
        writeRecords(spark, servers, source, records)

    def panes() -> list[dict[str, Any]]:
        return readRecords(spark, servers, out)

    def batchesDone() -> list[int]:
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        return [p["batchId"] for p in query.recentProgress]

    # The window [0, 1000) of u0 and u1, on both partitions. Each partition's first row moves its
    # largest time to 900 (a summary follows at once); the rows after it move nothing, so no
    # summary follows them inside the batch: their state waits for the partition's last summary.
    window = [
        (p, f"u{p}", {"user": f"u{p}", "amount": 1 + i, "ts": 900 if i == 0 else 100 * i})
        for i in range(9)
        for p in (0, 1)
    ]
    produce(window)
    before = batchesDone()
    # Two batches end after the rows were written: the one that read them has committed.
    deadline = time.monotonic() + 40
    while len(batchesDone()) < len(before) + 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    between = batchesDone()
    early = panes()
    # The rows that close the window, in a later batch (both partitions: each holds the watermark).
    produce([(p, f"u{p}", {"user": f"u{p}", "amount": 100, "ts": 10_000}) for p in (0, 1)])
    deadline = time.monotonic() + 30
    seen = panes()
    while len(seen) < 2 and time.monotonic() < deadline:
        batchesDone()
        time.sleep(0.3)
        seen = panes()
    query.stop()
    print(
        json.dumps(
            {
                "panes": seen,
                "panesBeforeClose": early,
                "batchesBeforeRows": before,
                "batchesBeforeClose": between,
                "expected": {
                    f"u{p}": {
                        "count": sum(1 for q, _, _ in window if q == p),
                        "sum": sum(v["amount"] for q, _, v in window if q == p),
                    }
                    for p in (0, 1)
                },
            }
        )
    )
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
