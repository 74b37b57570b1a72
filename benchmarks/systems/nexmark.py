"""Nexmark's windowed queries (q5, q7, q8, q11) on Spark: sparkwin's pipelines from
examples/nexmark/queries.py, the same queries with Spark's own `window()` / `session_window()`,
and the floor, a stateless pass over the bids. Each gives rows of (key, window_start, value)
(q8 also the person's name).

`runSpark` streams the generated parquet files through one query of one system until all are
processed and folds the results into a fingerprint; nexmark.py times it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from datetime import timedelta as td

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812

from benchmarks import fingerprint
from benchmarks.measure import measuredStream
from examples.nexmark import generator, queries

BOUND = td(seconds=4)
BOUND_MS = 4000


def nativeBids(events: DataFrame, *columns: str) -> DataFrame:
    return queries.bids(events, *columns).withWatermark("ts", f"{BOUND_MS + 1} milliseconds")


def nativeQ5(events: DataFrame, _checkpoint: str | None = None) -> DataFrame:
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


def nativeQ7(events: DataFrame, _checkpoint: str | None = None) -> DataFrame:
    return (
        nativeBids(events, "price", "ts")
        .groupBy(F.window("ts", "10 seconds").alias("w"))
        .agg(F.max("price").alias("max_price"))
        .select(
            F.col("w.start").alias("window_start"), F.col("w.end").alias("window_end"), "max_price"
        )
    )


def nativeQ8(events: DataFrame, _checkpoint: str | None = None) -> DataFrame:
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


def nativeQ11(events: DataFrame, _checkpoint: str | None = None) -> DataFrame:
    return (
        nativeBids(events, "bidder", "ts")
        .groupBy(F.session_window("ts", "10 seconds").alias("w"), "bidder")
        .agg(F.count(F.lit(1)).alias("value"))
        .select(F.col("bidder").alias("key"), F.col("w.start").alias("window_start"), "value")
    )


def sparkwinQ5(events: DataFrame, _checkpoint: str | None = None) -> DataFrame:
    # Chained pipelines: transformWithState whatever the checkpoint.
    return queries.q5HotItems(events, BOUND).select(
        F.col("auction").alias("key"), "window_start", F.col("num").alias("value")
    )


def sparkwinQ7(events: DataFrame, checkpoint: str | None = None) -> DataFrame:
    return queries.q7(events, BOUND, checkpoint).select(
        F.col("auction").alias("key"), "window_start", F.col("price").alias("value")
    )


def sparkwinQ8(events: DataFrame, checkpoint: str | None = None) -> DataFrame:
    return queries.q8NewUsers(events, BOUND, checkpoint).select(
        F.col("person").alias("key"), "window_start", F.col("auctions").alias("value"), "name"
    )


def sparkwinQ11(events: DataFrame, checkpoint: str | None = None) -> DataFrame:
    return queries.q11UserSessions(events, BOUND, checkpoint).select(
        F.col("bidder").alias("key"), "window_start", F.col("bid_count").alias("value")
    )


def floorPass(events: DataFrame, _checkpoint: str | None = None) -> DataFrame:
    """Reads every bid's key, time and price and keeps none: what any Spark system pays for
    these files before it windows anything (run.py's `floor`)."""
    out = queries.bids(events, "bidder", "ts", "price").select(
        F.col("bidder").alias("key"),
        F.col("ts").alias("window_start"),
        F.col("price").alias("value"),
    )
    # On computed values, so no parquet statistics can skip the files' rows.
    return out.where(F.unix_millis("window_start") + F.col("value") < 0)


BUILDERS: dict[str, dict[str, Callable[[DataFrame, str], DataFrame]]] = {
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
    checkpoint = tempfile.mkdtemp(prefix=f"checkpoint-{system}-{query}-")
    results = BUILDERS[system][query](source, checkpoint)
    totals = [0, 0, 0, 0]

    def fold(batch: DataFrame, _: int) -> None:
        if query == "q7" and system == "native":
            batch = highestBids(spark, directory, batch)
        # The flush events' windows (a day after the data) are left out.
        real = batch.where(F.unix_millis("window_start") < cutoff)
        if query == "q8":
            # Both systems return the person's name, as Nexmark's q8 does; reading it here
            # keeps Spark from pruning native's max(name) when the fingerprint drops it.
            real = real.where(F.col("name").isNotNull())
        sums = fingerprint.fold(real, F.unix_millis("window_start"), F.col("key"))
        for i in range(4):
            totals[i] += sums[i]

    try:
        seconds, _, spent = measuredStream(spark, results, fold, checkpoint, measure)
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)
    out: dict[str, object] = {
        "seconds": seconds,
        "fingerprint": [fingerprint.wrapped(t) for t in totals],
    }
    if spent is not None:
        out["breakdown"] = spent
    return out
