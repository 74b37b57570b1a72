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
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyspark.sql import SparkSession  # noqa: E402

from benchmarks import measure, pane_path, report, topics  # noqa: E402
from benchmarks.latency_stats import check, closingTimes, latencies, summary  # noqa: E402
from benchmarks.producer import produceAtRate  # noqa: E402
from benchmarks.services import BROKER_JVMS, KafkaBroker, fetchKafkaJars  # noqa: E402
from benchmarks.sessions import latencySession  # noqa: E402
from benchmarks.systems.jvm import sbtClasspath  # noqa: E402
from benchmarks.systems.latency import (  # noqa: E402
    BOUND_MS,
    PARTITIONS,
    SYSTEMS,
    WATERMARK,
    WORKLOADS,
    readPanes,
    startFlink,
    startSpark,
)

KEYS = 16  # the default key count


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
    """One system on one workload at one rate and key count, on topics of its own: started,
    fed by the producer, drained, stopped; its panes checked, then their latencies."""
    servers = broker.bootstrapServers
    run = f"{system}-{workload}-{rate}-{keys}-{uuid.uuid4().hex[:6]}"
    inTopic, outTopic = topics.createInputAndOutput(spark, servers, run, PARTITIONS)
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
            batchMs[:], batches[:] = measure.batchTimes(query.recentProgress)
            stateOps.update(measure.stateOperatorMedians(query.recentProgress))
            query.stop()
            shutil.rmtree(checkpoint, ignore_errors=True)

    try:
        time.sleep(args.settle)  # the query's or job's first poll of the (empty) topic
        with tempfile.TemporaryDirectory() as tmp:
            truth = produceAtRate(
                classpath,
                servers,
                inTopic,
                PARTITIONS,
                rate,
                args.warmup + args.seconds + args.cooldown,
                keys,
                BOUND_MS,
                f"{tmp}/truth.json",
            )
        drained = topics.awaitQuiet(spark, servers, outTopic, args.quiet, args.drain)
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
            report.latencyMarkdown(
                [r for f in args.markdown for r in json.loads(Path(f).read_text())["results"]],
                KEYS,
            )
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
    classpath = os.environ.get("SPARKWIN_FLINK_CLASSPATH") or sbtClasspath("flinkBench")
    fetchKafkaJars()
    spark = latencySession(args.jfr, args.trace_panes, args.interval_ms, args.java_options)
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
    print("\n" + report.latencyTable(results))
    failed = [r for r in results if "error" in r]
    for r in failed:
        print(f"{r['system']} {r['workload']} {r['rate']} {r.get('keys', KEYS)}: {r['error']}")
    if failed:
        sys.exit(1)


def write(path: str, args: argparse.Namespace, results: list[dict]) -> None:
    """The results so far, with the machine and the options."""
    report.save(path, {"machine": report.machine(), "args": vars(args), "results": results}, 1)


if __name__ == "__main__":
    main()
