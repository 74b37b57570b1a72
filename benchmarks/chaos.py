"""soak.py's run: the driver (soak_driver.py) started as a process of its own and SIGKILLed at
random, or the cluster's executor killed, while the producer writes; what could grow sampled
along the way; then the flush and the check (soak_check.py).

It drives processes and reads their progress files; what the driver runs is systems/soak.py's.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from benchmarks import measure, topics
from benchmarks.producer import SoakProducer
from benchmarks.services import createTopic
from benchmarks.soak_check import check
from benchmarks.systems.soak import OUTPUTS, PARTITIONS, VERY_LATE, SoakConfig, outputTopic

DRIVER = Path(__file__).resolve().parent / "soak_driver.py"
# The sampled series whose ranges the report gives (`measure.ranges`).
SERIES = (
    "stateRows",
    "openWindows",
    "stateMemory",
    "checkpointBytes",
    "driverHeap",
    "executorHeap",
)


def readProgress(path: Path) -> list[dict[str, Any]]:
    """The driver's progress file: a record per finished batch (soak_driver.py)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:  # a line cut short by a kill
            pass
    return out


@dataclass
class SoakRun:
    """The chaos loop's state: the driver, its restarts, kills and samples."""

    config: SoakConfig
    cluster: Any
    spark: SparkSession
    servers: str
    work: Path
    topic: str = field(default_factory=lambda: f"soak-{uuid.uuid4().hex[:8]}")
    driver: Any = None
    incarnation: int = 0
    kills: list[dict[str, Any]] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)
    driverExits: list[dict[str, Any]] = field(default_factory=list)
    driverLogs: list[str] = field(default_factory=list)

    @property
    def checkpoint(self) -> Path:
        return self.work / "checkpoint"

    @property
    def progressFile(self) -> Path:
        return self.work / "progress.jsonl"

    def startDriver(self) -> None:
        self.incarnation += 1
        args = {
            "master": self.cluster.masterUrl,
            "servers": self.servers,
            "topic": self.topic,
            "partitions": PARTITIONS,
            "checkpoint": str(self.checkpoint),
            "out": str(self.work / "out"),
            "stop": str(self.work / "stop"),
            "progress": str(self.progressFile),
            "triggerMs": self.config.triggerMs,
            "realTime": self.config.realTime,
            "batchSeconds": self.config.batchSeconds,
        }
        log = open(self.work / f"driver-{self.incarnation}.log", "wb")  # noqa: SIM115
        env = self.cluster.env()
        self.driver = subprocess.Popen(
            [sys.executable, str(DRIVER), json.dumps(args)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        log.close()

    def killDriver(self) -> None:
        try:
            os.killpg(self.driver.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.driver.wait()

    def produced(self, began: float, producer: SoakProducer) -> bool:
        """Whether the producer may stop: after `seconds`, `minKills` kills and some events made
        late on purpose, or after `maxSeconds` anyway (a very busy machine)."""
        elapsed = time.monotonic() - began
        if elapsed >= self.config.maxSeconds:
            return True
        return (
            elapsed >= self.config.seconds
            and len(self.kills) >= self.config.minKills
            and producer.counts.get(str(VERY_LATE), 0) >= 3
        )

    def progress(self) -> list[dict[str, Any]]:
        return readProgress(self.progressFile)

    def sample(self, began: float) -> None:
        progress = self.progress()
        last = progress[-1] if progress else {}
        byBatch = {p["batchId"]: p for p in progress}
        row: dict[str, Any] = {
            "t": round(time.monotonic() - began, 1),
            "batches": len(progress),
            "stateRows": last.get("stateRows"),
            "stateMemory": last.get("stateMemory"),
            # Windows opened less windows cleaned, over every batch reported so far (a batch
            # whose line a kill cut off is missing: `unreported` counts them).
            "openWindows": sum(p["windowsOpened"] - p["windowsCleaned"] for p in byBatch.values())
            if progress
            else None,
            "unreported": (max(byBatch) + 1 - len(byBatch)) if byBatch else 0,
            "checkpointBytes": measure.dirBytes(self.checkpoint),
            # State versions the checkpoint keeps (shuffle partition 0), and temporary files
            # that killed tasks left behind.
            "stateVersions": len(list(self.checkpoint.glob("state/0/0/*.changelog"))),
            "strayTmpFiles": len(list(self.checkpoint.rglob(".*.tmp"))),
            "driverHeap": None,
            "executorHeap": None,
        }
        if self.config.heap:
            drivers = measure.javaPids(self.driver.pid, b"org.apache.spark.deploy.SparkSubmit")
            executors = self.cluster.executorPids()
            row["driverHeap"] = measure.liveHeap(drivers[0]) if drivers else None
            row["executorHeap"] = measure.liveHeap(executors[0]) if executors else None
        self.samples.append(row)
        print(f"[soak] {json.dumps(row)}", flush=True)

    def kill(self, began: float, rng: random.Random) -> bool:
        """SIGKILL the driver (then start it again) or the executor; False if there was no
        executor to kill."""
        if self.config.targets:
            target = self.config.targets[len(self.kills) % len(self.config.targets)]
        else:
            target = "driver" if rng.random() < self.config.killDriverShare else "executor"
        at = round(time.monotonic() - began, 1)
        if target == "executor":
            pids = self.cluster.executorPids()
            if not pids:
                return False
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
        else:
            self.killDriver()
            self.startDriver()
        self.kills.append({"t": at, "target": target, "batches": len(self.progress())})
        print(f"[soak] killed the {target} at {at} s", flush=True)
        return True


def runSoak(
    spark: SparkSession, servers: str, cluster: Any, config: SoakConfig, work: Path
) -> dict[str, Any]:
    """The whole soak: produce, kill at random, flush, check. Returns the report."""
    run = SoakRun(config, cluster, spark, servers, work)
    createTopic(spark, servers, run.topic, partitions=PARTITIONS)
    if config.realTime:
        for tag in OUTPUTS:
            createTopic(spark, servers, outputTopic(run.topic, tag), partitions=1)
    paneSeenAt: float | None = None  # real-time mode: when a pane was first in the output
    nextPaneLook = 0.0
    producer = SoakProducer(spark, servers, run.topic, config)
    rng = random.Random(config.seed)
    began = time.monotonic()
    producer.start()
    run.startDriver()
    nextKill = began + config.killEvery * rng.uniform(0.5, 1.5)
    nextSample = began + config.sampleEvery
    batchesAtKill = 0
    try:
        while not run.produced(began, producer):
            time.sleep(0.5)
            if producer.error is not None:
                raise RuntimeError(f"the producer failed: {producer.error}")
            progress = run.progress()
            if config.realTime and paneSeenAt is None and time.monotonic() >= nextPaneLook:
                nextPaneLook = time.monotonic() + 2
                # The main output holds a pane (the closing user's come last).
                if topics.hasRecords(spark, servers, outputTopic(run.topic, "main")):
                    paneSeenAt = time.time()
            if not producer.veryLateAllowed.is_set() and (
                any((p.get("watermark") or -(2**62)) > producer.startMs for p in progress)
                or (paneSeenAt is not None and any(p["at"] > paneSeenAt for p in progress))
            ):
                producer.veryLateAllowed.set()
            if run.driver.poll() is not None:  # it ended by itself: say so, start it again
                run.driverExits.append(
                    {"t": time.monotonic() - began, "code": run.driver.returncode}
                )
                run.startDriver()
            t = time.monotonic()
            if t >= nextSample:
                run.sample(began)
                nextSample = t + config.sampleEvery
            # A kill waits for a batch that read rows after the last one, so the run moves on
            # between kills (a real-time batch on a new executor can end before its tasks read).
            moved = any(p.get("inputRows", 0) > 0 for p in progress[batchesAtKill:])
            spare = not config.maxKills or len(run.kills) < config.maxKills
            if t >= nextKill and moved and spare:
                if run.kill(began, rng):
                    batchesAtKill = len(run.progress())
                    nextKill = time.monotonic() + config.killEvery * rng.uniform(0.5, 1.5)
        producer.finish()
        ends = topics.ends(spark, servers, run.topic, PARTITIONS)
        flushed = time.monotonic()
        while True:
            progress = run.progress()
            if progress and topics.reached(progress[-1].get("endOffset"), run.topic, ends):
                break
            if run.driver.poll() is not None:
                run.driverExits.append(
                    {"t": time.monotonic() - began, "code": run.driver.returncode}
                )
                run.startDriver()
            if time.monotonic() - flushed > config.flushTimeout:
                raise RuntimeError(
                    f"the driver did not read to {ends} within {config.flushTimeout} s:\n"
                    + _tail(work / f"driver-{run.incarnation}.log")
                )
            time.sleep(0.5)
        run.sample(began)
        (work / "stop").touch()
        try:
            run.driver.wait(timeout=120)
        except subprocess.TimeoutExpired:
            run.killDriver()
        seconds = time.monotonic() - began
    finally:
        producer.close()
        if run.driver is not None and run.driver.poll() is None:
            run.killDriver()
    report = check(spark, servers, run.topic, work / "out", producer.startMs, config.realTime)
    progress = run.progress()
    report.update(
        config=asdict(config),
        seconds=round(seconds, 1),
        produced=producer.counts,
        kills=run.kills,
        driverExits=run.driverExits,
        queryFailures=sum(
            _tail(p, 10_000).count("query failed (") for p in work.glob("driver-*.log")
        ),
        driverStarts=run.incarnation,
        batches=len(progress),
        samples=run.samples,
        series=measure.ranges(run.samples, SERIES),
    )
    return report


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(none)"
