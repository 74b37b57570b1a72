"""The soak test's driver: one process the chaos loop (benchmarks/chaos.py) kills with SIGKILL and
starts again from the same checkpoint.

    python benchmarks/soak_driver.py '<json arguments>'

It makes a session on the standalone cluster (``master``), runs `systems.soak.pipeline` on the
Kafka topic with ``writeStream`` to three directories (main, late, errors), and appends one JSON
line per finished micro-batch to ``progress`` (batch id, offsets read, the valve's watermark, the
state store's rows): the harness reads the watermark and offsets from there. A query that fails
(an executor lost too often) is started again from its checkpoint, as a supervisor would. It
stops cleanly once the file ``stop`` exists.

With ``realTime`` the query runs in Spark's real-time mode (batches of ``batchSeconds``) and writes
to Kafka topics (`soak.outputTopic`); it takes a task slot for every Kafka and shuffle partition,
and starts (again) only once the cluster's executors offer that many.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sparkwin as sw  # noqa: E402
from benchmarks.sessions import soakDriverSession  # noqa: E402
from benchmarks.systems import soak  # noqa: E402


def _record(progress: Any) -> dict[str, Any]:
    source = progress["sources"][0] if progress["sources"] else {}
    end = source.get("endOffset") if hasattr(source, "get") else source["endOffset"]
    if isinstance(end, str):
        end = json.loads(end)
    metrics = sw.observedMetrics(progress)
    operators = progress["stateOperators"] or []
    return {
        "batchId": int(progress["batchId"]),
        "timestamp": str(progress["timestamp"]),
        "at": time.time(),
        "inputRows": int(progress["numInputRows"]),
        "endOffset": end,
        "watermark": metrics.get("watermark"),
        "stateRows": sum(int(op["numRowsTotal"]) for op in operators),
        "stateMemory": sum(int(op["memoryUsedBytes"]) for op in operators),
        "panesFired": metrics.get("panesFired"),
        "windowsOpened": metrics.get("windowsOpened", 0),
        "windowsCleaned": metrics.get("windowsCleaned", 0),
        "durationMs": dict(progress["durationMs"] or {}),
    }


def _awaitSlots(spark: Any, slots: int, stop: Path) -> None:
    """Until the cluster's executors run `slots` tasks at once (an executor killed is replaced)."""
    sc = spark.sparkContext._jsc.sc()
    profile = sc.resourceProfileManager().defaultResourceProfile()
    while sc.maxNumConcurrentTasks(profile) < slots and not stop.exists():
        time.sleep(0.5)


def main(args: dict[str, Any]) -> None:
    realTime = bool(args.get("realTime"))
    spark = soakDriverSession(args["master"], soak.realTimeSlots() if realTime else None)
    out = Path(args["out"])
    stop = Path(args["stop"])
    progressFile = Path(args["progress"])
    if realTime:
        trigger: dict[str, str] = {"realTime": f"{args['batchSeconds']} seconds"}
        outputs: dict[str, Any] = {
            tag: sw.toKafka(soak.outputTopic(args["topic"], tag), args["servers"])
            for tag in soak.OUTPUTS
        }
    else:
        trigger = {"processingTime": f"{args['triggerMs']} milliseconds"}
        outputs = {tag: str(out / tag) for tag in soak.OUTPUTS}
    failures = 0
    while not stop.exists():
        if realTime:
            _awaitSlots(spark, soak.realTimeSlots(), stop)
            if stop.exists():
                break
        stream = soak.source(spark.readStream, args["servers"], args["topic"])
        query = soak.pipeline(stream, args["partitions"], realTime).writeStream(
            args["checkpoint"], outputs, trigger=trigger, queryName="soak"
        )
        seen = -1
        while query.isActive and not stop.exists():
            time.sleep(0.25)
            for progress in query.recentProgress:
                if int(progress["batchId"]) > seen:
                    seen = int(progress["batchId"])
                    with progressFile.open("a") as f:
                        f.write(json.dumps(_record(progress)) + "\n")
        error = query.exception()
        query.stop()
        if error is not None:
            failures += 1
            print(f"query failed ({failures}), starting it again: {str(error)[:2000]}", flush=True)
            time.sleep(1)
    print(json.dumps({"queryFailures": failures}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
