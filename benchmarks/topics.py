"""Kafka topics as the benchmarks use them: made with the settings a run needs, read from their
first offset (as a stream or whole), their end offsets, and a wait until one stops growing.

Everything goes through the session's JVM (kafka-clients comes with Spark's connector): a
running broker (services.KafkaBroker) and a session with the connector's jars are needed. What
a topic's records mean is the caller's: this module parses no value.
"""

from __future__ import annotations

import time
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from benchmarks.services import endOffsets


def _admin(spark: SparkSession, servers: str) -> Any:
    jvm: Any = spark._jvm
    props = jvm.java.util.Properties()
    props.setProperty("bootstrap.servers", servers)
    return jvm.org.apache.kafka.clients.admin.AdminClient.create(props)


def createInputAndOutput(
    spark: SparkSession, servers: str, run: str, partitions: int
) -> tuple[str, str]:
    """A run's input topic (`partitions` partitions) and output topic (1 partition, each record
    stamped with the broker's clock when it arrives: LogAppendTime), named after the run."""
    jvm: Any = spark._jvm
    inTopic, outTopic = f"in-{run}", f"out-{run}"
    stamped = jvm.java.util.HashMap()
    stamped.put("message.timestamp.type", "LogAppendTime")
    topics = jvm.java.util.ArrayList()
    topics.add(jvm.org.apache.kafka.clients.admin.NewTopic(inTopic, partitions, 1))
    topics.add(jvm.org.apache.kafka.clients.admin.NewTopic(outTopic, 1, 1).configs(stamped))
    client = _admin(spark, servers)
    try:
        client.createTopics(topics).all().get(30, jvm.java.util.concurrent.TimeUnit.SECONDS)
    finally:
        client.close()
    return inTopic, outTopic


def records(reader: Any, servers: str, topic: str) -> DataFrame:
    """The topic's records from its first offset, as Spark's Kafka source gives them (key, value,
    partition, offset, timestamp...): streaming with ``spark.readStream``, whole with
    ``spark.read``."""
    return (
        reader.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )


def ends(spark: SparkSession, servers: str, topic: str, partitions: int) -> dict[str, int]:
    """Each partition's end offset, by the partition's number as text (as Spark's progress names
    them)."""
    offsets = endOffsets(spark, servers, topic, range(partitions))
    return {str(p): int(o) for p, o in offsets.items()}


def reached(end: Any, topic: str, ends: dict[str, int]) -> bool:
    """Whether a query's progress `endOffset` (for its one source) is at or past `ends`."""
    if not end:
        return False
    got = end.get(topic, {}) if isinstance(end, dict) else {}
    return all(int(got.get(p, 0)) >= o for p, o in ends.items())


def hasRecords(spark: SparkSession, servers: str, topic: str) -> bool:
    """Whether a topic of one partition holds a record."""
    return endOffsets(spark, servers, topic, [0])[0] > 0


def awaitQuiet(spark: SparkSession, servers: str, topic: str, quiet: float, limit: float) -> float:
    """Waits until a topic of one partition got nothing new for `quiet` seconds, `limit` at most;
    the seconds waited."""
    began = time.monotonic()
    last, since = -1, time.monotonic()
    while time.monotonic() - began < limit:
        end = endOffsets(spark, servers, topic, [0])[0]
        if end != last:
            last, since = end, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
        time.sleep(0.5)
    return time.monotonic() - began
