"""A run's results folded into a few sums, so that every system's answer can be checked equal to
the others' without keeping their rows: the number of rows, the sum of their values, the sum of
window start (in seconds) times value, and any other column's sum.

It folds and compares; it runs no query.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F  # noqa: N812


def fold(batch: DataFrame, startMs: Column, *more: Column) -> list[int]:
    """One micro-batch's (rows, sum of `value`, sum of start s x value, sum of each of `more`)."""
    row = batch.agg(
        F.count(F.lit(1)),
        F.coalesce(F.sum("value"), F.lit(0)),
        # In decimal: with tens of millions of windows the weighted sum leaves a long.
        F.coalesce(
            F.sum((F.floor(startMs / 1000).cast("long") * F.col("value")).cast("decimal(38,0)")),
            F.lit(0),
        ),
        *[F.coalesce(F.sum(c), F.lit(0)) for c in more],
    ).collect()[0]
    return [int(v) for v in row]


def wrapped(total: int) -> int:
    """`total` as a JVM long sum gives it (wrapping at 2^64), as the JVM systems report it."""
    return (total + 2**63) % 2**64 - 2**63


def checkEqual(name: str, prints: dict[str, tuple]) -> None:
    """Same results from every system, or no timings: exits naming the differing fingerprints."""
    if len(set(prints.values())) > 1:
        raise SystemExit(f"results differ for {name}: {prints}")
