"""Logic as Spark Columns against the built-ins it replaces, on Spark, in one run: a pipeline
with `ConditionTrigger` and an aggregate of an expression, beside the same pipeline with
`CountTrigger` and an aggregate of a column name (issue 64's speed goal: within 1.2x). Both fire
about once per hundred elements (the condition `amount == 0` holds for one value in a hundred).

    python benchmarks/columns.py [--events N] [--files N] [--rounds N]

Each pipeline streams the same parquet files (one a micro-batch) on local[2] until all are
processed; the two alternate for `--rounds` rounds after an untimed warm-up of each, and the
ratio is taken round by round (this machine's timings drift between runs).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pyspark.sql import DataFrame  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402, N812

import sparkwin as sw  # noqa: E402
from benchmarks.measure import timedStream  # noqa: E402
from benchmarks.sessions import benchSession  # noqa: E402
from benchmarks.workloads import BOUND_MS, generate  # noqa: E402


def names(df: DataFrame) -> sw.Pipeline:
    """CountTrigger and column names."""
    return (
        _windowed(df)
        .trigger(sw.CountTrigger.of(100))
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )


def columns(df: DataFrame) -> sw.Pipeline:
    """ConditionTrigger and an expression, as Spark Columns."""
    return (
        _windowed(df)
        .trigger(sw.ConditionTrigger.of(F.col("amount") == 0))
        .aggregate(sw.agg.sum(F.col("amount") * 2), sw.agg.count())
    )


def _windowed(df: DataFrame) -> Any:
    watermark = sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS)
    return (
        sw.stream(df, "ts", watermark=watermark)
        .keyBy("key")
        .window(sw.TumblingEventTimeWindows.of(60_000))
    )


def timed(spark: Any, parquet: str, build: Callable[[DataFrame], sw.Pipeline], work: str) -> float:
    """Seconds to stream every file through `build`'s pipeline."""
    schema = spark.read.parquet(parquet).schema
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(parquet)
    seconds, _ = timedStream(
        build(df).toDF(), lambda d, _b: d.write.format("noop").mode("overwrite").save(), work
    )
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    spark = benchSession("sparkwin-columns")
    with tempfile.TemporaryDirectory() as tmp:
        events = generate(os.path.join(tmp, "events"), args.events, args.keys, args.files, 1)
        warm = generate(os.path.join(tmp, "warm"), 100_000, args.keys, 2, 2)
        parquet, warmParquet = events.directory, warm.directory
        systems = {"names": names, "columns": columns}
        for name, build in systems.items():
            timed(spark, warmParquet, build, os.path.join(tmp, f"warm-{name}"))
        ratios = []
        for r in range(args.rounds):
            seconds = {
                name: timed(spark, parquet, build, os.path.join(tmp, f"{name}-{r}"))
                for name, build in systems.items()
            }
            ratios.append(seconds["columns"] / seconds["names"])
            print(
                f"round {r + 1}: CountTrigger + sum('amount') {seconds['names']:.2f} s, "
                f"ConditionTrigger + sum(amount * 2) {seconds['columns']:.2f} s, "
                f"ratio {ratios[-1]:.2f}",
                flush=True,
            )
        print(
            f"columns / names over {args.rounds} rounds ({args.events:,} events, "
            f"{args.files} batches): {min(ratios):.2f}-{max(ratios):.2f}"
        )
    spark.stop()


if __name__ == "__main__":
    main()
