"""sparkwin on a real Spark standalone cluster (a master and a worker on 127.0.0.1).

Each driver runs as a subprocess (tests/cluster_job.py): a Kafka stream whose connector comes
from ``spark.jars.packages``, a stream whose executor is killed while it runs, and a job
submitted with ``bin/spark-submit`` that runs a pandas window function on the executors, and
two short soaks (benchmarks/soak.py): a live Kafka stream whose executor and driver are SIGKILLed
while it runs, and one in Spark's real-time mode whose executor is SIGKILLed. Each is checked
against the same pipeline on the same rows as a bounded DataFrame.
"""

from __future__ import annotations

import json
import sys
import uuid
import zipfile
from pathlib import Path
from typing import Any

import cluster_job
import pytest
from kafka_broker import createTopic, produce
from standalone_cluster import APP_CONF, SPARK_HOME, StandaloneCluster

import sparkwin
import sparkwin as sw

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import chaos  # noqa: E402
from benchmarks.systems import soak  # noqa: E402

JOB = str(Path(__file__).resolve().parent / "cluster_job.py")
SUM_COLUMNS = ["user", "window_start", "window_end", "sum_amount", "count", "pane_timing"]


@pytest.fixture(scope="module")
def cluster():
    """One master and one worker for this module's tests: 2 cores an application (APP_CONF), and
    enough for the real-time soak's task slots (one per Kafka and shuffle partition)."""
    with StandaloneCluster(cores=soak.realTimeSlots(), memory="1g") as running:
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


def test_spark_submit_runs_a_pandas_window_function_on_the_executors(
    spark, cluster, tmp_path: Path
) -> None:
    # No --jars for sparkwin: the session adds its jar to the running driver and to the
    # executors, and ships the package to their Python workers. A jar given with --jars stays.
    userJar = tmp_path / "user-lib.jar"
    with zipfile.ZipFile(userJar, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    out = tmp_path / "out"
    command = [
        str(SPARK_HOME / "bin" / "spark-submit"),
        "--master",
        cluster.masterUrl,
        "--jars",
        str(userJar),
        *[f"--conf={k}={v}" for k, v in APP_CONF.items()],
        JOB,
        "process",
        json.dumps({"count": 40, "out": str(out), "report": str(tmp_path / "report.json")}),
    ]
    output = cluster.runDriver(command, timeout=180)
    assert (tmp_path / "report.json").exists(), output
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["master"] == cluster.masterUrl
    names = {jar.rsplit("/", 1)[-1] for jar in report["jars"].split(",")}
    assert {"user-lib.jar", Path(sparkwin.jarPath()).name} <= names

    got = spark.read.parquet(str(out))
    # The executors' Python imported the package sparkwin shipped, not the one installed here.
    modules = {r.module for r in got.select("module").distinct().collect()}
    assert all(f"sparkwin-{sparkwin.__version__}.zip/sparkwin/" in m for m in modules), modules
    rows = cluster_job.events(40)
    bounded = (
        sw.stream(
            spark.createDataFrame(rows, cluster_job.EVENT_DDL),
            "ts",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(cluster_job.BOUND_MS),
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(cluster_job.WINDOW_MS))
        .aggregate(sw.agg.max("amount"), sw.agg.count())
        .toDF()
    )
    assert _rows(got, ["user", "end", "top", "n"]) == _rows(
        bounded, ["user", "window_end", "max_amount", "count"]
    )


def test_a_stream_killed_at_random_loses_and_repeats_nothing(
    spark, kafkaBroker, cluster, tmp_path: Path
) -> None:
    # benchmarks/soak.py in small: a live topic of four partitions (one lagging, one going
    # quiet and coming back, late and bad records), the executor and then the driver SIGKILLed
    # while it runs (the driver started again from its checkpoint), and every output checked
    # against the pipeline run bounded on the whole topic. The long run is in
    # docs/benchmarks.md.
    config = soak.SoakConfig(
        seconds=30,
        rate=20,
        killEvery=12,
        targets=("executor", "driver"),
        minKills=2,
        maxSeconds=600,
        quietSeconds=10,
        talkSeconds=12,
        sampleEvery=15,
        heap=False,
    )
    report = chaos.runSoak(spark, kafkaBroker.bootstrapServers, cluster, config, tmp_path)
    summary = {k: v for k, v in report.items() if k not in ("samples", "config")}
    assert [k["target"] for k in report["kills"]][:2] == ["executor", "driver"], summary
    assert report["driverStarts"] >= 2 and report["eventsInWindows"] > 0, summary
    for count in (
        "lost",
        "duplicated",
        "windowsWrong",
        "panesRepeated",
        "lateRepeated",
        "lateUnexpected",
        "veryLateMissed",
        "errorsLost",
        "errorsRepeated",
        "unaccounted",
    ):
        assert report[count] == 0, (count, summary)
    # Events made ten minutes late reached the late output; bad records the errors output.
    assert report["veryLate"] > 0 and report["lateRows"] == report["veryLate"], summary
    assert report["errors"] == report["errorsExpected"] > 0, summary
    assert {"EARLY", "ON_TIME"} <= set(report["paneTimings"]), summary


def test_a_real_time_stream_whose_executor_is_killed_keeps_every_window_exact(
    spark, kafkaBroker, cluster, tmp_path: Path
) -> None:
    # benchmarks/soak.py --real-time in small: the same live topic (a lagging partition, one
    # going quiet, very late and bad records) read in Spark's real-time mode with a channel per
    # source partition, writing to Kafka; the executor is SIGKILLed while windows fire. Every
    # window is the bounded run's; a row is written twice only as an identical copy (the Kafka
    # sink is at least once, and a batch run again writes again what it had written).
    config = soak.SoakConfig(
        seconds=20,
        rate=20,
        killEvery=12,
        targets=("executor",),
        minKills=1,
        maxKills=1,
        maxSeconds=600,
        quietSeconds=10,
        talkSeconds=12,
        sampleEvery=15,
        heap=False,
        realTime=True,
        batchSeconds=5,
    )
    report = chaos.runSoak(spark, kafkaBroker.bootstrapServers, cluster, config, tmp_path)
    summary = {k: v for k, v in report.items() if k not in ("samples", "config")}
    assert [k["target"] for k in report["kills"]][:1] == ["executor"], summary
    assert report["eventsInWindows"] > 0, summary
    for count in (
        "lost",
        "duplicated",
        "windowsWrong",
        "panesRepeated",
        "lateRepeated",
        "lateUnexpected",
        "veryLateMissed",
        "errorsLost",
        "errorsRepeated",
        "unaccounted",
    ):
        assert report[count] == 0, (count, summary)
    assert report["veryLate"] > 0 and report["lateRows"] == report["veryLate"], summary
    assert report["errors"] == report["errorsExpected"] > 0, summary
    assert set(report["paneTimings"]) == {"ON_TIME"}, summary
    print(f"real-time soak: {summary}")
