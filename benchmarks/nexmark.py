"""Nexmark's windowed queries on sparkwin, Spark's own windows and a Flink job, on the same
generated events in the same run, results checked equal before any timing is printed.

    python benchmarks/nexmark.py [--quick] [--events N] [--json PATH]
                                 [--systems sparkwin,native,flink,engine,floor]
                                 [--queries q5,q7,q8,q11] [--breakdown]

Events come from examples/nexmark/generator.py (10M by default, `--quick` 1M; 10,000 events a
second of event time, up to 2 s out of order; the watermark bound is Nexmark's 4 s). The Spark
systems stream them as parquet files (one per micro-batch, 20 files at 10M and 10 below, then
flush events a day later that close every window) on local[2] with run.py's settings, each after
an untimed warm-up run on 500k other events:
- `sparkwin`: the pipelines of examples/nexmark/queries.py.
- `native`: the same queries with Spark's `window()` / `session_window()` (q5 chains two
  aggregations through `window_time`, as Spark allows since 3.4).
- `flink`: the queries as DataStream jobs on a local MiniCluster (sbt project `flinkBench`,
  `FlinkNexmarkBench`; SPARKWIN_FLINK_CLASSPATH skips asking sbt), parallelism = cores, reading
  in 8 channels only the events a query needs (the bids; q8 the persons and auctions).
- `engine`: sparkwin's engine alone, one thread, no Spark (sbt project `bench`, EngineBench's
  `nexmark` mode; SPARKWIN_BENCH_CLASSPATH skips asking sbt) on the files the Flink job reads:
  the pipelines' windowing (q7's `maxByAll`), with q5's second stage (the most bids) and q8's
  both-kinds filter in plain Scala. Best of three runs after a warm-up.
- `floor`: not a query: the bids' key, time and price read from the same files by a stateless
  query that keeps no row, once; what any Spark system pays before windowing (run.py's floor).

q7's arg-max (the bids at the window's highest price, ties kept) is one `maxByAll` aggregate in
sparkwin's pipeline; native Spark joins each micro-batch's fired windows back to the bids of
their time range, as Nexmark's SQL does; the Flink job finds them incrementally in its window.
Every system's results are folded into one fingerprint: (rows, sum of values, sum of window
start in seconds times value, sum of keys): q5 (auction, bids) at the window's most, q7
(auction, price) of the highest bids, q8 (person, auctions opened; both Spark systems also
return the person's name, as Nexmark's q8 does, and every row must have one), q11 (bidder, bids
per session).

`--breakdown` says where each Spark run's time went (run.py's: micro-batch planning and
execution, the state operators' update and commit times from the query's progress, executor
time of the source and stateful stages, rows shuffled); it turns Spark's UI on.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import fingerprint, report  # noqa: E402
from benchmarks.sessions import benchSession  # noqa: E402
from benchmarks.systems.nexmark import BUILDERS, runSpark  # noqa: E402
from benchmarks.systems.nexmark_jvm import JVM_SYSTEMS, runJvm, writeJvmInput  # noqa: E402
from examples.nexmark import generator  # noqa: E402

QUERIES = ("q5", "q7", "q8", "q11")
SYSTEMS = ("sparkwin", "native", "flink", "engine", "floor")
DISORDER_MS = 2000
RATE = 10_000
GRANULE_MS = 7  # no two bids exactly a session gap apart (generator.py)
# The nexmark project's Flink 1.13 run (its README): 100M events, 8 slots on 8-core workers.
PUBLISHED = {"q5": 22_140, "q7": 12_330, "q8": 146_140, "q11": 39_700, "q12": 75_670}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1M events instead of 10M")
    parser.add_argument("--events", type=int, default=None)
    parser.add_argument("--json", default=None, help="write the cases to this file")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--queries", default=",".join(QUERIES))
    parser.add_argument("--warmup", type=int, default=500_000, help="warm-up events (0: none)")
    parser.add_argument(
        "--breakdown", action="store_true", help="say where each Spark run's time went"
    )
    args = parser.parse_args(argv)
    n = args.events or (1_000_000 if args.quick else 10_000_000)
    systems = [s for s in args.systems.split(",") if s]
    chosen = [q for q in args.queries.split(",") if q]
    scratch = tempfile.mkdtemp(prefix="sparkwin-nexmark-")
    try:
        cases = run(n, systems, chosen, args.warmup, scratch, args.breakdown)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    show(cases, args.json)


def run(
    n: int,
    systems: list[str],
    chosen: list[str],
    warmup: int,
    scratch: str,
    measure: bool = False,
) -> list[dict]:
    """Generates the events, runs every chosen query on every chosen system (the JVM systems
    first, then the Spark ones after a warm-up), and checks their results equal."""
    started = time.perf_counter()
    config = generator.NexmarkConfig(
        events=n, seed=42, rate=RATE, disorderMs=DISORDER_MS, granuleMs=GRANULE_MS
    )
    events = generator.generate(config)
    generated = time.perf_counter() - started
    print(f"generated {n:,} events in {generated:.1f} s", file=sys.stderr)
    directory = os.path.join(scratch, "events")
    generator.writeParquet(events, directory, 20 if n >= 5_000_000 else 10, flush=True)
    last = int(pc.max(events["ts"].cast(pa.int64())).as_py())
    cutoff = last + 3_600_000  # every real window starts before; the flush ones a day later
    cases: list[dict] = []
    jvmSystems = [s for s in systems if s in JVM_SYSTEMS]
    if jvmSystems:
        writeJvmInput(events, scratch)
    for system in jvmSystems:
        for query, r in runJvm(system, scratch, chosen).items():
            cases.append(case(query, system, n, r["seconds"], r["fingerprint"]))
            if "cpu_seconds" in r:
                cases[-1]["cpu_seconds"] = r["cpu_seconds"]
            print(f"  {query:5} {system:9} {r['seconds']:8.1f} s", file=sys.stderr)
    del events
    os.sync()
    sparkSystems = [s for s in systems if s in BUILDERS]
    if sparkSystems:
        spark = benchSession(
            "sparkwin-nexmark", **({"spark.ui.enabled": "true"} if measure else {})
        )
        if warmup:
            small = generator.NexmarkConfig(events=warmup, seed=7, rate=RATE, granuleMs=GRANULE_MS)
            warm = os.path.join(scratch, "warmup")
            generator.writeParquet(generator.generate(small), warm, 5, flush=True)
            for query in chosen:
                for system in [s for s in sparkSystems if query in BUILDERS[s]]:
                    runSpark(spark, warm, cutoff=2**62, query=query, system=system)
        runs = [(q, s) for q in chosen for s in sparkSystems if q in BUILDERS[s]]
        runs += [("floor", "floor")] if "floor" in sparkSystems else []
        for query, system in runs:
            r = runSpark(spark, directory, cutoff, query, system, measure)
            seconds, fp = r["seconds"], r["fingerprint"]
            assert isinstance(seconds, float) and isinstance(fp, list)
            cases.append(case(query, system, n, seconds, fp))
            if "breakdown" in r:
                cases[-1]["breakdown"] = r["breakdown"]
            print(f"  {query:5} {system:9} {seconds:8.1f} s", file=sys.stderr)
        spark.stop()
    check(cases)
    return cases


def show(cases: list[dict], jsonPath: str | None) -> None:
    """Prints the checked cases beside the published Flink figures (and their breakdown), and
    writes them to `jsonPath` with the machine."""
    for c in cases:
        native = next(
            (x for x in cases if x["query"] == c["query"] and x["system"] == "native"), None
        )
        c["ratio_to_native"] = round(native["seconds"] / c["seconds"], 2) if native else None
    print("\n" + report.nexmarkTable(cases, PUBLISHED))
    if any("breakdown" in c for c in cases):
        print("\n" + report.breakdownTable([{**c, "workload": c["query"]} for c in cases]))
    ran = report.machine()
    print(f"\nmachine: {ran}")
    if jsonPath:
        report.save(
            jsonPath, {"machine": ran, "published_flink_per_core": PUBLISHED, "cases": cases}
        )


def case(query: str, system: str, n: int, seconds: float, fingerprint: list[int]) -> dict:
    return {
        "query": query,
        "system": system,
        "events": n,
        "seconds": seconds,
        "fingerprint": list(fingerprint),
        "events_per_s": round(n / seconds),
        "events_per_s_per_core": round(n / seconds / (os.cpu_count() or 1)),
    }


def check(cases: list[dict]) -> None:
    """Same results everywhere, or no timings; and no query may come back empty."""
    for query in {c["query"] for c in cases} - {"floor"}:
        prints = {c["system"]: tuple(c["fingerprint"]) for c in cases if c["query"] == query}
        fingerprint.checkEqual(query, prints)
        if any(p[0] == 0 for p in prints.values()):
            raise SystemExit(f"{query} gave no rows: {prints}")


if __name__ == "__main__":
    main()
