"""soak.py's system: the pipeline it keeps running on the standalone cluster, the Kafka topic it
reads (its input's shape: partitions, lag, bound, event kinds), its outputs, and a run's
settings (`SoakConfig`). benchmarks/soak.py's docstring says why the input is shaped so.

The driver (soak_driver.py) runs `pipeline` live; the check (soak_check.py) runs it bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812

import sparkwin as sw
from benchmarks import topics
from benchmarks.services import APP_CONF

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
    realTime: bool = False  # Spark's real-time mode (see soak.py's docstring)
    batchSeconds: int = 30  # a real-time batch's length
    seed: int = 37
    flushTimeout: float = 240.0


def realTimeSlots() -> int:
    """The task slots a real-time soak needs at once: a task per Kafka and shuffle partition."""
    return PARTITIONS + int(APP_CONF["spark.sql.shuffle.partitions"])


def outputTopic(topic: str, tag: str) -> str:
    """The Kafka topic a real-time soak writes its output `tag` to."""
    return f"{topic}-{tag}"


def source(reader: Any, servers: str, topic: str) -> DataFrame:
    """The topic, streaming (``spark.readStream``) or bounded (``spark.read``), from its first
    offset: the value's fields (null where it is not JSON), its partition and an event id."""
    raw = topics.records(reader, servers, topic)
    return raw.select(
        F.from_json(F.col("value").cast("string"), VALUE_DDL).alias("v"),
        "partition",
        (F.col("partition").cast("long") * ID_SCALE + F.col("offset")).alias("uid"),
    ).select("v.*", "partition", "uid")


def pipeline(df: DataFrame, partitions: int = PARTITIONS, realTime: bool = False) -> sw.Pipeline:
    """Per user, tumbling windows with a watermark per partition, early firings every
    `EARLY_COUNT` events, late firings, allowed lateness and the late output; discarding panes,
    so each event is in one pane. In real-time mode: the on-time pane alone and the late output,
    a channel per source partition without idleness (soak.py's docstring says why)."""
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
