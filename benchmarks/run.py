"""sparkwin's benchmarks: the engine alone, Flink's own WindowOperator, a Flink job, sparkwin on
Spark, Spark's own windows and an applyInPandasWithState implementation, on the same events, in
the same run.

    python benchmarks/run.py [--quick] [--json PATH]
                             [--systems engine,engine-keyed,flink-operator,flink,sparkwin,
                                        native,pandas,floor]
                             [--workloads tumbling,sliding,session,channels] [--slide MS]
                             [--gap MS] [--files N] [--breakdown] [--conf KEY=VALUE ...]
                             [--spark 3.5]
    python benchmarks/run.py --scale [benchmarks/scale.py's options]

`--spark LINE` runs the Spark systems on another supported line's PySpark (bin/matrix's cached
environment for it, made if missing) with this checkout's package and jars, e.g. `--spark 3.5`
for sparkwin on flatMapGroupsWithState against Spark 3.5's own windows.

The JVM systems run on the events file in a JVM of their own (sbt projects `bench` and
`flinkBench`; SPARKWIN_BENCH_CLASSPATH and SPARKWIN_FLINK_CLASSPATH skip asking sbt):
`engine` is sparkwin's engine in one thread as the local runtime runs it, `engine-keyed` the
per-key operators Spark's processor runs, `flink-operator` Flink's WindowOperator in one thread
(its operator test harness), and `flink` a DataStream job on a local MiniCluster with one slot
per core, reading the events in 8 channels with a watermark per channel (it also runs the
lagging `channels` workload). `flink` is timed once after a warm-up job, the others take the
best of three.

Results are checked equal across systems (windows, sum of values, sum of start x value)
before timings are reported. Spark systems read the events as a stream of parquet files
(one per micro-batch) on local[2] and run until all are processed; each first runs once,
untimed, on a warm-up input of its own, so no system pays for the JVM's warm-up.

`floor` is not a windowing system but Spark's floor under all three: the same stream through
a stateless query that keeps no row (same files, micro-batches and foreachBatch sink). No
Spark system can take less; its time is reported, not checked or compared.

`--breakdown` also says where each Spark run's time went: the micro-batch phases (planning,
execution, log commits), the state operator's update and commit time, and the executor time
of the source stage (scan and everything before the shuffle) and of the stateful stage, summed
over tasks, and the CPU time of Spark's whole JVM during the run (every thread: tasks, the state
store's background work, collections), which other processes on a shared machine do not
inflate. It turns Spark's UI on to read stage metrics.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402, N812
from pyspark.sql.streaming import StreamingQuery  # noqa: E402

import sparkwin as sw  # noqa: E402
from benchmarks import pandas_windows  # noqa: E402
from benchmarks.workloads import (  # noqa: E402
    BOUND_MS,
    LAG_MS,
    WORKLOADS,
    Events,
    Workload,
    generate,
)

SYSTEMS = (
    "engine",
    "engine-keyed",
    "flink-operator",
    "flink",
    "sparkwin",
    "native",
    "pandas",
    "floor",
)


@dataclass(frozen=True)
class JvmSystem:
    """A system that runs in its own JVM on the events file (not on Spark)."""

    project: str  # the sbt project with its classpath
    main: str
    classpath_variable: str  # gives the classpath instead of asking sbt
    args: tuple[str, ...] = ()  # before the events file
    after_bound: tuple[str, ...] = ()  # after the bound, before the workloads
    channels: bool = False  # runs the lagging workload with per-channel watermarks


JVM_SYSTEMS = {
    # Sparkwin's engine in one thread: as the local runtime runs it, and with the per-key
    # operators Spark's processor runs.
    "engine": JvmSystem(
        "bench", "sparkwin.bench.EngineBench", "SPARKWIN_BENCH_CLASSPATH", ("file",)
    ),
    "engine-keyed": JvmSystem(
        "bench", "sparkwin.bench.EngineBench", "SPARKWIN_BENCH_CLASSPATH", ("keyed",)
    ),
    # Flink's WindowOperator in one thread, and a Flink job on a MiniCluster with a slot a core.
    "flink-operator": JvmSystem(
        "flinkBench", "sparkwin.bench.FlinkOperatorBench", "SPARKWIN_FLINK_CLASSPATH"
    ),
    "flink": JvmSystem(
        "flinkBench",
        "sparkwin.bench.FlinkJobBench",
        "SPARKWIN_FLINK_CLASSPATH",
        after_bound=(str(os.cpu_count()),),
        channels=True,
    ),
}


def sparkwin_pipeline(df: DataFrame, w: Workload) -> sw.Pipeline:
    assigner = {
        "tumbling": lambda: sw.TumblingEventTimeWindows.of(w.size_ms),
        "sliding": lambda: sw.SlidingEventTimeWindows.of(w.size_ms, w.slide_ms),
        "session": lambda: sw.EventTimeSessionWindows.withGap(w.gap_ms),
    }[w.kind]()
    agg = sw.agg.sum("amount") if w.aggregate == "sum" else sw.agg.count()
    channel = "part" if w.channels else None
    strategy = sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS)
    return (
        sw.stream(df, "ts", channel=channel, watermark=strategy)
        .keyBy("key")
        .window(assigner)
        .aggregate(agg.alias("value"))
    )


def sparkwin_windows(df: DataFrame, w: Workload) -> DataFrame:
    out = sparkwin_pipeline(df, w).toDF()
    return out.select("key", F.unix_millis("window_start").alias("start"), "value")


def native_windows(df: DataFrame, w: Workload) -> DataFrame:
    watermarked = df.withWatermark("ts", f"{BOUND_MS + 1} milliseconds")
    window = {
        "tumbling": lambda: F.window("ts", f"{w.size_ms} milliseconds"),
        "sliding": lambda: F.window(
            "ts", f"{w.size_ms} milliseconds", f"{w.slide_ms} milliseconds"
        ),
        "session": lambda: F.session_window("ts", f"{w.gap_ms} milliseconds"),
    }[w.kind]()
    agg = F.sum("amount") if w.aggregate == "sum" else F.count(F.lit(1))
    grouped = watermarked.groupBy(window.alias("w"), "key").agg(agg.alias("value"))
    return grouped.select("key", F.unix_millis("w.start").alias("start"), "value")


def pandas_impl(df: DataFrame, w: Workload) -> DataFrame:
    watermarked = df.withWatermark("ts", f"{BOUND_MS + 1} milliseconds")
    return pandas_windows.windowed(watermarked, w).select("key", "start", "value")


def floor_pass(df: DataFrame, w: Workload) -> DataFrame:
    """Reads and projects every event and keeps none: Spark's cost before any windowing."""
    out = df.select("key", F.unix_millis("ts").alias("start"), F.col("amount").alias("value"))
    # On computed values, so no parquet statistics can skip the files' rows.
    return out.where(F.col("start") + F.col("value") < 0)


def completed_stages(spark: SparkSession) -> list[dict]:
    """Spark's completed stages with their metrics, from the UI's REST API."""
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages?status=complete"
    with urllib.request.urlopen(url) as response:
        return json.load(response)


def breakdown(query, stages: list[dict], partitions: int) -> dict:
    """Where one run's time went (milliseconds; stage times summed over tasks)."""
    out = {
        k: 0
        for k in (
            "planning",
            "execution",
            "log_commits",
            "state_updates",
            "state_commit",
            "source_stage_run",
            "source_stage_cpu",
            "stateful_stage_run",
            "stateful_stage_cpu",
            "gc",
            "shuffled_rows",
            "jvm_cpu",
        )
    }
    for p in query.recentProgress:
        d = p.durationMs
        out["planning"] += d.get("queryPlanning", 0)
        out["execution"] += d.get("addBatch", 0)
        out["log_commits"] += d.get("walCommit", 0) + d.get("commitOffsets", 0)
        for op in p.stateOperators:
            out["state_updates"] += op.allUpdatesTimeMs + op.allRemovalsTimeMs
            out["state_commit"] += op.commitTimeMs
    out["stateful_stage_cpu_batches"] = []  # per micro-batch, in order: the cost model's data
    for st in sorted(stages, key=lambda st: st["stageId"]):
        # The source stage reads the files; the stateful one has a task per shuffle partition.
        kind = (
            "source"
            if st["inputRecords"] > 0
            else "stateful"
            if st["numTasks"] == partitions
            else None
        )
        if kind:
            out[f"{kind}_stage_run"] += st["executorRunTime"]
            out[f"{kind}_stage_cpu"] += st["executorCpuTime"] // 1_000_000
        if kind == "stateful":
            out["stateful_stage_cpu_batches"].append(st["executorCpuTime"] // 1_000_000)
        if kind == "source":
            out["shuffled_rows"] += st["shuffleWriteRecords"]
        out["gc"] += st.get("jvmGcTime", 0)
    return out


def jvmCpuMs(spark: SparkSession) -> int:
    """The CPU time of Spark's JVM so far, every thread (tasks, RocksDB's background work, GC),
    in milliseconds: on a shared machine a run's wall time also counts other processes' turns.
    The JVM is the process PySpark started (spark-submit execs java); Linux's /proc says."""
    pid = spark.sparkContext._gateway.proc.pid
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    return ticks * 1000 // os.sysconf("SC_CLK_TCK")


def wrapped(total: int) -> int:
    """`total` as a JVM long sum gives it (wrapping at 2^64), as the JVM systems report it."""
    return (total + 2**63) % 2**64 - 2**63


def run_spark(
    spark: SparkSession, events: Events, w: Workload, system: str, measure: bool = False
) -> dict:
    """Streams the files through one system; returns seconds and the result fingerprint (and,
    with `measure`, the time breakdown)."""
    schema = "key string, ts timestamp, amount long" + (", part int" if w.channels else "")
    if w.lagged:
        schema += ", lagged timestamp"
    source = (
        spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(events.directory)
    )
    if w.lagged:  # every system sees the same events, with channel 7 ten minutes behind
        source = source.drop("ts").withColumnRenamed("lagged", "ts")
    build = {
        "sparkwin": sparkwin_windows,
        "native": native_windows,
        "pandas": pandas_impl,
        "floor": floor_pass,
    }[system]
    results = build(source, w)
    print_ = {"windows": 0, "sum": 0, "weighted": 0}

    def fingerprint(batch: DataFrame, _: int) -> None:
        # The flush key is left out here, not in the query: Spark would push such a filter
        # below its aggregation, drop the flush event, and never close the last windows.
        row = (
            batch.where(F.col("key") != events.flush_key)
            .agg(
                F.count(F.lit(1)).alias("windows"),
                F.coalesce(F.sum("value"), F.lit(0)).alias("sum"),
                # In decimal: with tens of millions of windows the weighted sum leaves a long.
                F.coalesce(
                    F.sum(
                        (F.floor(F.col("start") / 1000).cast("long") * F.col("value")).cast(
                            "decimal(38,0)"
                        )
                    ),
                    F.lit(0),
                ).alias("w"),
            )
            .collect()[0]
        )
        print_["windows"] += row["windows"]
        print_["sum"] += row["sum"]
        print_["weighted"] += int(row["w"])

    checkpoint = tempfile.mkdtemp(
        prefix=f"checkpoint-{system}-", dir=os.path.dirname(events.directory)
    )
    before = {st["stageId"] for st in completed_stages(spark)} if measure else set()
    cpuBefore = jvmCpuMs(spark) if measure else 0
    seconds, query = timedStream(results, fingerprint, checkpoint)
    cpuAfter = jvmCpuMs(spark) if measure else 0
    result = {
        "seconds": seconds,
        "windows": print_["windows"],
        "sum": print_["sum"],
        "weighted": wrapped(print_["weighted"]),
        # Events dropped as late: Spark's own count before its stateful operators, sparkwin's.
        "dropped_late": sum(
            op["numRowsDroppedByWatermark"]
            for p in query.recentProgress
            for op in p["stateOperators"]
        )
        + sum(sw.observedMetrics(p).get("droppedLate", 0) for p in query.recentProgress),
    }
    if measure:
        stages = [st for st in completed_stages(spark) if st["stageId"] not in before]
        partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
        result["breakdown"] = breakdown(query, stages, partitions)
        result["breakdown"]["jvm_cpu"] = cpuAfter - cpuBefore
    return result


def timedStream(
    results: DataFrame, batchFunction: Callable[[DataFrame, int], None], checkpoint: str
) -> tuple[float, StreamingQuery]:
    """Streams `results` into `batchFunction` until every file is processed; the seconds that
    took and the stopped query (its progress)."""
    started = time.perf_counter()
    query = (
        results.writeStream.foreachBatch(batchFunction)
        .option("checkpointLocation", checkpoint)
        .start()
    )
    query.processAllAvailable()
    seconds = time.perf_counter() - started
    query.stop()
    return seconds, query


def engineClasspath(project: str = "bench") -> str:
    """An sbt project's classpath (SPARKWIN_BENCH_CLASSPATH, SPARKWIN_FLINK_CLASSPATH skip it)."""
    return (
        subprocess.run(
            [str(ROOT / "bin" / "sbt"), "-error", f"export {project}/Runtime/fullClasspath"],
            env={**os.environ, "SPARKWIN_PYTHON": sys.executable},
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )


def jvm_workload(w: Workload) -> str:
    """The workload as the JVM benches name it: tumbling, sliding:slideMs, session:gapMs or
    channels:lagMs (tumbling on the lagging input)."""
    if w.lagged:
        return f"channels:{LAG_MS}"
    return {"tumbling": "tumbling", "sliding": f"sliding:{w.slide_ms}"}.get(
        w.kind, f"session:{w.gap_ms}"
    )


def run_engine(
    events: Events, workloads: list[Workload], system: str = "engine"
) -> dict[str, dict]:
    """A JVM system on the same events file (JVM_SYSTEMS): sparkwin's engine or Flink's operator
    in one thread, or a Flink job."""
    jvm = JVM_SYSTEMS[system]
    classpath = os.environ.get(jvm.classpath_variable) or engineClasspath(jvm.project)
    # Only systems with per-channel watermarks run the lagging workload (the others see one
    # channel).
    workloads = [w for w in workloads if jvm.channels or not w.channels]
    lines = runJava(
        classpath,
        jvm.main,
        *jvm.args,
        events.binary,
        str(BOUND_MS),
        *jvm.after_bound,
        *[jvm_workload(w) for w in workloads],
    )
    results = {r["workload"]: r for r in lines}
    return {w.name: results[jvm_workload(w)] for w in workloads}


def runJava(classpath: str, main: str, *args: str) -> list[dict]:
    """Runs a benchmark's JVM main with the benches' heap and collector; the JSON lines it
    printed."""
    out = subprocess.run(
        ["java", "-Xmx6g", "-XX:+UseParallelGC", "-cp", classpath, main, *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def benchSession(appName: str, **conf: str) -> SparkSession:
    """The Spark session every benchmark's Spark systems share: local[2], 4 shuffle partitions,
    UTC, a 4 GiB driver heap, `conf` on top."""
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


def machine() -> dict:
    """What a run ran on, for its JSON."""
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "spark": __import__("pyspark").__version__,
        "java": subprocess.run(
            ["java", "-version"], capture_output=True, text=True
        ).stderr.splitlines()[0],
        "platform": platform.platform(),
    }


def print_breakdown(cases: list[dict]) -> None:
    """Seconds per phase; stage columns are executor run (cpu) time summed over tasks."""
    header = ("workload", "system", "plan", "execute", "logs", "st.upd", "st.commit")
    print(
        "\n{:22} {:9} {:>6} {:>8} {:>6} {:>7} {:>9}  {:>15} {:>15} {:>5} {:>9} {:>8}".format(
            *header, "source run(cpu)", "state run(cpu)", "gc", "shuffled", "jvm cpu"
        )
    )
    for c in cases:
        b = c.get("breakdown")
        if not b:
            continue

        def sec(ms: int) -> str:
            return f"{ms / 1000:.2f}"

        print(
            f"{c['workload']:22} {c['system']:9} {sec(b['planning']):>6} "
            f"{sec(b['execution']):>8} {sec(b['log_commits']):>6} {sec(b['state_updates']):>7} "
            f"{sec(b['state_commit']):>9}  "
            f"{sec(b['source_stage_run']) + ' (' + sec(b['source_stage_cpu']) + ')':>15} "
            f"{sec(b['stateful_stage_run']) + ' (' + sec(b['stateful_stage_cpu']) + ')':>15} "
            f"{sec(b['gc']):>5} {b['shuffled_rows']:>9} {sec(b['jvm_cpu']):>8}"
        )


def spark_setting(text: str) -> tuple[str, str]:
    """One `--conf KEY=VALUE`, as a (key, value) pair."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(
            f"--conf takes KEY=VALUE, e.g. --conf spark.sql.shuffle.partitions=8; got {text!r}"
        )
    return key.strip(), value


def resized(w: Workload, args: argparse.Namespace) -> Workload:
    """The workload with --slide or --gap applied (and named for it)."""
    if w.kind == "sliding" and args.slide and not w.channels:
        return replace(w, name=f"sliding 10m/{args.slide / 1000:g}s sum", slide_ms=args.slide)
    if w.kind == "session" and args.gap:
        return replace(w, name=f"session {args.gap / 1000:g}s count", gap_ms=args.gap)
    return w


def onLine(line: str, argv: list[str]) -> None:
    """Runs this script again, without `--spark`, on PySpark `line`'s matrix environment."""
    from sparkwin._support import LINES

    chosen = next((x for x in LINES if x.name == line), None)
    if chosen is None:
        raise SystemExit(f"--spark {line}: the supported lines are {[x.name for x in LINES]}")
    subprocess.run([str(ROOT / "bin" / "matrix"), "--prepare", chosen.tested], check=True)
    cache = os.environ.get("SPARKWIN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "sparkwin"
    )
    python = os.path.join(cache, "matrix", f"pyspark-{chosen.tested}", "bin", "python")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python"), "PYSPARK_PYTHON": python}
    os.execve(python, [python, __file__, *argv], env)


def main() -> None:
    if "--spark" in sys.argv:  # another line's PySpark: run there, Spark systems only
        at = sys.argv.index("--spark")
        rest = sys.argv[1:at] + sys.argv[at + 2 :]
        if not any(a.startswith("--systems") for a in rest):
            rest += ["--systems", "sparkwin,native"]
        onLine(sys.argv[at + 1], rest)
    if "--scale" in sys.argv:  # how cost grows: benchmarks/scale.py, one run of this per point
        from benchmarks import scale

        scale.main([a for a in sys.argv[1:] if a != "--scale"])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="about 1M events instead of 10M")
    parser.add_argument("--events", type=int, default=None)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--json", default=None, help="write the cases to this file")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument(
        "--workloads",
        default=None,
        help="comma-separated: tumbling,sliding,session,channels",
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="say where each Spark run's time went"
    )
    parser.add_argument("--slide", type=int, default=None, help="the sliding workload's slide, ms")
    parser.add_argument("--gap", type=int, default=None, help="the session workload's gap, ms")
    parser.add_argument(
        "--files",
        type=int,
        default=None,
        help="parquet files, one a micro-batch (default 10; 20 from 5M events)",
    )
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        type=spark_setting,
        metavar="KEY=VALUE",
        help="a Spark setting for every Spark system (repeatable)",
    )
    args = parser.parse_args()
    if args.files is not None and args.files < 1:
        parser.error(
            f"--files takes 1 or more (a file a micro-batch), e.g. --files 100; got {args.files}"
        )
    n = args.events or (1_000_000 if args.quick else 10_000_000)
    systems = [s for s in args.systems.split(",") if s]
    chosen = args.workloads.split(",") if args.workloads else None
    workloads = [
        resized(w, args)
        for w in WORKLOADS
        if chosen is None or ("channels" if w.channels else w.kind) in chosen
    ]

    # Events, warm-up input and checkpoints share one scratch directory, removed at the end.
    scratch = tempfile.mkdtemp(prefix="sparkwin-bench-")
    try:
        run(args, n, systems, workloads, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(
    args: argparse.Namespace, n: int, systems: list[str], workloads: list, scratch: str
) -> None:
    files = args.files or (20 if n >= 5_000_000 else 10)
    events = generate(os.path.join(scratch, "events"), n, args.keys, files, 7)
    # The kernel writes the fresh files back to disk in the background; on two cores that
    # would run beside the first timed system.
    os.sync()
    cases: list[dict] = []
    for system in [s for s in systems if s in JVM_SYSTEMS]:
        for name, r in run_engine(events, workloads, system).items():
            cases.append(
                {
                    "workload": name,
                    "system": system,
                    "events": n,
                    "seconds": r["seconds"],
                    "fingerprint": [r["windows"], r["sum"], r["weighted"]],
                }
            )
    spark_systems = [s for s in systems if s not in JVM_SYSTEMS]
    if spark_systems:
        spark = benchSession(
            "sparkwin-bench",
            **({"spark.ui.enabled": "true"} if args.breakdown else {}),
            **dict(args.conf),
        )
        # Untimed warm-up of every (workload, system): the first query in a JVM pays for class
        # loading, JIT and state-store start-up, whichever system runs first. The warm-up has
        # --quick's shape (1M events, 100k a micro-batch): after 200k in batches of 50k, a second
        # timed 1M tumbling run was 2.3 s faster than the first for sparkwin, 0.7 s for native.
        # Pandas runs in Python, which has nothing to compile: a small input starts its workers.
        warmup = generate(os.path.join(scratch, "warmup"), 1_000_000, args.keys, 10, 11)
        small = generate(os.path.join(scratch, "warmup-small"), 20_000, args.keys, 3, 11)
        for w in workloads:
            for system in spark_systems:
                run_spark(spark, small if system == "pandas" else warmup, w, system)
        for w in workloads:
            for system in spark_systems:
                r = run_spark(spark, events, w, system, measure=args.breakdown)
                cases.append(
                    {
                        "workload": w.name,
                        "system": system,
                        "events": n,
                        "seconds": r["seconds"],
                        "fingerprint": [r["windows"], r["sum"], r["weighted"]],
                        "dropped_late": r["dropped_late"],
                        **({"breakdown": r["breakdown"]} if "breakdown" in r else {}),
                    }
                )
                print(f"  {w.name:28} {system:9} {r['seconds']:8.1f} s", file=sys.stderr)
        spark.stop()

    # Same results everywhere, or no timings. On the lagging workload one watermark drops events,
    # so only the systems with per-channel watermarks (sparkwin, flink) must give the whole
    # answer, known from the generator.
    for w in workloads:
        prints = {
            c["system"]: tuple(c["fingerprint"])
            for c in cases
            if c["workload"] == w.name and c["system"] != "floor"
        }
        if w.lagged:
            whole = tuple(events.lagged_fingerprint)
            for system in ("sparkwin", "flink"):
                if prints.get(system, whole) != whole:
                    raise SystemExit(
                        f"{system} lost events on {w.name}: {prints[system]} != {whole}"
                    )
        elif len(set(prints.values())) > 1:
            raise SystemExit(f"results differ for {w.name}: {prints}")
    for c in cases:
        c["events_per_s"] = round(c["events"] / c["seconds"])
    for c in cases:
        native = next(
            (x for x in cases if x["workload"] == c["workload"] and x["system"] == "native"), None
        )
        c["ratio_to_native"] = (
            round(c["events_per_s"] / native["events_per_s"], 2)
            if native and c["system"] != "floor"
            else None
        )

    header = ("workload", "system", "events", "seconds", "events/s", "x native", "late drops")
    print("\n{:28} {:14} {:>10} {:>8} {:>11} {:>8} {:>10}".format(*header))
    for c in cases:
        ratio = f"{c['ratio_to_native']:.2f}" if c["ratio_to_native"] is not None else "-"
        print(
            f"{c['workload']:28} {c['system']:14} {c['events']:>10} {c['seconds']:>8.2f} "
            f"{c['events_per_s']:>11,} {ratio:>8} {c.get('dropped_late', '-'):>10}"
        )
    if args.breakdown:
        print_breakdown(cases)
    ran = machine()
    print(f"\nmachine: {ran}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": ran, "cases": cases}, f, indent=2)


if __name__ == "__main__":
    main()
