"""A pandas aggregate per pane (`sw.agg.pandas`) against `process()` doing the same, on Spark,
in one run: the median of `amount` per key and tumbling minute, with `sw.agg.count()` beside
it, as `aggregate(sw.agg.count(), sw.agg.pandas(median, "amount"))` and as a process function
returning the count and the median of its pane (issue 64: one Python call per fired pane).

    python benchmarks/pandas_aggregates.py [--events N] [--files N] [--keys N] [--rounds N]

Both stream the same parquet files (one a micro-batch) on local[2]; they alternate for
`--rounds` rounds after an untimed warm-up of each, and the ratio is taken round by round.
"""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pandas as pd  # noqa: E402
from pyspark.sql import DataFrame  # noqa: E402
from pyspark.sql.functions import pandas_udf  # noqa: E402

import sparkwin as sw  # noqa: E402
from benchmarks.columns import inTurns, windowed  # noqa: E402


def pandasAggregate(df: DataFrame) -> sw.Pipeline:
    """The JVM's count and a pandas median, per pane."""

    @pandas_udf("double")
    def median(v: pd.Series) -> float:
        return float(v.median())

    return windowed(df).aggregate(sw.agg.count(), sw.agg.pandas(median, "amount"))


def processFunction(df: DataFrame) -> sw.Pipeline:
    """The same count and median, by a process function."""

    def summary(key: Any, window: Any, pdf: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {"key": [key[0]], "count": [len(pdf)], "median": [float(pdf["amount"].median())]}
        )

    keyType = df.schema["key"].dataType.simpleString()
    return windowed(df).process(summary, f"key {keyType}, count long, median double")


def main() -> None:
    ratios: list[float] = []

    def report(r: int, seconds: dict[str, float]) -> None:
        ratios.append(seconds["pandas"] / seconds["process"])
        print(
            f"round {r + 1}: sw.agg.pandas {seconds['pandas']:.2f} s, process() "
            f"{seconds['process']:.2f} s, ratio {ratios[-1]:.2f}",
            flush=True,
        )

    systems = {"pandas": pandasAggregate, "process": processFunction}
    args = inTurns("sparkwin-pandas-aggregates", systems, report)
    print(
        f"pandas aggregate / process over {args.rounds} rounds ({args.events:,} events, "
        f"{args.files} batches): {min(ratios):.2f}-{max(ratios):.2f}"
    )


if __name__ == "__main__":
    main()
