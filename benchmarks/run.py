"""sparkwin's benchmarks: the engine alone, Flink's own WindowOperator, a Flink job, sparkwin on
Spark, Spark's own windows and an applyInPandasWithState implementation, on the same events, in
the same run.

    python benchmarks/run.py [--quick] [--json PATH]
                             [--systems engine,engine-keyed,flink-operator,flink,sparkwin,
                                        native,pandas,floor,sparkwin-tws]
                             [--workloads tumbling,sliding,session,channels] [--slide MS]
                             [--gap MS] [--files N] [--breakdown] [--conf KEY=VALUE ...]
                             [--warmup-batches N] [--spark 3.5]
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
untimed, on a warm-up input of its own (3 micro-batches of 100k events with --quick, 10
without; `--warmup-batches N`), so no system pays for the JVM's start.

`sparkwin-tws` (not in the default run) is sparkwin on `transformWithState`, where a stream runs
without a new checkpoint sparkwin knows (real-time mode, chained pipelines, `toDF()` alone);
`sparkwin` is given its checkpoint, as `writeStream` gives it, and runs on
`flatMapGroupsWithState`.

`floor` is not a windowing system but Spark's floor under all three: the same stream through
a stateless query that keeps no row (same files, micro-batches and foreachBatch sink). No
Spark system can take less; its time is reported, not checked or compared.

`--breakdown` also says where each Spark run's time went: the micro-batch phases (planning,
execution, log commits), the state operator's update and commit time, and the executor time
of the source stage (scan and everything before the shuffle) and of the stateful stage, summed
over tasks, and the CPU time of Spark's whole JVM during the run (every thread: tasks, the state
store's background work, collections), which other processes on a shared machine do not
inflate, and the part of it the JIT compiler spent (`jit`). It turns Spark's UI on to read
stage metrics.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import fingerprint, report  # noqa: E402
from benchmarks.sessions import benchSession  # noqa: E402
from benchmarks.systems.jvm import JVM_SYSTEMS, run_engine  # noqa: E402
from benchmarks.systems.windows import run_spark  # noqa: E402
from benchmarks.workloads import WORKLOADS, Workload, generate  # noqa: E402

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
        "--warmup-batches",
        type=int,
        default=None,
        help="each Spark system's untimed warm-up, micro-batches of 100k events (3 with --quick, "
        "else 10)",
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
    if args.warmup_batches is not None and args.warmup_batches < 1:
        parser.error(
            "--warmup-batches takes 1 or more (micro-batches of 100k events), e.g. "
            f"--warmup-batches 30; got {args.warmup_batches}"
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
        # --quick's batches (100k events): after 200k in batches of 50k, a second timed 1M
        # tumbling run was 2.3 s faster than the first for sparkwin, 0.7 s for native. A quick
        # look warms up on 3 such batches, a full run on 10. The JIT is not done then: in the
        # 3rd and 4th 1M-event runs of one JVM it still compiled for 42-59% of its CPU time.
        # Pandas runs in Python, which has nothing to compile: a small input starts its workers.
        batches = args.warmup_batches or (3 if args.quick else 10)
        warmup = generate(
            os.path.join(scratch, "warmup"), batches * 100_000, args.keys, batches, 11
        )
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
        else:
            fingerprint.checkEqual(w.name, prints)
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

    print("\n" + report.throughputTable(cases))
    if args.breakdown:
        print("\n" + report.breakdownTable(cases))
    ran = report.machine()
    print(f"\nmachine: {ran}")
    if args.json:
        report.save(args.json, {"machine": ran, "cases": cases})


if __name__ == "__main__":
    main()
