"""Shared pytest fixtures: one local SparkSession with the sparkwin jar, and tiny DataFrames.

The DataFrames are empty: builder tests only need their schemas, so no Spark job ever runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pyspark
import pytest
from jvm_options import QUICK_JVM
from kafka_broker import BROKER_CLASSPATH, BUILD_COMMAND, KafkaBroker, connectorJars

import sparkwin
from sparkwin._support import lineFor
from sparkwin.errors import UnsupportedSparkError

# Delta Lake where the running PySpark's line has a release (bin/matrix's older lines): the
# shared session then runs every test with Delta's catalog, as a Delta user's session does.
DELTA = lineFor(pyspark.__version__).delta is not None
# Spark Connect clients where the line has them (4.x); Spark 3.5 refuses them (connectSpark).
CONNECT = lineFor(pyspark.__version__).connect

# The build lists Spark's Kafka connector for Scala 2.13 (Spark 4.x); on Spark 3.5 (Scala 2.12)
# its classes fail to load and break every data source lookup, so that line runs without Kafka.
KAFKA = lineFor(pyspark.__version__).scala == "2.13"

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# Every column type the builder's checks care about, in one schema.
EVENTS_DDL = (
    "ts timestamp, ts_ms long, user string, device string, amount long, price double, "
    "qty int, dec decimal(10,2), gap_ms long, gap_i int, gap_d double, is_marker boolean, "
    "seq long, ch int, day date, tags map<string,int>, arr array<int>, pane_index int"
)


# bin/test's pytest-xdist workers take whole files in collection order: the longest files go
# first, so that neither worker runs one of them alone at the end (the cluster tests take minutes).
LONGEST_FILES_FIRST = (
    "test_install.py",
    "test_cluster.py",
    "test_spark_streaming.py",
    "test_kafka_channels.py",
    "test_realtime.py",
    "test_connect.py",
    "test_aggregates.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        rank = {name: i for i, name in enumerate(LONGEST_FILES_FIRST)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole


def _warehouse() -> str | None:
    """This run's table warehouse: bin/matrix names one per line; each pytest-xdist worker
    takes its own, so two workers never share a table's folder."""
    if warehouse := os.environ.get("SPARKWIN_TEST_WAREHOUSE"):
        return warehouse
    if worker := os.environ.get("PYTEST_XDIST_WORKER"):
        return str(Path(__file__).resolve().parent.parent / "build" / f"test-warehouse-{worker}")
    return None


@pytest.fixture(scope="session")
def spark():
    session = sparkwin.session(
        appName="sparkwin-tests",
        master="local[2]",
        delta=DELTA,
        **{
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.default.parallelism": "2",
            "spark.driver.extraJavaOptions": QUICK_JVM,
            # Two key groups: the streaming tests' keys share groups, as most keys do in
            # production (the default is 128).
            "spark.sparkwin.keyGroups": "2",
            # Spark's Kafka connector, once the build has listed its jars (kafka_broker.py).
            **({"spark.jars": ",".join(jars)} if KAFKA and (jars := connectorJars()) else {}),
            # The Spark Connect server of `connectSpark` (below), if a test asks for it.
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": "0",
            # Runs side by side (bin/matrix's lines, bin/test's pytest-xdist workers) keep their
            # tables apart.
            **({"spark.sql.warehouse.dir": warehouse} if (warehouse := _warehouse()) else {}),
        },
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafkaBroker():
    """A real Kafka broker (one KRaft node on 127.0.0.1), started when a test first asks for
    it and stopped at the end of the session: see kafka_broker.py.
    """
    if not KAFKA:
        pytest.skip(f"the build's Kafka connector is for Spark 4.x, not {pyspark.__version__}")
    if not BROKER_CLASSPATH.is_file():
        pytest.skip(f"no Kafka jars listed: run `{BUILD_COMMAND}` (bin/test does)")
    with KafkaBroker() as broker:
        yield broker


@pytest.fixture(scope="session")
def connectSpark(spark):
    """A Spark Connect session, served from `spark`'s own JVM: one server per test session.

    PySpark's local Connect mode (`builder.remote("local[2]")`) starts a JVM and a classic
    session of its own, and refuses to while `spark` runs; serving Connect from `spark`'s
    SparkContext keeps one JVM for the whole run. The server listens on the loopback address and
    a free port (see `spark`), so test runs side by side do not collide. `sparkwin.configure`
    registered sparkwin's relation plugin with the session.
    """
    if not CONNECT:
        # What runs on this line instead: Connect is refused before anything starts.
        with pytest.raises(UnsupportedSparkError, match=r"Spark Connect needs Spark 4\.0, "):
            sparkwin.session(connect=True)
        pytest.skip(f"PySpark {pyspark.__version__} refuses Spark Connect (asserted)")
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    jvm = spark._jvm
    service = getattr(
        getattr(jvm, "org.apache.spark.sql.connect.service.SparkConnectService$"), "MODULE$"
    )
    service.start(spark.sparkContext._jsc.sc())
    client = ConnectSession.builder.remote(f"sc://127.0.0.1:{service.localPort()}").create()
    yield client
    client.stop()
    service.stop(jvm.scala.Option.empty(), jvm.scala.Option.empty())


@pytest.fixture(params=["classic", "connect"])
def session(request, spark):
    """The classic session, then a Spark Connect session of the same JVM (and catalog)."""
    return spark if request.param == "classic" else request.getfixturevalue("connectSpark")


@pytest.fixture(scope="session")
def extendingJar(spark, tmp_path_factory) -> Path:
    """examples/extending (a user's trigger, assigner, evictor and aggregate in Java) built as
    docs/concepts/extending.md builds it, with javac against the installed sparkwin jar, and put
    on the running session with ``sw.jvm.addJar``.
    """
    javac, jar = shutil.which("javac"), shutil.which("jar")
    assert javac and jar, "the examples need a JDK's javac and jar (sbt's JDK has them)"
    work = tmp_path_factory.mktemp("extending")
    sources = sorted(str(p) for p in (EXAMPLES / "extending" / "src").rglob("*.java"))
    classpath = sparkwin.jarPath()
    subprocess.run(
        [javac, "--release", "17", "-cp", classpath, "-d", str(work / "classes"), *sources],
        check=True,
    )
    built = work / "extending.jar"
    subprocess.run([jar, "cf", str(built), "-C", str(work / "classes"), "."], check=True)
    sparkwin.jvm.addJar(built, spark)
    return built


@pytest.fixture(scope="session")
def events(spark):
    """An empty DataFrame with a column of every type the builder distinguishes."""
    return spark.createDataFrame([], EVENTS_DDL)


@pytest.fixture(scope="session")
def streamingEvents(spark):
    """A streaming DataFrame (the rate source: `timestamp` timestamp, `value` long), never
    started.
    """
    return spark.readStream.format("rate").load()


def planOf(pipeline) -> dict:
    """The plan as the JVM will read it: through the JSON string, not the dict."""
    return json.loads(pipeline.planJson())
