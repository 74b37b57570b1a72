"""Pandas aggregates per fired pane (``sw.agg.pandas``) beside the JVM's aggregates: a
``pandas_udf`` of the Series -> scalar kind, called once per pane with the pane's elements, in
batch on both transports, on a stream with early panes, in the harness (an empty pane gives
null) and in replay. Answers are computed here by hand.
"""

from __future__ import annotations

from pathlib import Path
from statistics import median
from typing import Any

import pandas as pd
import pytest
from pyspark.sql.functions import pandas_udf
from sparkstreams import runStream
from test_expressions import _functions, _millis

import sparkwin as sw
from sparkwin.errors import PlanError
from sparkwin.testing import WindowHarness

DDL = "user string, price long, qty long, ts long"
ROWS = [
    ("a", 2, 3, 1_000),
    ("a", 9, 1, 2_000),
    ("a", 4, 4, 3_000),
    ("a", 7, 2, 12_000),
    ("b", 1, 10, 1_500),
    ("b", 3, 1, 2_500),
]
NAMES = ["user", "price", "qty", "ts"]


def _udfs() -> tuple[Any, Any]:
    """A median and a weighted mean, as a PySpark user writes them for groupBy().agg."""

    @pandas_udf("double")
    def middle(v: pd.Series) -> float:
        return float(v.median())

    @pandas_udf("double")
    def weighted(v: pd.Series, w: pd.Series) -> float:
        return float((v * w).sum() / w.sum())

    return middle, weighted


def _pipeline(df: Any, trigger: Any = None, mode: str = "accumulating", arrival: Any = None):
    F = _functions(df)  # noqa: N806
    middle, weighted = _udfs()
    windowed = (
        sw.stream(
            df, "ts", arrival=arrival, watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
    )
    if trigger is not None:
        windowed = windowed.trigger(trigger)
    return windowed.accumulationMode(mode).aggregate(
        sw.agg.count(),
        sw.agg.pandas(middle, "price"),
        sw.agg.sum("qty"),
        sw.agg.pandas(weighted, F.col("price") * 10, "qty").alias("wmean"),
    )


def _expected() -> list[tuple]:
    out = []
    for user, start in sorted({(r[0], r[3] // 10_000 * 10_000) for r in ROWS}):
        rows = [r for r in ROWS if r[0] == user and r[3] // 10_000 * 10_000 == start]
        w = sum(r[1] * 10 * r[2] for r in rows) / sum(r[2] for r in rows)
        out.append(
            (user, start, len(rows), float(median(r[1] for r in rows)), sum(r[2] for r in rows), w)
        )
    return out


def _got(rows: list[dict[str, Any]]) -> list[tuple]:
    return sorted(
        (r["user"], r["window_start"], r["count"], r["middle_price"], r["sum_qty"], r["wmean"])
        for r in rows
    )


def test_pandas_aggregates_beside_the_jvms_in_batch(session) -> None:
    pipeline = _pipeline(session.createDataFrame(ROWS, DDL))
    df = pipeline.toDF()
    # The user's order among the other output columns.
    assert df.columns[:8] == [
        "user",
        "window_start",
        "window_end",
        "window_time",
        "count",
        "middle_price",
        "sum_qty",
        "wmean",
    ]
    assert df.schema["middle_price"].dataType.simpleString() == "double"
    assert _got(_millis(df)) == _expected()


def test_pandas_aggregates_alone_on_a_stream_with_early_panes(spark, tmp_path: Path) -> None:
    middle, _ = _udfs()

    def build(df: Any) -> sw.Pipeline:
        return (
            sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
            .keyBy("user")
            .window(sw.TumblingEventTimeWindows.of(10_000))
            .trigger(sw.AfterWatermark.pastEndOfWindow().withEarlyFirings(sw.CountTrigger.of(2)))
            .aggregate(sw.agg.pandas(middle, "price"))
        )

    batches = [[dict(zip(NAMES, r, strict=True))] for r in sorted(ROWS, key=lambda r: r[3])]
    batches.append([{"user": "z", "price": 0, "qty": 0, "ts": 100_000}])
    result = runStream(spark, tmp_path, DDL, build, batches, trigger=None)
    main = [r for r in result.outputs["main"] if r["user"] != "z"]
    assert "__sparkwin_pane_count" not in main[0]
    got = sorted((r["user"], r["pane_timing"], r["middle_price"]) for r in main)
    assert got == [
        ("a", "EARLY", 5.5),  # 2, 9
        ("a", "ON_TIME", 4.0),  # 2, 9, 4
        ("a", "ON_TIME", 7.0),  # the second window: 7
        ("b", "EARLY", 2.0),  # 1, 3
        ("b", "ON_TIME", 2.0),
    ]


@pytest.mark.compat
def test_pandas_aggregates_in_the_harness_an_empty_pane_is_null(spark) -> None:
    df = spark.createDataFrame(ROWS, DDL)
    trigger = sw.AfterWatermark.pastEndOfWindow().withEarlyFirings(
        sw.AggregateTrigger.of(sw.agg.count() >= 3)
    )
    h = WindowHarness(_pipeline(df, trigger, "discarding"))
    h.processElements(dict(zip(NAMES, r, strict=True)) for r in ROWS if r[0] == "a")
    h.processWatermark(100_000)
    got = [
        (r["window_start"], r["pane_timing"], r["count"], r["middle_price"])
        for r in h.extractOutput()
    ]
    assert got == [
        (0, "EARLY", 3, 4.0),  # 2, 9, 4
        (0, "ON_TIME", 0, None),  # nothing new: the pandas aggregate is not called
        (10_000, "ON_TIME", 1, 7.0),
    ]
    assert len(h.runLog().panes) == 3  # one pane each, the elements riding on their result


@pytest.mark.compat
def test_pandas_aggregates_in_replay(spark) -> None:
    from pyspark.sql import functions as F  # noqa: N812

    df = spark.createDataFrame(ROWS, DDL).withColumn("arrival", F.col("ts"))
    replayed = _pipeline(df, arrival="arrival").replay(endOfInput=True)
    got = _got(_millis(replayed.toDF()))
    replayed.unpersist()
    assert got == _expected()


def test_bad_pandas_aggregates_are_refused(spark, tmp_path: Path) -> None:
    df = spark.createDataFrame(ROWS, DDL)
    middle, _ = _udfs()
    windowed = sw.stream(df, "ts").keyBy("user").window(sw.TumblingEventTimeWindows.of(10_000))
    with pytest.raises(TypeError, match=r"agg.pandas\(function\): function must be a pandas_udf"):
        sw.agg.pandas(lambda v: v.median(), "price")
    with pytest.raises(ValueError, match=r"needs at least one column"):
        sw.agg.pandas(middle)
    with pytest.raises(ValueError, match=r"alias 'count' is another output column's too"):
        windowed.aggregate(sw.agg.count(), sw.agg.pandas(middle, "price").alias("count"))
    with pytest.raises(ValueError, match=r"does not exist|nope"):
        windowed.aggregate(sw.agg.pandas(middle, "nope"))
    stream = spark.readStream.schema(DDL).json(str(tmp_path))
    live = (
        sw.stream(stream, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .aggregate(sw.agg.pandas(middle, "price"))
    )
    with pytest.raises(PlanError, match=r"real-time mode cannot run pandas aggregates"):
        live.toDF(realTime=True)
