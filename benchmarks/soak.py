"""Soak test (issue 37): a sparkwin pipeline on a standalone Spark cluster reads a live Kafka
topic for a long time while its executor and its driver are killed (SIGKILL) at random; at the
end every output is checked against the same pipeline run bounded on the whole topic, and the
state store's rows, the checkpoint's size and the JVMs' heaps, sampled along the way, show
whether anything grows.

    python benchmarks/soak.py --minutes 30 --json soak.json --plot docs/img/soak.png

What runs (all on 127.0.0.1): a KRaft Kafka broker (tests/kafka_broker.py), a standalone master
and worker started from PySpark's ``bin/spark-class`` (tests/standalone_cluster.py), the driver
(benchmarks/soak_driver.py) as a process of its own, and here a producer thread and the chaos
loop. The harness's own local SparkSession only talks to Kafka (topic, producer, offsets) and
computes the answer at the end.

**The input** (4 partitions, `rate` events a second in all, 8 users, event time = the wall clock
when made, less up to `BOUND_MS` of disorder):

- partition 0 and 1 at real time; partition 2 lags `LAG_MS` behind;
- partition 3 goes quiet for `quietSeconds` (longer than the idle timeout) every cycle and comes
  back, so the valve drops it and takes it back;
- now and then an event `LATE_WITHIN_MS` old (kind 2): behind the watermark most of the time,
  so it fires a late pane, but never past the allowed lateness;
- once the driver has reported a watermark past the run's start, now and then an event ten
  minutes older than the run (kind 3): late under any interleaving, so it must reach the late
  output;
- now and then a bad record (a value that is not JSON, or one without a time): the errors output.

**Why what is late is deterministic.** A micro-batch's rows meet the watermark the previous
batch ended with (docs/DESIGN.md, "Channels on a live stream"), and that watermark is at most the
largest event time produced before the previous batch read its offsets, less the bound. An event
is dropped only if its window's end plus the allowed lateness is at or behind that watermark. Every
event of kinds 1 and 2 is at most `LAG_MS + BOUND_MS` or `LATE_WITHIN_MS + BOUND_MS` older than
the newest event made before it, both well under `LATENESS_MS`, so none can be dropped, however
batches cut the topic, whichever partition goes idle (even the lagging one, when the valve jumps
to the others) and however long a killed driver stays down. Kind 3 events are made only after a
batch ended with a watermark past the run's start, and the watermark never goes back (it is in
the checkpoint), so each is dropped under every interleaving. Whether a kind-2 event fires in a
late pane or in the on-time pane is timing, so the check is on what a window holds in total,
not on its panes: panes are discarding, so each event is in exactly one pane.

**The check.** The pipeline run bounded on the topic read back whole sees no late data (a
bounded run's watermark jumps to +infinity after all of it): per (user, window), its count and
sum of event ids (``partition * 1e9 + offset``) must equal the live run's panes summed plus the
live late output in that window. ``lost`` and ``duplicated`` count the events missing or extra;
pane ids (user, window, pane index) and late and error events must each appear once; every kind 3
event must be in the late output and no other event may be; the errors output must hold exactly
the bounded run's errors. The closing events (user ``~end``, one per partition, far ahead) close
every window and are left out of both sides.

**Real-time mode** (``--real-time``): the query runs in Spark's real-time mode (batches of
``--batch-seconds``) with its default watermark, a channel per source partition (no ``channel=``),
and writes to three Kafka topics; the cluster has a task slot for every Kafka and shuffle
partition. Kafka outputs are at least once: a batch Spark runs again after a kill writes again the
rows it had written, so identical copies are counted (``duplicates``) and left out before the
check, and a pane or a late or error row seen twice with different contents is wrong. That check
needs every pane's contents to be the same in every attempt of a batch, so the pipeline has only
the on-time pane (no early or late firings, no allowed lateness), no kind 2 events (their fate is
timing), and no idleness: a partition's idle clock is processing time kept in the checkpoint, so
after a restart that took longer than the idle timeout every partition goes idle at a key group's
first call and the valve follows the partitions that deliver first (the lagging one's next rows
turn late); without it, the quiet partition holds the windows back until it talks. A kind 1 event
is then never late: every partition holds the watermark from the batch's start, and its own rows
are never further behind it than the bound. Kind 3 events are made once a pane was in the output
and a batch ended after it: every key group's watermark is then past the run's start.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402, N812
from standalone_cluster import APP_CONF  # noqa: E402

import sparkwin as sw  # noqa: E402

DRIVER = ROOT / "benchmarks" / "soak_driver.py"
OUTPUTS = ("main", "late", "errors")
VALUE_DDL = "user string, amount long, ts long"
PARTITIONS = 4
LAGGING, QUIET = 2, 3  # the partition behind the others, the one that goes quiet
USERS = 8
WINDOW_MS = 5_000
BOUND_MS = 1_000
IDLE_MS = 6_000
LAG_MS = 5_000
LATE_WITHIN_MS = 12_000  # kind 2: late, not too late
LATENESS_MS = 30_000  # > LAG_MS + BOUND_MS and LATE_WITHIN_MS + BOUND_MS, with room
VERY_LATE_MS = 10 * 60_000  # kind 3: ten minutes before the run
EARLY_COUNT = 10
END_USER = "~end"
NORMAL, LATE_WITHIN, VERY_LATE, CLOSING = 1, 2, 3, 0  # an event's kind, in `amount`
ID_SCALE = 1_000_000_000

CLUSTER_CONF = {
    **APP_CONF,
    "spark.driver.memory": "768m",
    "spark.executor.extraJavaOptions": "-XX:+UseSerialGC",  # a long run: the full JIT pays
    # Spark keeps 100 batches of state and logs by default; 30 reach their steady size within
    # a soak run on a busy machine (batches of several seconds).
    "spark.sql.streaming.minBatchesToRetain": "30",
    # The soak samples the state's rows (numRowsTotal), which sparkwin.session() stops counting.
    "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows": "true",
}


def source(reader: Any, servers: str, topic: str) -> DataFrame:
    """The topic, streaming (``spark.readStream``) or bounded (``spark.read``), from its first
    offset: the value's fields (null where it is not JSON), its partition and an event id."""
    raw = (
        reader.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    return raw.select(
        F.from_json(F.col("value").cast("string"), VALUE_DDL).alias("v"),
        "partition",
        (F.col("partition").cast("long") * ID_SCALE + F.col("offset")).alias("uid"),
    ).select("v.*", "partition", "uid")


def pipeline(df: DataFrame, partitions: int = PARTITIONS, realTime: bool = False) -> sw.Pipeline:
    """Per user, tumbling windows with a watermark per partition, early firings every
    `EARLY_COUNT` events, late firings, allowed lateness and the late output; discarding panes,
    so each event is in one pane. In real-time mode: the on-time pane alone and the late output,
    a channel per source partition without idleness (the module's docstring says why)."""
    if realTime:
        return (
            sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS))
            .keyBy("user")
            .window(sw.TumblingEventTimeWindows.of(WINDOW_MS))
            .sideOutputLateData("late")
            .aggregate(sw.agg.count(), sw.agg.sum("uid"))
        )
    strategy = sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS).withIdleness(IDLE_MS)
    trigger = (
        sw.AfterWatermark.pastEndOfWindow()
        .withEarlyFirings(sw.AfterPane.elementCountAtLeast(EARLY_COUNT))
        .withLateFirings(sw.AfterPane.elementCountAtLeast(1))
    )
    return (
        sw.stream(df, "ts", channel="partition", channels=range(partitions), watermark=strategy)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(WINDOW_MS))
        .trigger(trigger)
        .accumulationMode("discarding")
        .allowedLateness(LATENESS_MS)
        .sideOutputLateData("late")
        .aggregate(sw.agg.count(), sw.agg.sum("uid"))
    )


@dataclass
class SoakConfig:
    """One soak run's shape."""

    seconds: float = 120.0  # how long the producer runs
    rate: float = 40.0  # events a second, all partitions
    killEvery: float = 40.0  # mean seconds between kills (each 0.5x-1.5x of it)
    killDriverShare: float = 0.5  # the share of kills that hit the driver, not the executor
    targets: tuple[str, ...] = ()  # if given, the kills' targets in turn ("driver", "executor")
    quietSeconds: float = 15.0  # partition 3's silences
    talkSeconds: float = 20.0  # and its talks between them
    minKills: int = 0  # the producer goes on past `seconds` until this many kills
    maxKills: int = 0  # no more kills after this many (0: no limit)
    maxSeconds: float = 3600.0  # and stops here whatever happened
    sampleEvery: float = 10.0
    heap: bool = True  # sample the JVMs' live heap (jcmd GC.run then GC.heap_info)
    triggerMs: int = 1_000
    realTime: bool = False  # Spark's real-time mode (see the module's docstring)
    batchSeconds: int = 30  # a real-time batch's length
    seed: int = 37
    flushTimeout: float = 240.0


def realTimeSlots() -> int:
    """The task slots a real-time soak needs at once: a task per Kafka and shuffle partition."""
    return PARTITIONS + int(APP_CONF["spark.sql.shuffle.partitions"])


def now() -> int:
    return int(time.time() * 1000)


class Producer(threading.Thread):
    """Writes the input at a steady rate through one idempotent KafkaProducer in the local
    session's JVM (so each partition keeps the order events were made in)."""

    def __init__(self, spark: SparkSession, servers: str, topic: str, config: SoakConfig) -> None:
        super().__init__(name="soak-producer", daemon=True)
        self.topic = topic
        self.config = config
        self.random = random.Random(config.seed)
        self.startMs = now()
        self.stopping = threading.Event()
        self.veryLateAllowed = threading.Event()
        self.sent = 0
        self.counts: dict[str, int] = {}
        self.maxTs = 0
        self.error: BaseException | None = None
        jvm = spark._jvm
        props = jvm.java.util.Properties()
        for k, v in {
            "bootstrap.servers": servers,
            "enable.idempotence": "true",
            "acks": "all",
            "linger.ms": "5",
            "key.serializer": "org.apache.kafka.common.serialization.StringSerializer",
            "value.serializer": "org.apache.kafka.common.serialization.StringSerializer",
        }.items():
            props.setProperty(k, v)
        self.jvm = jvm
        self.producer = jvm.org.apache.kafka.clients.producer.KafkaProducer(props)

    def quiet(self, at: float) -> bool:
        cycle = self.config.talkSeconds + self.config.quietSeconds
        return (at - self.startMs / 1000) % cycle >= self.config.talkSeconds

    def send(self, partition: int, value: str, kind: str) -> None:
        record = self.jvm.org.apache.kafka.clients.producer.ProducerRecord(
            self.topic, partition, None, value
        )
        self.producer.send(record)
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def event(self, partition: int, seq: int) -> None:
        r = self.random
        made = now()
        ts = made - r.randrange(BOUND_MS) - (LAG_MS if partition == LAGGING else 0)
        kind, user = NORMAL, f"u{r.randrange(USERS)}"
        if seq % 97 == 13:
            self.send(partition, "not json {" if seq % 2 else json.dumps({"user": user}), "bad")
            return
        if seq % 41 == 7 and not self.config.realTime:
            kind, ts = LATE_WITHIN, made - LATE_WITHIN_MS
        elif seq % 53 == 11 and self.veryLateAllowed.is_set():
            kind, ts = VERY_LATE, self.startMs - VERY_LATE_MS + r.randrange(60_000)
        self.maxTs = max(self.maxTs, ts)
        self.send(partition, json.dumps({"user": user, "amount": kind, "ts": ts}), str(kind))

    def run(self) -> None:
        try:
            began = time.monotonic()
            seq = 0
            while not self.stopping.is_set():
                due = int((time.monotonic() - began) * self.config.rate)
                while seq < due:
                    partition = seq % PARTITIONS
                    if not (partition == QUIET and self.quiet(time.time())):
                        self.event(partition, seq)
                        self.sent += 1
                    seq += 1
                self.stopping.wait(0.05)
            self.producer.flush()
        except BaseException as e:  # noqa: BLE001 - the harness reports it
            self.error = e

    def finish(self) -> None:
        """Stop, then write one closing event per partition, far ahead of every window."""
        self.stopping.set()
        self.join(timeout=60)
        ts = max(self.maxTs, now()) + LATENESS_MS + 10 * WINDOW_MS
        for p in range(PARTITIONS):
            self.send(p, json.dumps({"user": END_USER, "amount": CLOSING, "ts": ts}), "closing")
        self.producer.flush()

    def close(self) -> None:
        self.stopping.set()
        self.join(timeout=60)
        self.producer.close()


def _dirBytes(path: Path) -> int:
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(directory, name))
            except OSError:
                pass
    return total


def _javaPids(groupId: int, marker: bytes) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != groupId:
                continue
            if marker in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except (OSError, ProcessLookupError):
            continue
    return pids


def liveHeap(pid: int) -> int | None:
    """Bytes of heap in use after a full GC (jcmd), or None if the JVM did not answer."""
    try:
        subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=60, check=True)
        text = subprocess.run(
            ["jcmd", str(pid), "GC.heap_info"], capture_output=True, timeout=60, check=True
        ).stdout.decode()
    except (OSError, subprocess.SubprocessError):
        return None
    used = [int(k) for k in re.findall(r"generation\s+total \d+K, used (\d+)K", text)]
    return sum(used) * 1024 if used else None


def readProgress(path: Path) -> list[dict[str, Any]]:
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

    def produced(self, began: float, producer: Producer) -> bool:
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
            "checkpointBytes": _dirBytes(self.checkpoint),
            # State versions the checkpoint keeps (shuffle partition 0), and temporary files
            # that killed tasks left behind.
            "stateVersions": len(list(self.checkpoint.glob("state/0/0/*.changelog"))),
            "strayTmpFiles": len(list(self.checkpoint.rglob(".*.tmp"))),
            "driverHeap": None,
            "executorHeap": None,
        }
        if self.config.heap:
            drivers = _javaPids(self.driver.pid, b"org.apache.spark.deploy.SparkSubmit")
            executors = self.cluster.executorPids()
            row["driverHeap"] = liveHeap(drivers[0]) if drivers else None
            row["executorHeap"] = liveHeap(executors[0]) if executors else None
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


def _endOffsets(spark: SparkSession, servers: str, topic: str) -> dict[str, int]:
    from kafka_broker import endOffsets

    return {str(p): int(o) for p, o in endOffsets(spark, servers, topic, range(PARTITIONS)).items()}


def runSoak(
    spark: SparkSession, servers: str, cluster: Any, config: SoakConfig, work: Path
) -> dict[str, Any]:
    """The whole soak: produce, kill at random, flush, check. Returns the report."""
    from kafka_broker import createTopic

    run = SoakRun(config, cluster, spark, servers, work)
    createTopic(spark, servers, run.topic, partitions=PARTITIONS)
    if config.realTime:
        for tag in OUTPUTS:
            createTopic(spark, servers, outputTopic(run.topic, tag), partitions=1)
    paneSeenAt: float | None = None  # real-time mode: when a pane was first in the output
    nextPaneLook = 0.0
    producer = Producer(spark, servers, run.topic, config)
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
                if _anyPane(spark, servers, run.topic):
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
        ends = _endOffsets(spark, servers, run.topic)
        flushed = time.monotonic()
        while True:
            progress = run.progress()
            if progress and _reached(progress[-1].get("endOffset"), run.topic, ends):
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
        series=summarize(run.samples),
    )
    return report


def outputTopic(topic: str, tag: str) -> str:
    """The Kafka topic a real-time soak writes its output `tag` to."""
    return f"{topic}-{tag}"


def _anyPane(spark: SparkSession, servers: str, topic: str) -> bool:
    """Whether the real-time soak's main output holds a pane (the closing user's come last)."""
    from kafka_broker import endOffsets

    return endOffsets(spark, servers, outputTopic(topic, "main"), [0])[0] > 0


def _reached(end: Any, topic: str, ends: dict[str, int]) -> bool:
    if not end:
        return False
    got = end.get(topic, {}) if isinstance(end, dict) else {}
    return all(int(got.get(p, 0)) >= o for p, o in ends.items())


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(none)"


def _outputs(spark: SparkSession, out: Path, tag: str, like: DataFrame) -> DataFrame:
    directory = out / tag
    if not directory.is_dir() or not any(directory.glob("batch_id=*/*.parquet")):
        return spark.createDataFrame([], like.schema)
    return spark.read.parquet(str(directory))


def _topicOutputs(spark: SparkSession, servers: str, topic: str, like: DataFrame) -> DataFrame:
    """A real-time soak's output topic, each record's JSON value as `like`'s columns."""
    raw = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    return raw.select(F.from_json(F.col("value").cast("string"), like.schema).alias("v")).select(
        "v.*"
    )


def check(
    spark: SparkSession,
    servers: str,
    topic: str,
    out: Path,
    startMs: int,
    realTime: bool = False,
) -> dict[str, Any]:
    """The live run's outputs against the pipeline run bounded on the whole topic. In real-time
    mode identical copies of an output row (at least once) are counted and left out first."""
    whole = source(spark.read, servers, topic).cache()
    bounded = pipeline(whole, realTime=realTime)
    key = ["user", "window_start"]
    expected = (
        bounded.toDF()
        .where(F.col("user") != END_USER)
        .groupBy(*key)
        .agg(F.sum("count").alias("n_exp"), F.sum("sum_uid").alias("uid_exp"))
    )
    duplicates = {}
    if realTime:
        like = {
            "main": bounded.toDF(),
            "late": bounded.getSideOutput("late"),
            "errors": bounded.getSideOutput("errors"),
        }
        outputs = {}
        for tag, shape in like.items():
            copies = _topicOutputs(spark, servers, outputTopic(topic, tag), shape).cache()
            outputs[tag] = copies.distinct().cache()
            duplicates[tag] = copies.count() - outputs[tag].count()
        main = outputs["main"].where(F.col("user") != END_USER)
        late, errors = outputs["late"], outputs["errors"]
    else:
        main = _outputs(spark, out, "main", bounded.toDF()).where(F.col("user") != END_USER).cache()
        late = _outputs(spark, out, "late", whole).cache()
        errors = _outputs(spark, out, "errors", whole)
    lateByWindow = late.select(
        "user",
        F.timestamp_millis(F.floor(F.col("ts") / WINDOW_MS) * WINDOW_MS).alias("window_start"),
        "uid",
    )
    got = (
        main.select(*key, F.col("count").alias("n"), F.col("sum_uid").alias("u"))
        .unionByName(
            lateByWindow.select(*key, F.lit(1).cast("long").alias("n"), F.col("uid").alias("u"))
        )
        .groupBy(*key)
        .agg(F.sum("n").alias("n_got"), F.sum("u").alias("uid_got"))
    )
    joined = expected.join(got, key, "full_outer").fillna(
        0, ["n_exp", "n_got", "uid_exp", "uid_got"]
    )
    totals = joined.agg(
        F.sum(F.greatest(F.col("n_exp") - F.col("n_got"), F.lit(0))).alias("lost"),
        F.sum(F.greatest(F.col("n_got") - F.col("n_exp"), F.lit(0))).alias("duplicated"),
        F.sum(
            ((F.col("n_exp") != F.col("n_got")) | (F.col("uid_exp") != F.col("uid_got"))).cast(
                "int"
            )
        ).alias("windowsWrong"),
        F.count(F.lit(1)).alias("windows"),
        F.sum("n_exp").alias("eventsInWindows"),
    ).first()
    assert totals is not None
    panes = main.count()
    paneIds = main.select(*key, "pane_index").distinct().count()
    lateIds = {r.uid for r in late.select("uid").collect()}
    lateRows = late.count()
    veryLate = {r.uid for r in whole.where(F.col("amount") == VERY_LATE).select("uid").collect()}
    errorIds = [r.uid for r in errors.select("uid").collect()]
    expectedErrors = {r.uid for r in bounded.getSideOutput("errors").select("uid").collect()}
    total = whole.count()
    closing = whole.where(F.col("user") == END_USER).count()
    report = {
        "topicEvents": total,
        "windows": int(totals["windows"] or 0),
        "eventsInWindows": int(totals["eventsInWindows"] or 0),
        "lost": int(totals["lost"] or 0),
        "duplicated": int(totals["duplicated"] or 0),
        "windowsWrong": int(totals["windowsWrong"] or 0),
        "panes": panes,
        "panesRepeated": panes - paneIds,
        "paneTimings": {
            r.pane_timing: r["count"] for r in main.groupBy("pane_timing").count().collect()
        },
        "lateRows": lateRows,
        "lateRepeated": lateRows - len(lateIds),
        "veryLate": len(veryLate),
        "veryLateMissed": len(veryLate - lateIds),
        "lateUnexpected": len(lateIds - veryLate),
        "errors": len(errorIds),
        "errorsExpected": len(expectedErrors),
        "errorsLost": len(expectedErrors - set(errorIds)),
        "errorsRepeated": len(errorIds) - len(set(errorIds)),
        "closingEvents": closing,
        "duplicates": duplicates,
    }
    inPanes = int(main.agg(F.sum("count")).first()[0] or 0)
    report["unaccounted"] = total - closing - inPanes - lateRows - len(errorIds)
    whole.unpersist()
    main.unpersist()
    late.unpersist()
    return report


SERIES = (
    "stateRows",
    "openWindows",
    "stateMemory",
    "checkpointBytes",
    "driverHeap",
    "executorHeap",
)


def summarize(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Each sampled series' min and max, over the whole run and over its second half."""
    out = {}
    half = samples[len(samples) // 2 :]
    for name in SERIES:
        values = [s[name] for s in samples if s.get(name) is not None]
        late = [s[name] for s in half if s.get(name) is not None]
        if values:
            out[name] = {
                "min": min(values),
                "max": max(values),
                "secondHalfMin": min(late) if late else None,
                "secondHalfMax": max(late) if late else None,
            }
    return out


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = report["samples"]
    t = [s["t"] / 60 for s in samples]
    series = [
        ("stateRows", "state store rows", 1),
        ("openWindows", "open windows", 1),
        ("checkpointBytes", "checkpoint (MiB)", 2**20),
        ("stateVersions", "state versions kept", 1),
        ("driverHeap", "driver live heap (MiB)", 2**20),
        ("executorHeap", "executor live heap (MiB)", 2**20),
    ]
    fig, axes = plt.subplots(len(series), 1, figsize=(8, 9), sharex=True)
    for ax, (name, label, scale) in zip(axes, series, strict=True):
        points = [(x, s[name] / scale) for x, s in zip(t, samples, strict=True) if s.get(name)]
        if points:
            ax.plot(*zip(*points, strict=True), marker=".", linewidth=1)
        for kill in report["kills"]:
            ax.axvline(
                kill["t"] / 60,
                color="red" if kill["target"] == "driver" else "orange",
                alpha=0.4,
                linewidth=0.8,
            )
        ax.set_ylabel(label, fontsize=8)
        ax.set_ylim(bottom=0)
    axes[-1].set_xlabel("minutes (red: driver killed, orange: executor killed)")
    fig.suptitle(
        f"sparkwin soak: {report['seconds'] / 60:.0f} min, {len(report['kills'])} kills, "
        f"lost {report['lost']}, duplicated {report['duplicated']}",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--kill-every", type=float, default=120.0, help="mean seconds")
    parser.add_argument("--sample-every", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--real-time", action="store_true", help="Spark's real-time mode")
    parser.add_argument("--batch-seconds", type=int, default=30, help="a real-time batch")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    from kafka_broker import KafkaBroker, connectorJars
    from standalone_cluster import StandaloneCluster

    config = SoakConfig(
        seconds=args.minutes * 60,
        rate=args.rate,
        killEvery=args.kill_every,
        quietSeconds=40.0,
        talkSeconds=80.0,
        sampleEvery=args.sample_every,
        triggerMs=2_000,
        realTime=args.real_time,
        batchSeconds=args.batch_seconds,
        seed=args.seed,
        # A real-time restart starts a query and a batch on a cold executor: minutes when busy.
        flushTimeout=600.0 if args.real_time else 240.0,
    )
    spark = sw.session(
        appName="sparkwin-soak-harness",
        master="local[1]",
        **{
            "spark.jars": ",".join(connectorJars()),
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.driver.memory": "1g",
            "spark.sparkwin.keyGroups": "2",
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    work = Path(tempfile.mkdtemp(prefix="sparkwin-soak-"))
    try:
        cores = realTimeSlots() if config.realTime else 2
        with KafkaBroker() as broker, StandaloneCluster(cores=cores, memory="1g") as cluster:
            report = runSoak(spark, broker.bootstrapServers, cluster, config, work)
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    report["load"] = os.getloadavg()
    print(json.dumps({k: v for k, v in report.items() if k != "samples"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    if args.plot:
        plot(report, args.plot)
    spark.stop()
    failed = (
        report["lost"] or report["duplicated"] or report["unaccounted"] or report["windowsWrong"]
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
