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
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta as td
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402, N812

from benchmarks.run import (  # noqa: E402
    benchSession,
    breakdown,
    completed_stages,
    engineClasspath,
    machine,
    print_breakdown,
    runJava,
    timedStream,
    wrapped,
)
from examples.nexmark import generator, queries  # noqa: E402

QUERIES = ("q5", "q7", "q8", "q11")
SYSTEMS = ("sparkwin", "native", "flink", "engine", "floor")
JVM_SYSTEMS = {  # system: (sbt project, main, its classpath's variable, arguments before the dir)
    "flink": ("flinkBench", "sparkwin.bench.FlinkNexmarkBench", "SPARKWIN_FLINK_CLASSPATH", ()),
    "engine": ("bench", "sparkwin.bench.EngineBench", "SPARKWIN_BENCH_CLASSPATH", ("nexmark",)),
}
BOUND = td(seconds=4)
BOUND_MS = 4000
DISORDER_MS = 2000
RATE = 10_000
GRANULE_MS = 7  # no two bids exactly a session gap apart (generator.py)
AUCTION_BITS = 22  # q7's Flink records carry price << 22 | auction
CHANNELS = 8
# The nexmark project's Flink 1.13 run (its README): 100M events, 8 slots on 8-core workers.
PUBLISHED = {"q5": 22_140, "q7": 12_330, "q8": 146_140, "q11": 39_700, "q12": 75_670}


def nativeBids(events: DataFrame, *columns: str) -> DataFrame:
    return queries.bids(events, *columns).withWatermark("ts", f"{BOUND_MS + 1} milliseconds")


def nativeQ5(events: DataFrame) -> DataFrame:
    counts = (
        nativeBids(events, "auction", "ts")
        .groupBy(F.window("ts", "10 seconds", "2 seconds").alias("w"), "auction")
        .agg(F.count(F.lit(1)).alias("num"))
    )
    perWindow = counts.groupBy(F.window(F.window_time("w"), "2 seconds").alias("w")).agg(
        F.max("num").alias("max_num"), F.collect_list(F.struct("num", "auction")).alias("entries")
    )
    return perWindow.select(
        (F.col("w.end") - F.expr("INTERVAL 10 SECONDS")).alias("window_start"),
        F.explode(F.filter("entries", lambda e: e["num"] == F.col("max_num"))).alias("e"),
    ).select(F.col("e.auction").alias("key"), "window_start", F.col("e.num").alias("value"))


def nativeQ7(events: DataFrame) -> DataFrame:
    return (
        nativeBids(events, "price", "ts")
        .groupBy(F.window("ts", "10 seconds").alias("w"))
        .agg(F.max("price").alias("max_price"))
        .select(
            F.col("w.start").alias("window_start"), F.col("w.end").alias("window_end"), "max_price"
        )
    )


def nativeQ8(events: DataFrame) -> DataFrame:
    return (
        queries.sellersAndPersons(events)
        .withWatermark("ts", f"{BOUND_MS + 1} milliseconds")
        .groupBy(F.window("ts", "10 seconds").alias("w"), "person")
        .agg(
            F.max("name").alias("name"),
            F.count("name").alias("joined"),
            F.count("auction_id").alias("auctions"),
        )
        .where((F.col("joined") > 0) & (F.col("auctions") > 0))
        .select(
            F.col("person").alias("key"),
            F.col("w.start").alias("window_start"),
            F.col("auctions").alias("value"),
            "name",
        )
    )


def nativeQ11(events: DataFrame) -> DataFrame:
    return (
        nativeBids(events, "bidder", "ts")
        .groupBy(F.session_window("ts", "10 seconds").alias("w"), "bidder")
        .agg(F.count(F.lit(1)).alias("value"))
        .select(F.col("bidder").alias("key"), F.col("w.start").alias("window_start"), "value")
    )


def sparkwinQ5(events: DataFrame) -> DataFrame:
    return queries.q5HotItems(events, BOUND).select(
        F.col("auction").alias("key"), "window_start", F.col("num").alias("value")
    )


def sparkwinQ7(events: DataFrame) -> DataFrame:
    return queries.q7(events, BOUND).select(
        F.col("auction").alias("key"), "window_start", F.col("price").alias("value")
    )


def sparkwinQ8(events: DataFrame) -> DataFrame:
    return queries.q8NewUsers(events, BOUND).select(
        F.col("person").alias("key"), "window_start", F.col("auctions").alias("value"), "name"
    )


def sparkwinQ11(events: DataFrame) -> DataFrame:
    return queries.q11UserSessions(events, BOUND).select(
        F.col("bidder").alias("key"), "window_start", F.col("bid_count").alias("value")
    )


def floorPass(events: DataFrame) -> DataFrame:
    """Reads every bid's key, time and price and keeps none: what any Spark system pays for
    these files before it windows anything (run.py's `floor`)."""
    out = queries.bids(events, "bidder", "ts", "price").select(
        F.col("bidder").alias("key"),
        F.col("ts").alias("window_start"),
        F.col("price").alias("value"),
    )
    # On computed values, so no parquet statistics can skip the files' rows.
    return out.where(F.unix_millis("window_start") + F.col("value") < 0)


BUILDERS: dict[str, dict[str, Callable[[DataFrame], DataFrame]]] = {
    "sparkwin": {"q5": sparkwinQ5, "q7": sparkwinQ7, "q8": sparkwinQ8, "q11": sparkwinQ11},
    "native": {"q5": nativeQ5, "q7": nativeQ7, "q8": nativeQ8, "q11": nativeQ11},
    "floor": {"floor": floorPass},  # not a query: run once, not checked
}


def highestBids(spark: SparkSession, directory: str, highest: DataFrame) -> DataFrame:
    """Native q7's second half, for one micro-batch of fired windows (`nativeQ7`'s): their bids
    at the highest price, joined back from the files of their time range as Nexmark's SQL joins
    them (the files are in event order, so parquet's statistics skip the rest)."""
    low, high = highest.agg(
        F.min(F.unix_millis("window_start")), F.max(F.unix_millis("window_end"))
    ).collect()[0]
    if low is None:
        return highest.select(F.lit(0).alias("key"), "window_start", F.lit(0).alias("value"))
    bidsInRange = queries.bids(spark.read.parquet(directory)).where(
        (F.col("ts") >= F.timestamp_millis(F.lit(low)))
        & (F.col("ts") < F.timestamp_millis(F.lit(high)))
    )
    matched = bidsInRange.join(
        F.broadcast(highest.select("window_start", "window_end", "max_price")),
        (F.col("price") == F.col("max_price"))
        & (F.col("ts") >= F.col("window_start"))
        & (F.col("ts") < F.col("window_end")),
    )
    return matched.select(
        F.col("auction").alias("key"), "window_start", F.col("price").alias("value")
    )


def runSpark(
    spark: SparkSession,
    directory: str,
    cutoff: int,
    query: str,
    system: str,
    measure: bool = False,
) -> dict[str, object]:
    """Streams the files through one system's query; seconds and the fingerprint (and, with
    `measure`, run.py's breakdown of the time)."""
    source = (
        spark.readStream.schema(generator.SCHEMA_DDL)
        .option("maxFilesPerTrigger", 1)
        .parquet(directory)
    )
    results = BUILDERS[system][query](source)
    totals = [0, 0, 0, 0]

    def fingerprint(batch: DataFrame, _: int) -> None:
        if query == "q7" and system == "native":
            batch = highestBids(spark, directory, batch)
        # The flush events' windows (a day after the data) are left out.
        real = batch.where(F.unix_millis("window_start") < cutoff)
        if query == "q8":
            # Both systems return the person's name, as Nexmark's q8 does; reading it here
            # keeps Spark from pruning native's max(name) when the fingerprint drops it.
            real = real.where(F.col("name").isNotNull())
        row = real.agg(
            F.count(F.lit(1)),
            F.coalesce(F.sum("value"), F.lit(0)),
            F.coalesce(
                F.sum(
                    (F.floor(F.unix_millis("window_start") / 1000) * F.col("value")).cast(
                        "decimal(38,0)"
                    )
                ),
                F.lit(0),
            ),
            F.coalesce(F.sum("key"), F.lit(0)),
        ).collect()[0]
        for i in range(4):
            totals[i] += int(row[i])

    checkpoint = tempfile.mkdtemp(prefix=f"checkpoint-{system}-{query}-")
    before = {st["stageId"] for st in completed_stages(spark)} if measure else set()
    try:
        seconds, stream = timedStream(results, fingerprint, checkpoint)
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)
    out: dict[str, object] = {"seconds": seconds, "fingerprint": [wrapped(t) for t in totals]}
    if measure:
        stages = [st for st in completed_stages(spark) if st["stageId"] not in before]
        partitions = int(str(spark.conf.get("spark.sql.shuffle.partitions")))
        out["breakdown"] = breakdown(stream, stages, partitions)
    return out


def writeJvmInput(events: pa.Table, directory: str) -> None:
    """Each query's events for the JVM systems in run.py's binary layout (<i4 key, <i8 ts, <i8
    amount>), in arrival order, then one flush record per channel on a key of its own, a day
    later: the bids for q5, q7 and q11; for q8 the persons (amount 1 << 32) and the auctions
    (amount 1), keyed by the person."""
    bidRows = events.filter(pc.equal(events["event_type"], "bid"))
    ts = bidRows["ts"].cast(pa.int64()).to_numpy()
    auction = bidRows["auction"].to_numpy()
    bidder = bidRows["bidder"].to_numpy()
    price = bidRows["price"].to_numpy()
    flushTs = int(ts.max()) + generator.FLUSH_AFTER_MS
    if (auction >= 1 << AUCTION_BITS).any():
        raise ValueError("too many auctions for q7's packed records")
    newUsers = events.filter(pc.is_in(events["event_type"], pa.array(["person", "auction"])))
    isPerson = pc.equal(newUsers["event_type"], "person").to_numpy(zero_copy_only=False)
    person = pc.coalesce(newUsers["person_id"], newUsers["seller"]).to_numpy()
    columns = {
        "q5": (ts, auction, np.ones_like(auction)),
        "q7": (ts, np.zeros_like(auction), (price << AUCTION_BITS) | auction),
        "q8": (
            newUsers["ts"].cast(pa.int64()).to_numpy(),
            person,
            np.where(isPerson, 1 << 32, 1).astype(np.int64),
        ),
        "q11": (ts, bidder, np.ones_like(bidder)),
    }
    record = np.dtype([("key", "<i4"), ("ts", "<i8"), ("amount", "<i8")])
    for query, (ts, key, amount) in columns.items():
        rows = np.empty(len(ts) + CHANNELS, dtype=record)
        rows["key"][: len(ts)], rows["ts"][: len(ts)], rows["amount"][: len(ts)] = key, ts, amount
        rows["key"][len(ts) :] = int(key.max()) + 1
        rows["ts"][len(ts) :] = flushTs
        rows["amount"][len(ts) :] = 0
        rows.tofile(os.path.join(directory, f"{query}.bin"))


def runJvm(system: str, directory: str, chosen: list[str]) -> dict[str, dict]:
    """The Flink job or the engine alone on the files writeJvmInput wrote; per query the JSON
    line it printed (seconds, fingerprint)."""
    project, main, variable, before = JVM_SYSTEMS[system]
    classpath = os.environ.get(variable) or engineClasspath(project)
    after = (str(os.cpu_count()),) if system == "flink" else ()  # the job's parallelism
    lines = runJava(classpath, main, *before, directory, str(BOUND_MS), *after, *chosen)
    return {r["query"]: r for r in lines}


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
    report(cases, args.json)


def run(
    n: int,
    systems: list[str],
    chosen: list[str],
    warmup: int,
    scratch: str,
    measure: bool = False,
) -> list[dict]:
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
        if len(set(prints.values())) > 1:
            raise SystemExit(f"results differ for {query}: {prints}")
        if any(p[0] == 0 for p in prints.values()):
            raise SystemExit(f"{query} gave no rows: {prints}")


def report(cases: list[dict], jsonPath: str | None) -> None:
    for c in cases:
        native = next(
            (x for x in cases if x["query"] == c["query"] and x["system"] == "native"), None
        )
        c["ratio_to_native"] = round(native["seconds"] / c["seconds"], 2) if native else None
    header = ("query", "system", "events", "seconds", "events/s", "per core", "x native")
    print("\n{:6} {:9} {:>11} {:>8} {:>10} {:>9} {:>8}   published Flink per core".format(*header))
    for c in cases:
        ratio = f"{c['ratio_to_native']:.2f}" if c["ratio_to_native"] is not None else "-"
        published = f"{PUBLISHED[c['query']]:,}" if c["query"] in PUBLISHED else "-"
        print(
            f"{c['query']:6} {c['system']:9} {c['events']:>11,} {c['seconds']:>8.2f} "
            f"{c['events_per_s']:>10,} {c['events_per_s_per_core']:>9,} {ratio:>8}   {published}"
        )
    print("\nresults (rows, sum, sum of start s x value, sum of keys), equal in every system:")
    for query in dict.fromkeys(c["query"] for c in cases if c["query"] != "floor"):
        systems = [c["system"] for c in cases if c["query"] == query]
        fp = next(c["fingerprint"] for c in cases if c["query"] == query)
        print(f"  {query:4} {fp} ({', '.join(systems)})")
    if any("breakdown" in c for c in cases):
        print_breakdown([{**c, "workload": c["query"]} for c in cases])
    ran = machine()
    print(f"\nmachine: {ran}")
    if jsonPath:
        with open(jsonPath, "w") as f:
            json.dump(
                {"machine": ran, "published_flink_per_core": PUBLISHED, "cases": cases},
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()
