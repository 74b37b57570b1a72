"""The driver that tests/test_realtime.py SIGKILLs: a real-time query from a Kafka topic to a
Kafka topic (per user, tumbling 2 s windows, a channel per source partition), in a JVM of its own,
started again on the same checkpoint after the kill.

    python realtime_kill_run.py <bootstrap servers> '<json arguments>'

Arguments: ``source``, ``out`` (topics), ``checkpoint``, ``progress`` (a file: one JSON line per
batch that ended, its id, rows read and end offsets), ``stop`` (a file: once it exists the query
stops and the driver exits 0) and ``batch`` (the real-time batch's length).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from kafka_broker import readTopic
from realtime_run import SCHEMA, realTimeSession

import sparkwin as sw

WINDOW_MS = 2_000
DISORDER_MS = 100


def main(servers: str, args: dict[str, Any]) -> None:
    spark = realTimeSession("sparkwin-realtime-kill")
    pipeline = (
        sw.stream(
            readTopic(spark, servers, args["source"], SCHEMA),
            "ts",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(DISORDER_MS),
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(WINDOW_MS))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )
    query = pipeline.writeStream(
        args["checkpoint"],
        {"main": sw.toKafka(args["out"], servers)},
        trigger={"realTime": args["batch"]},
    )
    progress, stop = Path(args["progress"]), Path(args["stop"])
    seen = -1
    while not stop.exists():
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        for report in query.recentProgress:
            if int(report["batchId"]) > seen:
                seen = int(report["batchId"])
                end = report["sources"][0]["endOffset"]
                line = {
                    "batchId": seen,
                    "rows": int(report["numInputRows"]),
                    "endOffset": json.loads(end) if isinstance(end, str) else end,
                }
                with progress.open("a") as f:
                    f.write(json.dumps(line) + "\n")
        time.sleep(0.2)
    query.stop()
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]))
