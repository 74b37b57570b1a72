"""Starting Spark with the sparkwin jar: `session()`, `configure(builder)`, and the version of
the jar a session runs (`jvm_version`).

Classpath and configuration live here; talking to the JVM is the transport's job
(`sparkwin._transport`: Py4J, or Spark Connect).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pyspark
from pyspark import SparkContext
from pyspark.sql import SparkSession

from sparkwin import _transport as transport
from sparkwin._spark import classpath as _classpath
from sparkwin._spark import delta as _delta
from sparkwin._spark import kafka as _kafka
from sparkwin._spark.jar import jarPath
from sparkwin._support import lineFor, requireFeature
from sparkwin._transport import classic
from sparkwin._transport import connect as _connect
from sparkwin.errors import UnsupportedSparkError

ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

# What sparkwin needs from every session: the jar, and the state store that
# transformWithState requires.
_REQUIRED_CONF = {"spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER}

# Defaults for every session `session()` builds; a user's own values win. With changelog
# checkpointing a micro-batch's state commit writes only what changed, and RocksDB snapshots
# are uploaded in the background: it halved the state commit time of the benchmarks (for
# sparkwin and Spark's own windows alike). Spark can switch an existing checkpoint to it.
# Without row tracking a state write is no longer preceded by a read that only counts rows
# (Spark's setting for write-heavy state); the state operators' `numRowsTotal` then reads 0.
_SESSION_DEFAULTS = {
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows": "false",
}

# Friendlier local defaults; a user's own values win.
_LOCAL_DEFAULTS = {
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
}

# Hadoop's local file system for checkpoint files, less the `readlink` and `chmod` processes it
# forks per file without Hadoop's native library (the jar's `LocalFileSystems.Settings`, which a
# test holds this to): they took most of a micro-batch's state commit and log writes at 100k
# events a batch. Only for a JVM this call starts on a local master, which runs its executors.
_LOCAL_FILE_SYSTEMS = {
    "spark.hadoop.fs.AbstractFileSystem.file.impl": (
        "sparkwin.runtime.spark.localfs.ForklessLocalFs"
    ),
}


def configure(
    builder: SparkSession.Builder, *, delta: bool = False, kafka: bool = False
) -> SparkSession.Builder:
    """Put the sparkwin jar on a builder's classpath and set the state store sparkwin needs.

    Call it before `getOrCreate()`, so the driver loads the jar from its start. The first
    sparkwin call on the session then gives its context back what the builder's ``spark.jars``
    hid: the jars spark-submit resolved from ``spark.jars.packages`` or ``--jars`` (executors
    fetch them before their next task), and adds the jar to a JVM started without it. It also
    registers sparkwin's Spark Connect plugin, so ``builder.remote("local[2]")`` (a Connect
    server PySpark starts in this process) runs sparkwin pipelines too; a remote ``sc://``
    server must have been started with the jar and the plugin itself.

    ``delta=True`` also adds Delta Lake for ``sw.toDelta`` outputs: the Delta jar built for the
    installed PySpark's line (from Maven Central, through ``spark.jars.packages``), Delta's SQL
    extension, and Delta's catalog as the session catalog unless the builder names another. A
    Spark line Delta has no release for is refused, naming the lines it has. ``kafka=True`` adds
    Spark's Kafka connector (``spark-sql-kafka-0-10``) of the installed PySpark's line, from Maven
    Central, for ``readStream.format("kafka")`` and Kafka outputs.

    Example::

        spark = sparkwin.configure(SparkSession.builder.master("local[2]")).getOrCreate()
        spark = sparkwin.configure(SparkSession.builder, delta=True).getOrCreate()
        spark = sparkwin.configure(SparkSession.builder, kafka=True).getOrCreate()
        spark = sparkwin.configure(SparkSession.builder.remote("local[2]")).getOrCreate()
    """
    if not isinstance(builder, SparkSession.Builder):
        raise TypeError(
            f"builder must be a SparkSession.Builder (SparkSession.builder), got {type(builder)}"
        )
    line = lineFor(pyspark.__version__, "the installed PySpark")
    if not isinstance(delta, bool):
        raise TypeError("delta must be a bool")
    if not isinstance(kafka, bool):
        raise TypeError("kafka must be a bool")
    if delta:
        builder = _delta.withDelta(builder)
    if kafka:
        builder = _kafka.withKafka(builder)
    if "spark.remote" in builder._options:  # a Connect client: refused where Connect cannot run
        requireFeature(pyspark.__version__, "connect", "Spark Connect", _connect.CLASSIC)
    jar = jarPath()  # the jar of the installed PySpark's Scala version
    existing = builder._options.get("spark.jars")
    jars = jar if not existing else f"{existing},{jar}"
    builder = builder.config("spark.jars", jars)
    if line.connect:
        builder = _connect.withPlugin(builder)  # Spark Connect: the relation plugin (server side)
    for key, value in _REQUIRED_CONF.items():
        builder = builder.config(key, value)
    return builder


def _launchedElsewhere() -> bool:
    """Whether the master is already chosen: a running context, the JVM of ``spark-submit job.py``
    (PySpark connects to it through ``PYSPARK_GATEWAY_PORT``), or ``--master`` in
    ``PYSPARK_SUBMIT_ARGS``.
    """
    return (
        SparkContext._active_spark_context is not None
        or "PYSPARK_GATEWAY_PORT" in os.environ
        or "--master" in os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    )


def session(
    appName: str = "sparkwin",
    master: str | None = None,
    *,
    connect: Any = False,  # a bool; Any keeps session(**{"spark.x": "y"}) well-typed
    delta: Any = False,  # a bool, as connect
    kafka: Any = False,  # a bool, as connect
    **conf: Any,
) -> SparkSession:
    """Get or create a SparkSession with sparkwin's jar and state store configured.

    Without ``master`` the session runs where ``spark-submit --master`` (or
    ``PYSPARK_SUBMIT_ARGS``, or a running SparkContext) says, else on ``local[2]``. On a cluster,
    the jars spark-submit or ``spark.jars.packages`` brought stay on the executors, and the
    sparkwin package is shipped to their Python workers (for ``process()``).

    Extra Spark settings go in as keyword arguments with their usual names, e.g.
    ``**{"spark.sql.shuffle.partitions": "8"}``. Every session defaults to RocksDB changelog
    checkpointing (a micro-batch commits only the state it changed). Local sessions default to
    4 shuffle partitions and no UI, and run Python workers with this interpreter (unless
    ``PYSPARK_PYTHON`` is set); when this call starts Spark's JVM, local checkpoint files go
    through sparkwin's local file system, which asks Java where Hadoop's forks a ``readlink``
    or ``chmod`` process per file. The jar and JVM versions are checked against this
    package.

    With ``connect=True`` the session is a Spark Connect client: for a ``local`` master PySpark
    starts the Connect server in this process (on port 15002), with the jar and sparkwin's
    Connect plugin; ``master="sc://host:port"`` connects to a running server, which must have
    been started with both (see ``configure``). Needs ``pip install "sparkwin[connect]"``.
    ``delta=True`` adds Delta Lake for ``sw.toDelta`` outputs, ``kafka=True`` Spark's Kafka
    connector (see ``configure``). Spark takes packages only when its JVM starts: asked for one
    that a session already running in this process lacks, ``session`` says so at once.

    Example::

        import sparkwin
        spark = sparkwin.session()
        print(sparkwin.jvm_version())
        spark = sparkwin.session(connect=True)  # a Spark Connect client of a local server
        spark = sparkwin.session(delta=True)  # with Delta Lake (Spark 3.5 to 4.2)
        spark = sparkwin.session(kafka=True)  # with Spark's Kafka connector
    """
    if not isinstance(appName, str) or not appName:
        raise TypeError("appName must be a non-empty string")
    if master is not None and (not isinstance(master, str) or not master):
        raise TypeError(
            "master must be a non-empty string such as 'local[2]' or 'spark://host:7077', "
            "or None for spark-submit's"
        )
    if not isinstance(connect, bool):
        raise TypeError("connect must be a bool")
    startsJvm = not _launchedElsewhere()
    if master is None and (connect or startsJvm):
        master = "local[2]"
    connect = connect or (master or "").startswith("sc://")  # Spark Connect: a remote builder
    builder = SparkSession.builder.appName(appName)
    if connect:
        builder = builder.remote(str(master))
    elif master is not None:
        builder = builder.master(master)
    local = (master or "").startswith("local")
    settings: dict[str, Any] = dict(_SESSION_DEFAULTS)
    if local:
        settings.update(_LOCAL_DEFAULTS)
    if local and startsJvm:
        settings.update(_LOCAL_FILE_SYSTEMS)
    if local and "PYSPARK_PYTHON" not in os.environ:
        # Python workers (process functions) need this interpreter's packages, not PATH's
        # python3; PySpark reads the variable, not the conf, when it starts the context.
        os.environ["PYSPARK_PYTHON"] = sys.executable
    settings.update(conf)
    for key, value in settings.items():
        builder = builder.config(key, str(value))
    if connect:
        return _connect.startSession(configure(builder, delta=delta, kafka=kafka))
    spark = configure(builder, delta=delta, kafka=kafka).getOrCreate()
    classic.entryPoint(spark)  # the jars the options hid, ours on the executors; the version
    _refuseMissingPackages(spark, delta=delta, kafka=kafka)
    return spark


def _refuseMissingPackages(spark: SparkSession, *, delta: bool, kafka: bool) -> None:
    """Refuses, at once, a session that lacks the packages it was asked for. ``getOrCreate``
    returns a session already running in this process (or the JVM spark-submit started) as it
    is, and Spark reads ``spark.jars.packages`` only when its JVM starts: without this check the
    error would come at the first query that writes Delta or reads Kafka."""
    line = lineFor(spark.version, "this session")
    wanted = [
        ("delta", "Delta Lake", _delta.SOURCE_CLASS, line.delta) if delta else None,
        ("kafka", "Spark's Kafka connector", _kafka.SOURCE_CLASS, line.kafkaPackage)
        if kafka
        else None,
    ]
    for flag, what, className, package in filter(None, wanted):
        location = _classpath.classLocation(spark._jvm, className)
        if location is None:
            raise UnsupportedSparkError(
                f"sparkwin.session({flag}=True): this process's Spark session was started "
                f"without {what}, and Spark adds packages only when its JVM starts. Stop that "
                f"session first (spark.stop()) and call sparkwin.session({flag}=True) again, or "
                f"start the job with spark-submit --packages {package}"
            )
        if flag == "delta":
            _delta.checkJar(location, line, "sparkwin.session(delta=True)")


def jvm_version(spark: SparkSession | None = None) -> str:
    """The version of the sparkwin jar loaded in the JVM (or on the Spark Connect server).

    Example::

        sparkwin.session(); print(sparkwin.jvm_version())
    """
    return transport.of(classic.activeSession(spark)).jarVersion()
