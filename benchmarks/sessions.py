"""The Spark sessions the benchmarks run in, one function per shape: every system of a benchmark
shares its session, so they run on the same settings.

Each makes a session (`sparkwin.session()`, with its state-store settings) and quiets Spark's
log; none runs a query.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

import sparkwin as sw
from benchmarks.services import APP_CONF, connectorJars


def benchSession(appName: str, **conf: str) -> SparkSession:
    """The Spark session run.py's and nexmark.py's Spark systems share: local[2], 4 shuffle
    partitions, UTC, a 4 GiB driver heap, `conf` on top."""
    spark = sw.session(
        appName,
        master="local[2]",
        **{
            "spark.sql.shuffle.partitions": "4",
            "spark.sql.session.timeZone": "UTC",
            # Spark's 1 GiB default heap made collections a tenth of the stateful stages'
            # time at 10M events; every system gets the same heap.
            "spark.driver.memory": "4g",
            **conf,
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def latencySession(
    jfr: str | None = None,
    tracePanes: str | None = None,
    intervalMs: int | None = None,
    javaOptions: str | None = None,
) -> SparkSession:
    """The session latency.py's Spark systems share: local[8] (real-time mode needs a task slot
    per Kafka partition and per shuffle partition at once), 4 shuffle partitions, Kafka's
    connector. With `jfr`, its JVM records a Java Flight Recorder profile there (written when
    the session stops); with `tracePanes`, sparkwin writes the points of its panes' paths there
    (`PaneTrace`, benchmarks/pane_path.py); `intervalMs` tunes Spark's streaming shuffle's
    buffer wait; `javaOptions`: more options for its JVM (e.g.
    `-Xlog:gc:file=gc.log:timemillis`)."""
    conf = {
        "spark.jars": ",".join(connectorJars()),
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.memory": "4g",
    }
    options = [javaOptions] if javaOptions else []
    if jfr:
        options += [
            f"-XX:StartFlightRecording=filename={jfr},settings=profile,dumponexit=true",
            # Spark's task stacks run deeper than JFR's default 64 frames, and
            # benchmarks/jfr_split.py needs their bottom to tell the stages apart.
            "-XX:FlightRecorderOptions=stackdepth=256",
        ]
    if tracePanes:
        options.append(f"-Dsparkwin.trace={tracePanes}")
    if options:
        conf["spark.driver.extraJavaOptions"] = " ".join(options)
    if intervalMs is not None:
        # Real-time mode's pipelined shuffle holds a part-filled buffer up to 50 ms before it
        # sends it (Spark's default); tuned like the summary interval, as Flink's buffer timeout.
        conf["spark.shuffle.streaming.networkBufferMaxWaitTimeMs"] = str(intervalMs)
    spark = sw.session("sparkwin-latency", master="local[8]", **conf)
    spark.sparkContext.setLogLevel("OFF")
    return spark


def soakHarnessSession() -> SparkSession:
    """The soak harness's own session: local, it only talks to Kafka (topic, producer, offsets)
    and computes the answer at the end."""
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
    return spark


# The soak driver's settings on the standalone cluster.
SOAK_CLUSTER_CONF = {
    **APP_CONF,
    "spark.driver.memory": "768m",
    "spark.executor.extraJavaOptions": "-XX:+UseSerialGC",  # a long run: the full JIT pays
    # Spark keeps 100 batches of state and logs by default; 30 reach their steady size within
    # a soak run on a busy machine (batches of several seconds).
    "spark.sql.streaming.minBatchesToRetain": "30",
    # The soak samples the state's rows (numRowsTotal), which sparkwin.session() stops counting.
    "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows": "true",
}


def soakDriverSession(master: str, cores: int | None = None) -> SparkSession:
    """The soak driver's session on the standalone cluster at `master`, with Kafka's connector;
    `cores`: the task slots it takes (real-time mode needs one per Kafka and shuffle
    partition)."""
    conf = {**SOAK_CLUSTER_CONF, "spark.jars": ",".join(connectorJars())}
    if cores is not None:
        conf["spark.cores.max"] = str(cores)
    spark = sw.session(appName="sparkwin-soak", master=master, **conf)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def clusterBenchSession(master: str, workers: int, partitions: int) -> SparkSession:
    """cluster.py's driver session: an executor of one core on each of `workers` workers."""
    spark = sw.session(
        "sparkwin-cluster-bench",
        master=master,
        **{
            "spark.cores.max": str(workers),
            "spark.executor.cores": "1",
            "spark.executor.memory": "2g",
            "spark.driver.memory": "2g",
            "spark.sql.shuffle.partitions": str(partitions),
            "spark.sql.session.timeZone": "UTC",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark
