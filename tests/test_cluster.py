"""sparkwin on a real Spark standalone cluster (a master and a worker on 127.0.0.1).

Each driver runs as a subprocess (tests/cluster_job.py): a Kafka stream whose connector comes
from ``spark.jars.packages``, a stream whose executor is killed while it runs, and a job
submitted with ``bin/spark-submit`` that runs a pandas window function on the executors. Each
is checked against the same pipeline on the same rows as a bounded DataFrame.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import cluster_job
import pytest
from kafka_broker import createTopic, produce
from standalone_cluster import StandaloneCluster

JOB = str(Path(__file__).resolve().parent / "cluster_job.py")
SUM_COLUMNS = ["user", "window_start", "window_end", "sum_amount", "count", "pane_timing"]


@pytest.fixture(scope="module")
def cluster():
    """One master and one worker (2 cores) for this module's tests."""
    with StandaloneCluster(cores=2, memory="1g") as running:
        yield running


def _rows(df: Any, columns: list[str]) -> list[tuple]:
    return sorted(tuple(r) for r in df.select(*columns).collect())


def _boundedSums(spark: Any, rows: list[dict[str, Any]]) -> list[tuple]:
    """The bounded answer: the same pipeline on the same rows, without the closing event."""
    bounded = cluster_job.sums(spark.createDataFrame(rows, cluster_job.EVENT_DDL)).toDF()
    return _rows(bounded.where(bounded.user != cluster_job.END_USER), SUM_COLUMNS)


def _driver(cluster: StandaloneCluster, job: str, timeout: float, **args: Any) -> str:
    arguments = json.dumps({"master": cluster.masterUrl, "timeout": timeout - 30, **args})
    return cluster.runDriver([sys.executable, JOB, job, arguments], timeout=timeout)


def test_a_kafka_stream_on_a_cluster_gets_the_connector_from_spark_jars_packages(
    spark, kafkaBroker, cluster, tmp_path: Path
) -> None:
    # The connector comes from spark.jars.packages (Ivy), sparkwin's jar from the session: the
    # executors need both. A session that hid the package's jars from them failed the first
    # micro-batch with ClassNotFoundException: ...kafka010.KafkaBatchInputPartition.
    servers = kafkaBroker.bootstrapServers
    topic = f"cluster-{uuid.uuid4().hex[:8]}"
    createTopic(spark, servers, topic, partitions=1)
    rows = cluster_job.events(40)
    produce(spark, servers, topic, [(0, None, row) for row in rows])
    out = tmp_path / "out"
    _driver(
        cluster,
        "kafka",
        timeout=240,
        servers=servers,
        topic=topic,
        out=str(out),
        checkpoint=str(tmp_path / "checkpoint"),
    )
    assert _rows(spark.read.parquet(str(out)), SUM_COLUMNS) == _boundedSums(spark, rows)
