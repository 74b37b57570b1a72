"""Aggregates of Spark Columns and SQL's FILTER (WHERE ...): ``sw.agg.sum(price * qty)``,
``sw.agg.count(filter=country == 'NL')``. Spark computes each Column before the engine reads it,
so no Python runs per event; the answers are computed here by hand from the same rows, in batch
(classic and Connect), on a stream, in the harness and in replay. Bad Columns are refused
before a query starts, naming the parameter.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F  # noqa: N812
from sparkstreams import canonical, runStream

import sparkwin as sw
from sparkwin.errors import PlanError
from sparkwin.testing import WindowHarness

DDL = "user string, price long, qty long, country string, ts long"
ROWS = [
    ("a", 2, 3, "NL", 1_000),
    ("a", 5, 1, "DE", 2_000),
    ("a", 4, 4, None, 3_000),
    ("a", 7, 2, "NL", 12_000),
    ("b", 1, 10, "NL", 1_500),
    ("b", 3, 1, "DE", 2_500),
]
SIZE = 10_000


def _functions(df: Any) -> Any:
    """The functions that make Columns for `df`'s session: this process runs a classic and a
    Connect session side by side, where a user's process has one kind."""
    if type(df).__module__.startswith("pyspark.sql.connect"):
        from pyspark.sql.connect import functions

        return functions
    return F


def _build(df: Any) -> sw.Pipeline:
    F = _functions(df)  # noqa: N806
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(SIZE))
        .aggregate(
            sw.agg.sum(F.col("price") * F.col("qty")),
            sw.agg.count(filter=F.col("country") == "NL"),
            sw.agg.first("price", filter=F.col("qty") > 2).alias("first_big"),
            sw.agg.maxBy("country", F.col("price") * -1).alias("cheapest_country"),
            sw.agg.avg(F.col("price") + 1, filter="is_nl"),
        )
    )


def _withFlag(df: Any) -> Any:
    return df.withColumn("is_nl", _functions(df).col("country") == "NL")


def _expected() -> list[dict[str, Any]]:
    """Each window's answers, computed here from ROWS."""
    windows: dict[tuple[str, int], list[tuple]] = defaultdict(list)
    for row in ROWS:
        windows[(row[0], row[4] // SIZE * SIZE)].append(row)
    out = []
    for (user, start), rows in sorted(windows.items()):
        byTime = sorted(rows, key=lambda r: r[4])
        big = [r for r in byTime if r[2] > 2]
        nl = [r for r in rows if r[3] == "NL"]
        out.append(
            {
                "user": user,
                "window_start": start,
                "sum_price_qty": sum(r[1] * r[2] for r in rows),
                "count": len(nl),
                "first_big": big[0][1] if big else None,
                "cheapest_country": min(rows, key=lambda r: r[1])[3],
                "avg_price_1": sum(r[1] + 1 for r in nl) / len(nl) if nl else None,
            }
        )
    return out


def _picked(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ["user", "window_start", "sum_price_qty", "count", "first_big", "cheapest_country"]
    return sorted(
        ({k: r[k] for k in keys} | {"avg_price_1": r["avg_price_1"]} for r in rows),
        key=lambda r: (r["user"], r["window_start"]),
    )


def _millis(df: Any) -> list[dict[str, Any]]:
    F = _functions(df)  # noqa: N806
    return [
        r.asDict()
        for r in df.select(
            *[
                F.unix_millis(c).alias(c) if c.startswith("window_") else F.col(c)
                for c in df.columns
            ]
        ).collect()
    ]


def test_columns_and_filters_in_batch_on_both_transports(session) -> None:
    df = _withFlag(session.createDataFrame(ROWS, DDL))
    assert _picked(_millis(_build(df).toDF())) == _expected()


def test_default_aliases_read_as_the_expression(spark) -> None:  # Columns need a session
    assert sw.agg.sum(F.col("price") * F.col("qty")).outputAlias == "sum_price_qty"
    assert sw.agg.max(F.col("amount")).outputAlias == "max_amount"
    assert sw.agg.count(filter=F.col("x") > 1).outputAlias == "count"
    # Two expressions of the same words are two inputs, never one.
    a = sw.agg.sum(F.col("price") * F.col("qty"))
    b = sw.agg.sum(F.col("price") + F.col("qty"))
    assert a.column != b.column


def test_on_a_stream(spark, tmp_path: Path) -> None:
    # A row a batch, in event-time order: none is late behind the watermark the stream moves.
    names = ["user", "price", "qty", "country", "ts"]
    batches = [[dict(zip(names, r, strict=True))] for r in sorted(ROWS, key=lambda r: r[4])]
    batches.append([{"user": "z", "price": 0, "qty": 0, "country": None, "ts": 100_000}])
    result = runStream(
        spark, tmp_path, DDL, lambda df: _build(_withFlag(df)), batches, trigger=None
    )
    main = [r for r in result.outputs["main"] if r["user"] != "z"]
    got = _picked(
        [
            r
            | {
                "window_start": int(r["window_start"].timestamp() * 1000)
                if hasattr(r["window_start"], "timestamp")
                else r["window_start"]
            }
            for r in main
        ]
    )
    assert canonical(got) == canonical(_expected())


def test_in_the_harness_each_element_is_computed_by_spark(spark) -> None:
    df = _withFlag(spark.createDataFrame(ROWS, DDL))
    h = WindowHarness(_build(df))
    h.processElements(
        {"user": u, "price": p, "qty": q, "country": c, "ts": t, "is_nl": c == "NL"}
        for u, p, q, c, t in ROWS
    )
    h.processWatermark(50_000)
    assert _picked(h.extractOutput()) == _expected()


def test_in_replay(spark) -> None:
    df = _withFlag(spark.createDataFrame(ROWS, DDL)).withColumn("arrival", F.col("ts"))
    pipeline = (
        sw.stream(
            df, "ts", arrival="arrival", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(SIZE))
        .aggregate(sw.agg.sum(F.col("price") * F.col("qty")), sw.agg.count(filter="is_nl"))
    )
    replayed = pipeline.replay(endOfInput=True)
    got = sorted(
        (r["user"], r["window_start"], r["sum_price_qty"], r["count"])
        for r in _millis(replayed.toDF())
    )
    replayed.unpersist()
    assert got == [
        (e["user"], e["window_start"], e["sum_price_qty"], e["count"]) for e in _expected()
    ]


def test_bad_columns_are_refused_naming_the_parameter(session) -> None:
    df = session.createDataFrame(ROWS, DDL)
    F = _functions(df)  # noqa: N806
    windowed = sw.stream(df, "ts").keyBy("user").window(sw.TumblingEventTimeWindows.of(SIZE))
    with pytest.raises(TypeError, match=r"agg\.sum\(column\): column .*upper.* is string.*numeric"):
        windowed.aggregate(sw.agg.sum(F.upper("country")))
    with pytest.raises(TypeError, match=r"agg\.sum\(filter\): .* is bigint.*boolean column"):
        windowed.aggregate(sw.agg.sum("price", filter=F.col("qty") + 1))
    with pytest.raises(
        ValueError, match=r"agg\.sum\(column\): the Column .*nope.* does not resolve"
    ):
        windowed.aggregate(sw.agg.sum(F.col("nope")))
    with pytest.raises(ValueError, match=r"has a filter already"):
        sw.agg.sum("price", filter="a").filter("b")
    with pytest.raises(TypeError, match=r"column name \(str\) or a Spark Column"):
        sw.agg.sum(3)  # type: ignore[arg-type]
    # Spark runs a micro-batch again after a failure: a Column that changes is refused.
    # The builder refuses it on classic (naming the parameter), the query's start on Connect.
    with pytest.raises(PlanError, match=r"rand.*not deterministic"):
        windowed.aggregate(sw.agg.sum(F.rand() * 10)).toDF()


# ---------------------------------------------------------------------------------------------
# Triggers from conditions

CLICKS_DDL = "user string, event string, amount long, ts long"
CLICKS = [
    ("a", "view", 0, 1_000),
    ("a", "cart", 5, 2_000),
    ("a", "checkout", 0, 3_000),
    ("a", "view", 0, 4_000),
    ("a", "checkout", 0, 5_000),
    ("b", "view", 0, 1_500),
    ("b", "cart", 7, 2_500),
]


def _checkouts(df: Any, window: Any, mode: str = "accumulating") -> sw.Pipeline:
    F = _functions(df)  # noqa: N806
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("user")
        .window(window)
        .trigger(
            sw.AfterWatermark.pastEndOfWindow().withEarlyFirings(
                sw.ConditionTrigger.of(F.col("event") == "checkout")
            )
        )
        .accumulationMode(mode)
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )


def test_a_condition_fires_early_on_the_elements_that_satisfy_it_in_sessions(session) -> None:
    # A session per user; a's two checkouts fire it early (3, then 5 elements: the session
    # merged the later ones in), then the watermark fires each session on time.
    df = session.createDataFrame(CLICKS, CLICKS_DDL)
    got = _millis(_checkouts(df, sw.EventTimeSessionWindows.withGap(10_000)).toDF())
    assert sorted((r["user"], r["pane_timing"], r["count"], r["sum_amount"]) for r in got) == [
        ("a", "EARLY", 3, 5),
        ("a", "EARLY", 5, 5),
        ("a", "ON_TIME", 5, 5),
        ("b", "ON_TIME", 2, 7),
    ]


def test_a_condition_in_the_harness_with_discarding_panes(spark) -> None:
    df = spark.createDataFrame(CLICKS, CLICKS_DDL)
    h = WindowHarness(_checkouts(df, sw.TumblingEventTimeWindows.of(SIZE), "discarding"))
    h.processElements(dict(zip(["user", "event", "amount", "ts"], r, strict=True)) for r in CLICKS)
    h.processWatermark(100_000)
    # Each pane holds what came since the last one: a's on-time pane has nothing left.
    got = [
        (r["user"], r["pane_index"], r["pane_timing"], r["count"], r["sum_amount"])
        for r in h.extractOutput()
    ]
    assert sorted(got) == [
        ("a", 0, "EARLY", 3, 5),
        ("a", 1, "EARLY", 2, 0),
        ("a", 2, "ON_TIME", 0, None),
        ("b", 0, "ON_TIME", 2, 7),
    ]


def test_a_condition_that_is_not_boolean_is_refused(spark) -> None:
    df = spark.createDataFrame(CLICKS, CLICKS_DDL)
    keyed = sw.stream(df, "ts").keyBy("user").window(sw.TumblingEventTimeWindows.of(SIZE))
    with pytest.raises(TypeError, match=r"ConditionTrigger.of\(condition\): .*event.* is string"):
        keyed.trigger(sw.ConditionTrigger.of(F.col("event")))
    with pytest.raises(TypeError, match=r"must be a column.s name or a Spark Column such as"):
        sw.ConditionTrigger.of(3)  # type: ignore[arg-type]
