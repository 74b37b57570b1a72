"""End-to-end latency of windows from Kafka to Kafka: sparkwin, Spark's own windows and a Flink
job, each reading a topic a producer writes at a fixed rate, on a local broker.

    python benchmarks/latency.py [--quick] [--rates 1000,10000,100000] [--keys 16,100000]
                                 [--seconds 60]
                                 [--systems sparkwin-mb,sparkwin-mb-1s,sparkwin-valve-1s,
                                            sparkwin-rt,
                                            spark-mb,spark-mb-1s,spark-rt,flink]
                                 [--workloads tumbling,sliding] [--json PATH]

A run is one system, one workload (`tumbling` 1 s or `sliding` 10 s every 1 s; count and sum of
an amount per key), one rate and one number of keys (`--keys`, default 16; events cycle through
them, so at 10k events a second and a million keys a key gets an event every 100 s). It gets
topics of its own: the input (4 partitions) and the output (1 partition, stamped with the
broker's LogAppendTime). The broker's JVM is as Kafka's start scripts run it (`--broker server`:
1 GB, G1, the full JIT; `--broker test`: the tests' quick-starting one, C1 only). The system
starts on the input, then LatencyProducer (sbt project `flinkBench`, one JVM thread) writes
`rate` events a second for `seconds` seconds, each event's time its making time less 0-199 ms
of disorder; the systems use a bound of 200 ms, so none is late. Once the output has been quiet
for a while the system stops and the output topic is read back.

Each system's panes are checked against what its input must give (latency_stats.check) before
any latency is reported: every window the watermark passed, with the producer's count and sum.
A pane's latency is the time its row reached the output topic minus the time the producer made
the event that moved that system's watermark past the window's end (latency_stats explains
which event). The producer first runs `--warmup` seconds (first batches, JIT): panes of
windows ending then are left out; and it goes on `--cooldown` seconds after the measured ones, so
the last measured windows close under the same load as the others (a stream that stops is another
case: a real-time partition's last rows move the watermark only with its next row or at the
batch's end). Panes of windows ending in the cool-down are left out too. A system
"held" a rate when the median latency of the last fifth of windows is less than 1 s above that
of the first fifth and the producer kept the rate.

Systems (Spark: one session, local[8], 4 shuffle partitions; real-time mode needs a task slot
per Kafka partition and per shuffle partition at once):
- `sparkwin-mb`, `sparkwin-mb-1s`: the pipeline's toDF() in micro-batch mode to Kafka, append,
  no trigger interval or a 1 s one; `sparkwin-valve-1s` the same with a watermark per Kafka
  partition (`channel="partition"`, the valve's minimum, as Flink's): a window fires in the batch
  its closing event arrives in; `sparkwin-rt` in real-time mode (update, `--rt-batch`);
- `spark-mb`, `spark-mb-1s`: `groupBy(key, window(...))` with `withWatermark`, append;
  `spark-rt`: the same in real-time mode, which allows only update mode: a row per change of a
  window, so its latency is that of the first row holding the window's final count and sum,
  which can come before the watermark passes the window (negative latency) and is never marked
  final;
- `flink`: LatencyFlinkJob, a DataStream job on a local MiniCluster (parallelism 2): Kafka
  source with a watermark per partition, `forBoundedOutOfOrderness(200 ms)`, Kafka sink.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from kafka_broker import (  # noqa: E402
    JVM_OPTIONS,
    SERVER_JVM_OPTIONS,
    KafkaBroker,
    connectorJars,
    endOffsets,
)
from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402, N812
from pyspark.sql.streaming import StreamingQuery  # noqa: E402

import sparkwin as sw  # noqa: E402
from benchmarks import pane_path  # noqa: E402
from benchmarks.latency_stats import (  # noqa: E402
    Pane,
    check,
    closingTimes,
    latencies,
    summary,
    table,
)
from benchmarks.run import engineClasspath, machine  # noqa: E402

BOUND_MS = 200
PARTITIONS = 4
KEYS = 16  # the default key count
SHUFFLE_PARTITIONS = 4
SYSTEMS = [
    "sparkwin-mb",
    "sparkwin-mb-1s",
    "sparkwin-valve-1s",
    "sparkwin-rt",
    "spark-mb",
    "spark-mb-1s",
    "spark-rt",
    "flink",
]
WORKLOADS = ["tumbling", "sliding"]
# The broker's JVM (`--broker`): as Kafka's start scripts run it, or as the tests do.
BROKER_JVMS = {"server": SERVER_JVM_OPTIONS, "test": JVM_OPTIONS}
# Which watermark each system closes windows with (latency_stats.closingTimes).
# sparkwin in real-time mode keeps a channel per source partition: the valve's, as Flink.
# sparkwin-valve-1s asks for the same in micro-batch mode (channel="partition").
VALVE = ("flink", "sparkwin-rt", "sparkwin-valve-1s")
WATERMARK = {s: "valve" if s in VALVE else "global" for s in SYSTEMS}


# ---------------------------------------------------------------------------------------------
# Topics


def admin(spark: SparkSession, servers: str) -> Any:
    jvm: Any = spark._jvm
    props = jvm.java.util.Properties()
    props.setProperty("bootstrap.servers", servers)
    return jvm.org.apache.kafka.clients.admin.AdminClient.create(props)


def createTopics(spark: SparkSession, servers: str, run: str) -> tuple[str, str]:
    """The run's input topic (PARTITIONS partitions) and output topic (1 partition, each record
    stamped with the broker's clock when it arrives: LogAppendTime)."""
    jvm: Any = spark._jvm
    inTopic, outTopic = f"in-{run}", f"out-{run}"
    stamped = jvm.java.util.HashMap()
    stamped.put("message.timestamp.type", "LogAppendTime")
    topics = jvm.java.util.ArrayList()
    topics.add(jvm.org.apache.kafka.clients.admin.NewTopic(inTopic, PARTITIONS, 1))
    topics.add(jvm.org.apache.kafka.clients.admin.NewTopic(outTopic, 1, 1).configs(stamped))
    client = admin(spark, servers)
    try:
        client.createTopics(topics).all().get(30, jvm.java.util.concurrent.TimeUnit.SECONDS)
    finally:
        client.close()
    return inTopic, outTopic


def events(spark: SparkSession, servers: str, topic: str) -> DataFrame:
    """The producer's events as a stream: key, amount, ts (epoch ms), and the Kafka partition."""
    raw = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    f = F.split(F.col("value").cast("string"), ",")
    return raw.select(
        f[0].alias("key"),
        f[1].cast("long").alias("amount"),
        f[2].cast("long").alias("ts"),
        "partition",
    )


def readPanes(
    spark: SparkSession, servers: str, topic: str, updates: bool
) -> tuple[list[Pane], int]:
    """The rows of an output topic with the broker's arrival time, in offset order, and how many
    there were. With `updates` (a row per change of a window: Spark's update mode) only one per
    window: the first that holds its final count and sum (counts only grow), reduced in Spark."""
    rows = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("subscribe", topic)
        .load()
        .select(
            F.split(F.col("value").cast("string"), ",").alias("f"),
            "offset",
            F.unix_millis("timestamp").alias("at"),
        )
        .select(
            F.col("f")[0].alias("key"),
            *[
                F.col("f")[i].cast("long").alias(n)
                for i, n in [(1, "start"), (2, "end"), (3, "count"), (4, "total")]
            ],
            "offset",
            "at",
        )
    )
    count = rows.count()
    if updates:
        final = F.struct(F.col("count"), -F.col("offset"))
        rows = rows.groupBy("key", "start", "end").agg(
            F.max("count").alias("count"),
            F.max_by("total", final).alias("total"),
            F.max_by("at", final).alias("at"),
            F.min("offset").alias("offset"),
        )
    # Streamed a partition at a time: at a million keys a run has about a million panes.
    panes = [
        Pane(r.key, r.start, r.end, r["count"], r.total, r.at)
        for r in rows.orderBy("offset").toLocalIterator()
    ]
    return panes, count


# ---------------------------------------------------------------------------------------------
# The systems under test


def toKafka(df: DataFrame, servers: str, topic: str, checkpoint: str) -> Any:
    """A writer of rows `key,start,end,count,sum` to the output topic, each sent at once."""
    return (
        df.writeStream.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("topic", topic)
        .option("kafka.linger.ms", "0")
        .option("checkpointLocation", checkpoint)
    )


def sparkwinPanes(
    ev: DataFrame, workload: str, realTime: bool = False, valve: bool = False
) -> DataFrame:
    """With `valve`, a watermark per Kafka partition and their minimum (Flink's; real-time mode
    keeps one per source partition by itself): in micro-batch mode a window then fires in the
    batch that brings its closing event, not the batch after, as Spark's watermark does."""
    windows = (
        sw.TumblingEventTimeWindows.of(1000)
        if workload == "tumbling"
        else sw.SlidingEventTimeWindows.of(10_000, 1000)
    )
    pipeline = (
        sw.stream(
            ev if valve else ev.drop("partition"),
            timestamp="ts",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS),
            **({"channel": "partition", "channels": range(PARTITIONS)} if valve else {}),
        )
        .keyBy("key")
        .window(windows)
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )
    return pipeline.toDF(realTime=realTime).select(
        F.concat_ws(
            ",",
            "key",
            F.unix_millis("window_start"),
            F.unix_millis("window_end"),
            "count",
            "sum_amount",
        ).alias("value")
    )


def sparkPanes(ev: DataFrame, workload: str) -> DataFrame:
    size, slide = ("1 second", "1 second") if workload == "tumbling" else ("10 seconds", "1 second")
    return (
        ev.withColumn("ts", F.timestamp_millis("ts"))
        .withWatermark("ts", f"{BOUND_MS} milliseconds")
        .groupBy("key", F.window("ts", size, slide))
        .agg(F.count("*").alias("count"), F.sum("amount").alias("sum"))
        .select(
            F.concat_ws(
                ",",
                "key",
                F.unix_millis("window.start"),
                F.unix_millis("window.end"),
                "count",
                "sum",
            ).alias("value")
        )
    )


def startSparkwinRealTime(
    ev: DataFrame, workload: str, servers: str, topic: str, checkpoint: str, batch: str
) -> StreamingQuery:
    """sparkwin in real-time mode: the pipeline's real-time plan (windows fire inside a batch,
    on the key groups' own watermark) through Spark's Kafka writer in update mode, with the same
    `key,start,end,count,sum` values as the other Spark systems."""
    return (
        toKafka(sparkwinPanes(ev, workload, realTime=True), servers, topic, checkpoint)
        .outputMode("update")
        .trigger(realTime=batch)
        .start()
    )


def startSpark(
    system: str,
    spark: SparkSession,
    servers: str,
    inTopic: str,
    outTopic: str,
    workload: str,
    rtBatch: str,
    checkpoint: str,
    intervalMs: int | None = None,
) -> StreamingQuery:
    ev = events(spark, servers, inTopic)
    if system == "sparkwin-rt":
        # Read when the plan is made: the map side's summaries leave at most this often.
        if intervalMs is not None:
            spark.conf.set("spark.sparkwin.realTime.summaryIntervalMs", str(intervalMs))
        else:
            spark.conf.unset("spark.sparkwin.realTime.summaryIntervalMs")
        return startSparkwinRealTime(ev, workload, servers, outTopic, checkpoint, rtBatch)
    panes = (
        sparkwinPanes(ev, workload, valve=system in VALVE)
        if system.startswith("sparkwin")
        else sparkPanes(ev, workload)
    )
    writer = toKafka(panes, servers, outTopic, checkpoint)
    if system.endswith("-rt"):
        return writer.outputMode("update").trigger(realTime=rtBatch).start()
    if system.endswith("-1s"):
        writer = writer.trigger(processingTime="1 second")
    return writer.outputMode("append").start()


def startFlink(
    classpath: str,
    servers: str,
    inTopic: str,
    outTopic: str,
    workload: str,
    intervalMs: int | None = None,
) -> subprocess.Popen:
    """LatencyFlinkJob in a JVM of its own, returned once its job runs; `intervalMs`: its
    periodic watermark interval (Flink's default: 200 ms)."""
    process = subprocess.Popen(
        [
            "java",
            "-Xmx2g",
            "-cp",
            classpath,
            "sparkwin.bench.LatencyFlinkJob",
            servers,
            inTopic,
            outTopic,
            workload,
            str(BOUND_MS),
            "2",
            *([str(intervalMs)] if intervalMs is not None else []),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.strip() == "running":
            return process
    raise RuntimeError(f"the Flink job ended before it ran (exit code {process.wait()})")


def produce(
    classpath: str, servers: str, topic: str, rate: int, seconds: float, keys: int, truthPath: str
) -> dict:
    """LatencyProducer's run: `rate` events a second for `seconds` over `keys` keys; its truth
    file, read."""
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
            str(PARTITIONS),
            str(rate),
            str(seconds),
            str(keys),
            str(BOUND_MS),
            truthPath,
        ],
        check=True,
        capture_output=True,
    )
    return json.loads(Path(truthPath).read_text())


def awaitQuiet(spark: SparkSession, servers: str, topic: str, quiet: float, limit: float) -> float:
    """Waits until the output topic got nothing new for `quiet` seconds, `limit` at most; the
    seconds waited."""
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


# ---------------------------------------------------------------------------------------------
# One run, all runs


def runOne(
    spark: SparkSession,
    broker: KafkaBroker,
    classpath: str,
    system: str,
    workload: str,
    rate: int,
    keys: int,
    args: argparse.Namespace,
) -> dict[str, Any]:
    servers = broker.bootstrapServers
    run = f"{system}-{workload}-{rate}-{keys}-{uuid.uuid4().hex[:6]}"
    inTopic, outTopic = createTopics(spark, servers, run)
    stop: Callable[[], None]
    batchMs: list[float] = []
    batches: list[tuple[int, str, int]] = []
    stateOps: dict[str, float] = {}
    if system == "flink":
        process = startFlink(classpath, servers, inTopic, outTopic, workload, args.interval_ms)

        def stop() -> None:
            process.terminate()
            process.wait(timeout=30)
    else:
        if args.trace_panes:
            Path(args.trace_panes).write_text("")  # this run's points only
        checkpoint = tempfile.mkdtemp(prefix=f"sparkwin-latency-{system}-")
        query = startSpark(
            system,
            spark,
            servers,
            inTopic,
            outTopic,
            workload,
            args.rt_batch,
            checkpoint,
            args.interval_ms,
        )

        def stop() -> None:
            # Micro-batch durations (median, max): what a micro-batch system's latency is made of.
            took = sorted(p["durationMs"].get("triggerExecution", 0) for p in query.recentProgress)
            batches[:] = [
                (p["batchId"], p["timestamp"], p["durationMs"].get("triggerExecution", 0))
                for p in query.recentProgress
            ]
            if took:
                batchMs[:] = [took[len(took) // 2], took[-1]]
            stateOps.update(stateOperatorMedians(query.recentProgress))
            query.stop()
            shutil.rmtree(checkpoint, ignore_errors=True)

    try:
        time.sleep(args.settle)  # the query's or job's first poll of the (empty) topic
        with tempfile.TemporaryDirectory() as tmp:
            truth = produce(
                classpath,
                servers,
                inTopic,
                rate,
                args.warmup + args.seconds + args.cooldown,
                keys,
                f"{tmp}/truth.json",
            )
        drained = awaitQuiet(spark, servers, outTopic, args.quiet, args.drain)
    finally:
        stop()
    updates = system == "spark-rt"
    panes, outputRows = readPanes(spark, servers, outTopic, updates)
    chosen, missing = check(panes, truth, workload, updates)
    start = min(s for _, s, _, _ in truth["buckets"]) * 1000
    points = latencies(
        chosen,
        closingTimes(truth, WATERMARK[system]),
        start + int(args.warmup * 1000),
        start + int((args.warmup + args.seconds) * 1000),
    )
    result = {
        "system": system,
        "workload": workload,
        "rate": rate,
        "keys": keys,
        "achieved": round(truth["achieved"]),
        "producerBehindMs": round(1000 * truth["maxBehind"] / rate, 1),
        "outputRows": outputRows,
        "missing": missing,
        "batchMs": batchMs,
        "stateOps": stateOps,
        "drainSeconds": round(drained, 1),
        "intervalMs": args.interval_ms,
        **summary(points),
    }
    if args.trace:  # where the latency comes from: each window's worst pane, each batch's span
        worst: dict[int, int] = {}
        for end, latency in points:
            worst[end] = max(latency, worst.get(end, latency))
        result["trace"] = {"windows": sorted(worst.items()), "batches": batches}
    if args.trace_panes and system == "sparkwin-rt":
        result["path"] = pane_path.summarize(
            args.trace_panes,
            truth,
            list(chosen.values()),
            BOUND_MS,
            (start + int(args.warmup * 1000), start + int((args.warmup + args.seconds) * 1000)),
        )
    # A producer that could not keep the rate says nothing about the system.
    result["held"] = result["held"] and truth["achieved"] >= 0.95 * rate and not missing
    return result


def stateOperatorMedians(progress: list[dict]) -> dict[str, float]:
    """Where a micro-batch's time goes, median over the batches that had data: the batch's
    `addBatch` and the stateful operator's rows updated and removed, update, removal and commit
    times (Spark's progress; summed over the operator's tasks)."""
    fields = (
        "numRowsUpdated",
        "numRowsRemoved",
        "allUpdatesTimeMs",
        "allRemovalsTimeMs",
        "commitTimeMs",
    )
    rows: dict[str, list[float]] = {f: [] for f in (*fields, "addBatchMs", "numInputRows")}
    for p in progress:
        if not p.get("numInputRows"):
            continue
        rows["numInputRows"].append(p["numInputRows"])
        rows["addBatchMs"].append(p["durationMs"].get("addBatch", 0))
        for op in p.get("stateOperators", [])[:1]:
            for f in fields:
                rows[f].append(op.get(f, 0))
    return {f: sorted(v)[len(v) // 2] for f, v in rows.items() if v}


def session(
    jfr: str | None = None,
    tracePanes: str | None = None,
    intervalMs: int | None = None,
    javaOptions: str | None = None,
) -> SparkSession:
    """The Spark session every Spark system runs in; with `jfr`, its JVM records a Java Flight
    Recorder profile there (written when the session stops); with `tracePanes`, sparkwin writes
    the points of its panes' paths there (`PaneTrace`, benchmarks/pane_path.py); `javaOptions`:
    more options for its JVM (e.g. `-Xlog:gc:file=gc.log:timemillis`)."""
    conf = {
        "spark.jars": ",".join(connectorJars()),
        "spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS),
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


def keyCounts(text: str) -> list[int]:
    """`--keys`: comma-separated positive key counts, e.g. `16,100000,1000000`."""
    try:
        counts = [int(k) for k in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"key counts are whole numbers, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"key counts are at least 1, got {text!r}")
    return counts


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="10 s runs at 1k events/s, tumbling only")
    p.add_argument("--rates", help="events a second, comma-separated (default 1000,10000,100000)")
    p.add_argument(
        "--seconds", type=float, help="seconds each run is measured, after the warm-up (default 60)"
    )
    p.add_argument(
        "--keys",
        default=str(KEYS),
        type=keyCounts,
        help=f"key counts, comma-separated (default {KEYS})",
    )
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--workloads", help="tumbling,sliding (default both)")
    p.add_argument(
        "--rt-batch",
        default="5 minutes",
        help="real-time mode's batch duration (a checkpoint interval: the README's advice)",
    )
    p.add_argument(
        "--warmup",
        type=float,
        help="seconds produced before the measured ones; their windows are left out "
        "(default 10; --quick: 5)",
    )
    p.add_argument(
        "--cooldown",
        type=float,
        default=2.0,
        help="seconds produced after the measured ones; their windows are left out",
    )
    p.add_argument(
        "--interval-ms",
        type=int,
        help="tune both alike: sparkwin's real-time summary interval "
        "(spark.sparkwin.realTime.summaryIntervalMs, default 100) and the Flink job's periodic "
        "watermark interval (default 200); Spark's streaming shuffle's buffer wait "
        "(spark.shuffle.streaming.networkBufferMaxWaitTimeMs, default 50) and Flink's buffer "
        "timeout (default 100)",
    )
    p.add_argument("--settle", type=float, default=3.0, help="seconds between start and producing")
    p.add_argument("--quiet", type=float, help="output quiet this long ends a run (default 8)")
    p.add_argument("--drain", type=float, default=60.0, help="seconds to wait for output, at most")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--jfr", help="record a JFR profile of the Spark JVM to this file")
    p.add_argument(
        "--trace",
        action="store_true",
        help="keep each window's worst latency and each batch's span in the JSON",
    )
    p.add_argument(
        "--trace-panes",
        metavar="FILE",
        help="sparkwin-rt: write the points of each pane's path (tap, summary, group call) to "
        "FILE and give each step's p50 and p99 (benchmarks/pane_path.py)",
    )
    p.add_argument(
        "--java-options",
        metavar="OPTIONS",
        help="more options for the Spark JVM, e.g. '-Xlog:gc:file=gc.log:timemillis' (a GC log "
        "whose times match the panes')",
    )
    p.add_argument(
        "--broker",
        choices=sorted(BROKER_JVMS),
        default="server",
        help="the broker's JVM: as Kafka's start scripts run it (server: G1, full JIT; the "
        "default) or as the tests do (test: serial GC, C1 only, 512 MB)",
    )
    p.add_argument("--markdown", nargs="+", metavar="JSON", help="only print these runs' table")
    args = p.parse_args()
    if args.markdown:
        print(
            markdown([r for f in args.markdown for r in json.loads(Path(f).read_text())["results"]])
        )
        return
    quick = args.quick
    rates = [int(r) for r in (args.rates or ("1000" if quick else "1000,10000,100000")).split(",")]
    workloads = (args.workloads or ("tumbling" if quick else "tumbling,sliding")).split(",")
    systems = args.systems.split(",")
    for name, given, known in [("systems", systems, SYSTEMS), ("workloads", workloads, WORKLOADS)]:
        unknown = sorted(set(given) - set(known))
        if unknown:
            p.error(f"--{name}: unknown {unknown}; choose from {known}")
    if args.seconds is None:
        args.seconds = 10.0 if quick else 60.0
    if args.warmup is None:
        args.warmup = 5.0 if quick else 10.0
    if args.quiet is None:
        # Real-time mode with sparkwin today fires at batch ends: wait out more than a batch.
        args.quiet = 8.0 if not any(s.endswith("-rt") for s in systems) else 12.0
    classpath = os.environ.get("SPARKWIN_FLINK_CLASSPATH") or engineClasspath("flinkBench")
    spark = session(args.jfr, args.trace_panes, args.interval_ms, args.java_options)
    results = []
    try:
        with KafkaBroker(jvmOptions=BROKER_JVMS[args.broker]) as broker:
            for workload in workloads:
                for rate in rates:
                    for keys in args.keys:
                        for system in systems:
                            try:
                                r = runOne(
                                    spark, broker, classpath, system, workload, rate, keys, args
                                )
                            except Exception as e:  # noqa: BLE001
                                # Wrong results, or a run that broke: a row with its error, no
                                # latency; the other systems still run and print.
                                r = {"system": system, "workload": workload, "rate": rate}
                                r |= {"keys": keys, "error": f"{type(e).__name__}: {e}"}
                                r |= {"p50": None, "p99": None, "max": None}
                                r |= {"growth": None, "held": False, "achieved": None}
                            results.append(r)
                            print(json.dumps(r), flush=True)
                            if args.json:
                                write(args.json, args, results)
    finally:
        spark.stop()
    print("\n" + table(results))
    failed = [r for r in results if "error" in r]
    for r in failed:
        print(f"{r['system']} {r['workload']} {r['rate']} {r.get('keys', KEYS)}: {r['error']}")
    if failed:
        sys.exit(1)


def markdown(results: list[dict]) -> str:
    """The runs as docs/benchmarks.md's table: latency in seconds per workload, rate and system."""

    def sec(v: float | None) -> str:
        return "-" if v is None else f"{v / 1000:.2f}"

    lines = [
        "| workload | rate (achieved) | keys | system | p50 s | p99 s | max s | growth s | held |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        achieved = f"{r['achieved'] / 1000:.1f}k" if r.get("achieved") else "-"
        held = "error" if "error" in r else "yes" if r["held"] else "no"
        lines.append(
            f"| {r['workload']} | {r['rate'] // 1000}k ({achieved}) | {r.get('keys', KEYS)} | "
            f"{r['system']} | "
            f"{sec(r['p50'])} | {sec(r['p99'])} | {sec(r['max'])} | {sec(r['growth'])} | {held} |"
        )
    return "\n".join(lines)


def write(path: str, args: argparse.Namespace, results: list[dict]) -> None:
    """The results so far, with the machine and the options."""
    Path(path).write_text(
        json.dumps({"machine": machine(), "args": vars(args), "results": results}, indent=1)
    )


if __name__ == "__main__":
    main()
