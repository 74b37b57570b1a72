"""A real Kafka broker for the tests, and Spark's Kafka connector for their SparkSession.

`KafkaBroker` runs one KRaft node (broker and controller in one JVM) on 127.0.0.1 with free
ports, in a temporary directory it removes when it stops. Its jars come from Maven Central
through the build: `bin/sbt kafkaJars/kafkaClasspath` (which bin/test runs) resolves them into
coursier's cache and lists them in target/kafka/:

- broker-classpath.txt: kafka_2.13 and its runtime dependencies, logging through log4j2 to
  server.log in the broker's directory (nothing on the console);
- connector-jars.txt: spark-sql-kafka-0-10 and the jars it needs that PySpark lacks, for
  `spark.jars` (conftest.py adds them to the shared session).

Topics are created with kafka-clients' Admin client through the session's Py4J gateway, and
records are written with a Spark batch write, so the tests need no Python Kafka client.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from jvm_options import QUICK_JVM
from py4j.protocol import Py4JError

REPO = Path(__file__).resolve().parents[1]
KAFKA_JARS_DIR = REPO / "target" / "kafka"
BROKER_CLASSPATH = KAFKA_JARS_DIR / "broker-classpath.txt"
CONNECTOR_JARS = KAFKA_JARS_DIR / "connector-jars.txt"
BUILD_COMMAND = "bin/sbt kafkaJars/kafkaClasspath"

# A small heap and a quick-starting JIT: the broker carries a few test topics, nothing more.
JVM_OPTIONS = [
    "-Xms128m",
    "-Xmx512m",
    *QUICK_JVM.split(),
    "-Djava.awt.headless=true",
]
# What Kafka's own start scripts give a broker (kafka-server-start.sh, kafka-run-class.sh): a
# 1 GB heap, G1 with 20 ms pauses, the full JIT. Benchmarks that push 100k events a second and
# bursts of 10k panes through the broker run it so, as a deployment would.
SERVER_JVM_OPTIONS = [
    "-Xms1g",
    "-Xmx1g",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-Djava.awt.headless=true",
]


class KafkaBrokerError(RuntimeError):
    """The broker could not be prepared, started, or did not answer in time."""


def _readJarList(path: Path) -> list[str]:
    jars = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    missing = [jar for jar in jars if not Path(jar).is_file()]
    if not jars or missing:
        raise KafkaBrokerError(
            f"{path} lists {len(jars)} jars, {len(missing)} of them missing "
            f"(e.g. {missing[:1]}): run `{BUILD_COMMAND}` again to fetch them"
        )
    return jars


def connectorJars() -> list[str]:
    """Spark's Kafka connector jars, or [] when the build has not listed them yet."""
    return _readJarList(CONNECTOR_JARS) if CONNECTOR_JARS.is_file() else []


def brokerClasspath() -> str:
    if not BROKER_CLASSPATH.is_file():
        raise KafkaBrokerError(
            f"{BROKER_CLASSPATH} is missing: run `{BUILD_COMMAND}` (bin/test does) to fetch "
            "the broker's jars from Maven Central"
        )
    return os.pathsep.join(_readJarList(BROKER_CLASSPATH))


def freePort() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def randomClusterId() -> str:
    """A Kafka Uuid as StorageTool takes it: 16 random bytes, URL-safe base64, no padding."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):  # Kafka never makes these: they read as options
            return text


def apiVersionsAnswered(port: int, timeout: float = 1.0) -> bool:
    """Whether a Kafka broker on the port answers an ApiVersions request (v0) without error.

    A broker enables request processing only at the end of its start-up, once its controller
    has registered and unfenced it: an answer means topics can be created.
    """
    correlationId = 7
    clientId = b"sparkwin-tests"
    # Request header v1: api key 18 (ApiVersions), version 0, correlation id, client id.
    request = struct.pack(">hhih", 18, 0, correlationId, len(clientId)) + clientId
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(struct.pack(">i", len(request)) + request)
            head = _readExactly(s, 4)
            (size,) = struct.unpack(">i", head)
            body = _readExactly(s, size)
    except OSError:
        return False
    if len(body) < 6:
        return False
    gotCorrelationId, errorCode = struct.unpack(">ih", body[:6])
    return gotCorrelationId == correlationId and errorCode == 0


def _readExactly(s: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("connection closed")
        data += chunk
    return data


def _logSummary(path: Path, errors: int = 12, tail: int = 12) -> str:
    """The log's first ERROR lines and causes (a failing broker logs its shutdown after them),
    then its last lines.
    """
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(none)"
    if not text:
        return "(empty)"
    firstErrors = [line for line in text if " ERROR " in line or line.startswith("Caused by:")]
    parts = []
    if firstErrors:
        parts += ["(first errors)", *firstErrors[:errors], "(last lines)"]
    return "\n".join(parts + text[-tail:])


class KafkaBroker:
    """One KRaft node (combined broker and controller) on 127.0.0.1.

    Example::

        with KafkaBroker() as broker:
            createTopic(spark, broker.bootstrapServers, "events", partitions=4)

    `start()` formats the storage with a random cluster id, starts ``kafka.Kafka`` and waits
    until the broker answers requests; a broker that exits or stays silent past
    `startTimeout` seconds raises `KafkaBrokerError` with the end of its log. `stop()` ends it
    and removes its directory. `jvmOptions`: the tests' quick-starting JVM (`JVM_OPTIONS`) unless
    given, e.g. `SERVER_JVM_OPTIONS` for a benchmark.
    """

    def __init__(
        self,
        port: int | None = None,
        controllerPort: int | None = None,
        startTimeout: float = 90.0,
        classpath: str | None = None,
        java: str | None = None,
        jvmOptions: Sequence[str] = tuple(JVM_OPTIONS),
    ) -> None:
        self.jvmOptions = list(jvmOptions)
        self.classpath = classpath if classpath is not None else brokerClasspath()
        javaHome = os.environ.get("JAVA_HOME")
        self.java = java or (str(Path(javaHome) / "bin" / "java") if javaHome else "java")
        self._choosesPorts = port is None and controllerPort is None
        self.port = port or freePort()
        self.controllerPort = controllerPort or freePort()
        self.startTimeout = startTimeout
        self.clusterId = randomClusterId()
        self.directory: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.startSeconds: float | None = None

    @property
    def bootstrapServers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> KafkaBroker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _writeConfig(self, directory: Path) -> Path:
        settings = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controllerPort}",
            "listeners": (
                f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controllerPort}"
            ),
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(directory / "data"),
            "num.partitions": "1",
            "default.replication.factor": "1",
            "auto.create.topics.enable": "false",
            # One node: every internal topic has one replica, and few partitions.
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "num.recovery.threads.per.data.dir": "1",
        }
        config = directory / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        # log4j2: everything at INFO to server.log in the broker's directory, nothing else.
        log4j = directory / "log4j2.properties"
        log4j.write_text(
            "status = error\n"
            "appender.file.type = File\n"
            "appender.file.name = file\n"
            f"appender.file.fileName = {directory / 'server.log'}\n"
            "appender.file.layout.type = PatternLayout\n"
            "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
            "rootLogger.level = INFO\n"
            "rootLogger.appenderRef.file.ref = file\n"
        )
        return config

    def _javaCommand(self, directory: Path, mainClass: str, *args: str) -> list[str]:
        return [
            self.java,
            *self.jvmOptions,
            f"-Dlog4j2.configurationFile={directory / 'log4j2.properties'}",
            "-cp",
            self.classpath,
            mainClass,
            *args,
        ]

    def _failure(self, what: str) -> KafkaBrokerError:
        directory = self.directory
        assert directory is not None
        return KafkaBrokerError(
            f"Kafka broker on {self.bootstrapServers} (controller port {self.controllerPort}) "
            f"{what}.\n--- console ---\n{_logSummary(directory / 'console.log')}\n"
            f"--- server.log ---\n{_logSummary(directory / 'server.log')}"
        )

    def start(self) -> None:
        if self.process is not None:
            raise KafkaBrokerError("the broker is already started")
        began = time.monotonic()
        # A free port may be taken by someone else before the broker binds it: ports this
        # broker chose itself are chosen again, twice at most.
        attempts = 3 if self._choosesPorts else 1
        for attempt in range(1, attempts + 1):
            try:
                self._startOnce()
                break
            except KafkaBrokerError as e:
                if attempt == attempts or "Address already in use" not in str(e):
                    raise
                self.port, self.controllerPort = freePort(), freePort()
        self.startSeconds = time.monotonic() - began

    def _startOnce(self) -> None:
        began = time.monotonic()
        directory = self.directory = Path(tempfile.mkdtemp(prefix="sparkwin-kafka-"))
        try:
            config = self._writeConfig(directory)
            formatted = subprocess.run(
                self._javaCommand(
                    directory,
                    "kafka.tools.StorageTool",
                    "format",
                    "--cluster-id",
                    self.clusterId,
                    "--config",
                    str(config),
                ),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=self.startTimeout,
            )
            if formatted.returncode != 0:
                (directory / "console.log").write_bytes(formatted.stdout)
                raise self._failure(
                    f"could not format its storage (StorageTool exited {formatted.returncode})"
                )
            with open(directory / "console.log", "wb") as console:
                self.process = subprocess.Popen(
                    self._javaCommand(directory, "kafka.Kafka", str(config)),
                    stdin=subprocess.DEVNULL,
                    stdout=console,
                    stderr=subprocess.STDOUT,
                    cwd=directory,
                )
            self.awaitReady(began + self.startTimeout)
        except BaseException:
            self.stop()
            raise

    def awaitReady(self, deadline: float) -> None:
        """Wait until the broker answers, it exits, or the deadline (time.monotonic()) passes."""
        process = self.process
        assert process is not None
        while True:
            code = process.poll()
            if code is not None:
                raise self._failure(f"exited with code {code} while starting")
            if apiVersionsAnswered(self.port, timeout=1.0):
                return
            if time.monotonic() > deadline:
                raise self._failure(
                    f"did not answer within {self.startTimeout:.0f} s of starting (stopped it)"
                )
            time.sleep(0.1)

    def stop(self) -> None:
        """End the broker (a clean shutdown, killed after 20 s) and remove its directory."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        directory = self.directory
        if directory is not None:
            self.directory = None
            shutil.rmtree(directory, ignore_errors=True)


def _admin(spark: Any, bootstrapServers: str) -> Any:
    jvm = spark._jvm
    props = jvm.java.util.Properties()
    props.setProperty("bootstrap.servers", bootstrapServers)
    props.setProperty("client.id", "sparkwin-tests-admin")
    return jvm.org.apache.kafka.clients.admin.AdminClient.create(props)


def createTopic(
    spark: Any, bootstrapServers: str, name: str, partitions: int, timeout: float = 30.0
) -> None:
    """Create a topic (one replica) with kafka-clients' Admin client in Spark's JVM, and wait
    until every partition has a leader.
    """
    jvm = spark._jvm
    seconds = jvm.java.util.concurrent.TimeUnit.SECONDS
    admin = _admin(spark, bootstrapServers)
    try:
        topic = jvm.org.apache.kafka.clients.admin.NewTopic(name, partitions, 1)
        admin.createTopics(jvm.java.util.Collections.singletonList(topic)).all().get(
            int(timeout), seconds
        )
        deadline = time.monotonic() + timeout
        names = jvm.java.util.Collections.singletonList(name)
        while True:
            try:
                description = admin.describeTopics(names).allTopicNames().get(int(timeout), seconds)
                infos = description.get(name).partitions()
                leaders = [infos.get(i).leader() for i in range(infos.size())]
            except Py4JError as exc:  # the new topic's metadata has not reached the broker yet
                if "UnknownTopicOrPartition" not in str(exc):
                    raise
                leaders = []
            if len(leaders) == partitions and all(leader is not None for leader in leaders):
                return
            if time.monotonic() > deadline:
                raise KafkaBrokerError(
                    f"topic {name}: partitions without a leader after {timeout} s"
                )
            time.sleep(0.1)
    finally:
        admin.close()


def produce(
    spark: Any,
    bootstrapServers: str,
    topic: str,
    records: Iterable[tuple[int, str | None, dict[str, Any]]],
    options: dict[str, str] | None = None,
) -> int:
    """Write `(partition, key, value)` records with a Spark batch write to Kafka, in order.

    Each value is written as JSON; the record goes to exactly the partition given (the sink's
    `partition` column). One Spark task writes them all, through one idempotent producer, so
    each partition keeps the order of the list. The Kafka timestamp is the producer's create
    time: put event time in the value. Returns the number of records written.
    """
    rows = [(int(p), key, json.dumps(value)) for p, key, value in records]
    df = spark.createDataFrame(rows, "partition int, key string, value string").coalesce(1)
    writer = (
        df.write.format("kafka")
        .option("kafka.bootstrap.servers", bootstrapServers)
        .option("topic", topic)
    )
    for k, v in (options or {}).items():
        writer = writer.option(k, v)
    writer.save()
    _closeCachedProducers(spark)
    return len(rows)


class Producer:
    """An idempotent KafkaProducer in the session's JVM (kafka-clients comes with the connector),
    for a test that writes while its queries run: a Spark batch write per wave (`produce`) is a
    job each, more CPU than the queries under test on a 2-core machine. Each partition keeps the
    order records are sent in. Close it when done.
    """

    def __init__(self, spark: Any, bootstrapServers: str) -> None:
        jvm = spark._jvm
        props = jvm.java.util.Properties()
        serializer = "org.apache.kafka.common.serialization.StringSerializer"
        for k, v in {
            "bootstrap.servers": bootstrapServers,
            "enable.idempotence": "true",
            "acks": "all",
            "key.serializer": serializer,
            "value.serializer": serializer,
        }.items():
            props.setProperty(k, v)
        self._jvm = jvm
        self._producer = jvm.org.apache.kafka.clients.producer.KafkaProducer(props)

    def send(self, topic: str, records: Iterable[tuple[int, str | None, dict[str, Any]]]) -> None:
        """Write `(partition, key, value)` records, each value as JSON, and wait for them all."""
        make = self._jvm.org.apache.kafka.clients.producer.ProducerRecord
        for p, key, value in records:
            self._producer.send(make(topic, int(p), key, json.dumps(value)))
        self._producer.flush()

    def close(self) -> None:
        self._producer.close()


def _closeCachedProducers(spark: Any) -> None:
    """Close the producers Spark keeps for ten minutes after a write (local mode: its executor
    is the driver's JVM), so none outlives the broker and logs failed reconnects at the end.
    Spark-internal: skipped if a Spark version lacks it.
    """
    pool = getattr(spark._jvm.org.apache.spark.sql.kafka010.producer, "InternalKafkaProducerPool$")
    try:
        getattr(pool, "MODULE$").reset()
    except Py4JError:
        pass


def readTopic(spark: Any, servers: str, topic: str, schema: str, *columns: str) -> Any:
    """A stream of the topic from its first offset: each value parsed as JSON of `schema` (a DDL
    string) into columns, then the record's `columns` (e.g. ``"partition"``).
    """
    from pyspark.sql import functions as F  # noqa: N812

    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .select(*columns, F.from_json(F.col("value").cast("string"), schema).alias("v"))
        .select("v.*", *columns)
    )


def endOffsets(spark: Any, bootstrapServers: str, topic: str, partitions: Sequence[int]) -> dict:
    """The latest offset of each partition, read with the Admin client."""
    jvm = spark._jvm
    admin = _admin(spark, bootstrapServers)
    try:
        latest = jvm.org.apache.kafka.clients.admin.OffsetSpec.latest()
        request = jvm.java.util.HashMap()
        for p in partitions:
            request.put(jvm.org.apache.kafka.common.TopicPartition(topic, p), latest)
        result = admin.listOffsets(request).all().get(30, jvm.java.util.concurrent.TimeUnit.SECONDS)
        return {
            p: result.get(jvm.org.apache.kafka.common.TopicPartition(topic, p)).offset()
            for p in partitions
        }
    finally:
        admin.close()
