"""The Kafka test infrastructure itself: a real broker, read by Spark's Kafka source.

Records go to partitions the test chooses and must come back from exactly those partitions,
in order, through a streaming query; a broker that cannot start must fail fast and say why.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from kafka_broker import (
    BROKER_CLASSPATH,
    BUILD_COMMAND,
    SERVER_JVM_OPTIONS,
    KafkaBroker,
    KafkaBrokerError,
    createTopic,
    endOffsets,
    produce,
)
from pyspark.sql import functions as F  # noqa: N812

NEEDS_BROKER_JARS = pytest.mark.skipif(
    not BROKER_CLASSPATH.is_file(), reason=f"no Kafka jars listed: run `{BUILD_COMMAND}`"
)

VALUE_SCHEMA = "p int, seq int, ts long"


def test_the_kafka_source_reads_each_record_from_the_partition_it_was_written_to(
    spark, kafkaBroker, tmp_path: Path
) -> None:
    servers = kafkaBroker.bootstrapServers
    topic = f"smoke-{uuid.uuid4().hex[:8]}"
    createTopic(spark, servers, topic, partitions=4)
    # Partition 2 stays empty, as an idle partition would. Partitions are interleaved in the
    # write, so each one's order is the producer's doing, not the list's grouping.
    counts = {0: 3, 1: 1, 2: 0, 3: 5}
    records = [
        (p, f"k{p}", {"p": p, "seq": i, "ts": 1_000 * i + p})
        for i in range(max(counts.values()))
        for p in sorted(counts)
        if i < counts[p]
    ]
    assert produce(spark, servers, topic, records) == sum(counts.values())
    assert endOffsets(spark, servers, topic, sorted(counts)) == counts

    stream = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .select(
            "partition",
            "offset",
            F.col("key").cast("string").alias("key"),
            F.from_json(F.col("value").cast("string"), VALUE_SCHEMA).alias("v"),
        )
    )
    name = f"kafka_{topic.replace('-', '_')}"
    query = (
        stream.writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(120), "the query did not finish reading the topic"
        assert query.exception() is None
        rows = spark.sql(f"SELECT * FROM {name}").collect()
    finally:
        query.stop()
        spark.catalog.dropTempView(name)

    byPartition: dict[int, list] = {}
    for row in rows:
        assert row.partition == row.v.p and row.key == f"k{row.partition}", row
        byPartition.setdefault(row.partition, []).append(row)
    assert {p: len(rs) for p, rs in byPartition.items()} == {p: n for p, n in counts.items() if n}
    for p, rs in byPartition.items():
        rs.sort(key=lambda r: r.offset)
        assert [r.offset for r in rs] == list(range(counts[p]))
        assert [r.v.seq for r in rs] == list(range(counts[p]))


@NEEDS_BROKER_JARS
def test_a_broker_that_cannot_start_fails_fast_with_its_log() -> None:
    # Someone else holds the broker's port: the broker exits, and its error is in the message.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        broker = KafkaBroker(port=taken.getsockname()[1], startTimeout=60)
        began = time.monotonic()
        with pytest.raises(KafkaBrokerError, match="exited with code") as failure:
            broker.start()
    assert time.monotonic() - began < 45
    assert "Address already in use" in str(failure.value)
    assert broker.process is None and broker.directory is None


def test_a_broker_run_as_kafkas_start_scripts_run_it_takes_topics(spark, kafkaBroker) -> None:
    # The benchmarks' broker (latency.py --broker server): G1 and the full JIT, where the
    # tests' broker stops at C1 to start fast.
    assert "-XX:TieredStopAtLevel=1" in kafkaBroker.process.args
    with KafkaBroker(jvmOptions=SERVER_JVM_OPTIONS) as broker:
        assert broker.process is not None
        args = broker.process.args
        assert "-XX:+UseG1GC" in args
        assert "-XX:TieredStopAtLevel=1" not in args and "-XX:+UseSerialGC" not in args
        topic = f"server-{uuid.uuid4().hex[:8]}"
        createTopic(spark, broker.bootstrapServers, topic, partitions=2)
        produce(spark, broker.bootstrapServers, topic, [(1, None, {"p": 1, "seq": 0, "ts": 0})])
        assert endOffsets(spark, broker.bootstrapServers, topic, [0, 1]) == {0: 0, 1: 1}


def test_a_broker_that_never_answers_times_out_instead_of_hanging(tmp_path: Path) -> None:
    # A port that accepts connections but never answers, and a process that never exits.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        broker = KafkaBroker(port=silent.getsockname()[1], startTimeout=1, classpath="")
        broker.directory = tmp_path
        broker.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        process = broker.process
        try:
            began = time.monotonic()
            with pytest.raises(KafkaBrokerError, match="did not answer within 1 s"):
                broker.awaitReady(began + 1)
            assert time.monotonic() - began < 10
        finally:
            broker.stop()
    assert process.poll() is not None


def test_a_new_users_session_with_kafka_true_reads_a_topic_into_windows(spark, kafkaBroker) -> None:
    # The README's first step with Kafka, in a process of its own: sw.session(kafka=True) fetches
    # Spark's connector for the running line from Maven Central (no jar listed by hand).
    servers = kafkaBroker.bootstrapServers
    topic = f"first-hour-{uuid.uuid4().hex[:8]}"
    createTopic(spark, servers, topic, partitions=2)
    records = [(i % 2, "u", {"user": "u", "amount": i, "ts": 1_000 * i}) for i in range(1, 6)]
    assert produce(spark, servers, topic, records) == 5
    script = f"""
import sparkwin as sw
from pyspark.sql import functions as F
spark = sw.session(master="local[1]", kafka=True)
events = (spark.read.format("kafka").option("kafka.bootstrap.servers", "{servers}")
          .option("subscribe", "{topic}").load()
          .select(F.from_json(F.col("value").cast("string"), "user string, amount long, ts long")
                  .alias("v")).select("v.*"))
out = (sw.stream(events, "ts").keyBy("user").window(sw.TumblingEventTimeWindows.of(3000))
       .aggregate(sw.agg.sum("amount")).toDF())
print("ROWS", sorted((r.user, r.sum_amount) for r in out.collect()))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert "ROWS [('u', 3), ('u', 12)]" in done.stdout, done.stdout + done.stderr[-4000:]
