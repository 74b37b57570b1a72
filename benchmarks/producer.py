"""How the benchmarks write their input into Kafka while a system reads it: latency.py's steady
rate (`LatencyProducer`, one producer thread in a JVM of its own, which also writes what every
window must hold) and soak.py's paced mix of on-time, late and bad events (`SoakProducer`, a
thread writing through a KafkaProducer in the session's JVM).

A producer writes and counts; it starts no system and checks no output.
"""

from __future__ import annotations

import json
import random
import subprocess
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession

from benchmarks.systems.soak import (
    BOUND_MS,
    CLOSING,
    END_USER,
    LAG_MS,
    LAGGING,
    LATE_WITHIN,
    LATE_WITHIN_MS,
    LATENESS_MS,
    NORMAL,
    PARTITIONS,
    QUIET,
    USERS,
    VERY_LATE,
    VERY_LATE_MS,
    WINDOW_MS,
    SoakConfig,
)


def produceAtRate(
    classpath: str,
    servers: str,
    topic: str,
    partitions: int,
    rate: int,
    seconds: float,
    keys: int,
    boundMs: int,
    truthPath: str,
) -> dict:
    """LatencyProducer's run (sbt project `flinkBench`): `rate` events a second for `seconds`
    over `keys` keys, each event's time its making time less up to `boundMs` of disorder; its
    truth file, read."""
    subprocess.run(
        [
            "java",
            "-Xmx2g",
            "-XX:+UseParallelGC",
            "-cp",
            classpath,
            "sparkwin.bench.LatencyProducer",
            servers,
            topic,
            str(partitions),
            str(rate),
            str(seconds),
            str(keys),
            str(boundMs),
            truthPath,
        ],
        check=True,
        capture_output=True,
    )
    return json.loads(Path(truthPath).read_text())


def now() -> int:
    return int(time.time() * 1000)


class SoakProducer(threading.Thread):
    """Writes the soak's input at a steady rate through one idempotent KafkaProducer in the local
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
