"""Sums that overflow follow Spark's rules: with ANSI on (Spark 4's default), where Spark fails
the query, the window's sum is null and the ``errors`` output names the window; with ANSI off,
Spark's wrap-around (decimals: null). A sum is exact whenever the exact total fits, whatever
order its values came in."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal

import pytest
from sparkstreams import runStream

import sparkwin as sw
from sparkwin.testing import WindowHarness

SCHEMA = "user string, amount long, ts long"
MAXL = 2**63 - 1
ROWS = [
    {"user": "a", "amount": MAXL, "ts": 10},
    {"user": "a", "amount": MAXL, "ts": 20},
    {"user": "b", "amount": MAXL, "ts": 30},
    {"user": "b", "amount": 1, "ts": 40},
    {"user": "b", "amount": -1, "ts": 50},  # back in range: b's exact sum fits
]


@contextmanager
def ansi(spark, enabled: bool) -> Iterator[None]:
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", str(enabled).lower())
    try:
        yield
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def _pipeline(df) -> sw.Pipeline:
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(1000))
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )


def _sums(rows) -> dict[str, tuple]:
    return {r["user"]: (r["sum_amount"], r["count"]) for r in rows}


def test_with_ansi_a_bounded_job_gives_null_and_an_error_row_for_the_window(spark) -> None:
    with ansi(spark, True):
        pipeline = _pipeline(spark.createDataFrame(ROWS, SCHEMA))
    assert pipeline.plan["ansi"] is True
    assert _sums(pipeline.toDF().collect()) == {"a": (None, 2), "b": (MAXL, 3)}
    (error,) = pipeline.getSideOutput("errors").collect()
    assert (error["user"], error["amount"], error["ts"]) == ("a", None, None)
    assert (
        "sum_amount overflowed in window [1970-01-01T00:00:00Z, 1970-01-01T00:00:01Z)"
        in (error["error"])
    )
    assert "decimal(38,0)" in error["error"]


def test_without_ansi_a_bounded_job_wraps_as_spark_does(spark) -> None:
    with ansi(spark, False):
        pipeline = _pipeline(spark.createDataFrame(ROWS, SCHEMA))
        native = (
            spark.createDataFrame(ROWS[:2], SCHEMA).groupBy("user").sum("amount").collect()[0][1]
        )
    assert pipeline.plan["ansi"] is False
    assert _sums(pipeline.toDF().collect()) == {"a": (native, 2), "b": (MAXL, 3)}
    assert native == -2
    assert pipeline.getSideOutput("errors").collect() == []


def test_a_stream_with_an_overflow_keeps_running(spark, tmp_path) -> None:
    batches = [ROWS[:3], ROWS[3:], [{"user": "c", "amount": 1, "ts": 5_000}]]
    with ansi(spark, True):
        result = runStream(spark, tmp_path, SCHEMA, _pipeline, batches)
    assert _sums(result.outputs["main"]) == {"a": (None, 2), "b": (MAXL, 3)}
    assert [(r["user"], "overflowed" in r["error"]) for r in result.outputs["errors"]] == [
        ("a", True)
    ]


def test_the_harness_follows_the_session_ansi_mode(spark) -> None:
    for enabled, expected in ((True, None), (False, -2)):
        with ansi(spark, enabled):
            h = WindowHarness(_pipeline(spark.createDataFrame([], SCHEMA)))
        for row in ROWS[:2]:
            h.processElement(row)
        h.endOfInput()
        assert [r["sum_amount"] for r in h.extractOutput()] == [expected]
        assert len(h.extractSideOutput("errors")) == (1 if enabled else 0)


@pytest.mark.parametrize("enabled", [True, False], ids=["ansi", "no ansi"])
def test_a_decimal_sum_past_its_result_type_is_null_never_wrapped(spark, enabled) -> None:
    # decimal(38,0) sums as decimal(38,0): two of 6 * 10^37 need 39 digits.
    schema = "user string, amount decimal(38,0), ts long"
    big = Decimal(6 * 10**37)
    rows = [
        {"user": "a", "amount": big, "ts": 1},
        {"user": "a", "amount": big, "ts": 2},
        {"user": "b", "amount": big, "ts": 3},
        {"user": "b", "amount": -big, "ts": 4},
    ]
    with ansi(spark, enabled):
        pipeline = _pipeline(spark.createDataFrame(rows, schema))
        if not enabled:  # Spark's own answer without ANSI
            native = spark.createDataFrame(rows[:2], schema).groupBy("user").sum("amount")
            assert native.collect()[0][1] is None
    assert _sums(pipeline.toDF().collect()) == {"a": (None, 2), "b": (Decimal(0), 2)}
    errors = pipeline.getSideOutput("errors").collect()
    assert [(r["user"], "overflowed" in r["error"]) for r in errors] == (
        [("a", True)] if enabled else []
    )
