"""A pandas aggregate per pane (`sw.agg.pandas`) against `process()` doing the same, on Spark,
in one run: the median of `amount` per key and tumbling minute, with `sw.agg.count()` beside
it, as `aggregate(sw.agg.count(), sw.agg.pandas(median, "amount"))` and as a process function
returning the count and the median of its pane (issue 64: one Python call per fired pane).

    python benchmarks/pandas_aggregates.py [--events N] [--files N] [--keys N] [--rounds N]

Both stream the same parquet files (one a micro-batch) on local[2]; they alternate for
`--rounds` rounds after an untimed warm-up of each, and the ratio is taken round by round.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pandas as pd  # noqa: E402
from pyspark.sql import DataFrame  # noqa: E402
from pyspark.sql.functions import pandas_udf  # noqa: E402

import sparkwin as sw  # noqa: E402
from benchmarks.columns import timed  # noqa: E402
from benchmarks.sessions import benchSession  # noqa: E402
from benchmarks.workloads import BOUND_MS, generate  # noqa: E402


def _windowed(df: DataFrame) -> Any:
    watermark = sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS)
    return (
        sw.stream(df, "ts", watermark=watermark)
        .keyBy("key")
        .window(sw.TumblingEventTimeWindows.of(60_000))
    )


def pandasAggregate(df: DataFrame) -> sw.Pipeline:
    """The JVM's count and a pandas median, per pane."""

    @pandas_udf("double")
    def median(v: pd.Series) -> float:
        return float(v.median())

    return _windowed(df).aggregate(sw.agg.count(), sw.agg.pandas(median, "amount"))


def processFunction(df: DataFrame) -> sw.Pipeline:
    """The same count and median, by a process function."""

    def summary(key: Any, window: Any, pdf: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {"key": [key[0]], "count": [len(pdf)], "median": [float(pdf["amount"].median())]}
        )

    keyType = df.schema["key"].dataType.simpleString()
    return _windowed(df).process(summary, f"key {keyType}, count long, median double")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    spark = benchSession("sparkwin-pandas-aggregates")
    with tempfile.TemporaryDirectory() as tmp:
        events = generate(os.path.join(tmp, "events"), args.events, args.keys, args.files, 1)
        warm = generate(os.path.join(tmp, "warm"), 100_000, args.keys, 2, 2)
        systems = {"pandas": pandasAggregate, "process": processFunction}
        for name, build in systems.items():
            timed(spark, warm.directory, build, os.path.join(tmp, f"warm-{name}"))
        ratios = []
        for r in range(args.rounds):
            seconds = {
                name: timed(spark, events.directory, build, os.path.join(tmp, f"{name}-{r}"))
                for name, build in systems.items()
            }
            ratios.append(seconds["pandas"] / seconds["process"])
            print(
                f"round {r + 1}: sw.agg.pandas {seconds['pandas']:.2f} s, process() "
                f"{seconds['process']:.2f} s, ratio {ratios[-1]:.2f}",
                flush=True,
            )
        print(
            f"pandas aggregate / process over {args.rounds} rounds ({args.events:,} events, "
            f"{args.files} batches): {min(ratios):.2f}-{max(ratios):.2f}"
        )
    spark.stop()


if __name__ == "__main__":
    main()
