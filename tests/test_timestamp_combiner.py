"""Beam's timestamp combiner: a result's ``window_time`` is the end of its window (the default,
Flink's output timestamp, event time downstream) or the earliest or latest event time among the
pane's elements (data downstream: sparkwin holds no watermark back for it)."""

from __future__ import annotations

import pytest

import sparkwin as sw
from sparkwin.testing import WindowHarness

SCHEMA = "user string, amount long, ts long"
ROWS = [
    {"user": "a", "amount": 1, "ts": 4_000},
    {"user": "a", "amount": 2, "ts": 1_500},
    {"user": "a", "amount": 3, "ts": 7_250},
    {"user": "b", "amount": 4, "ts": 12_000},
]


def _windowed(df):
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
    )


@pytest.mark.parametrize(
    ("combiner", "expected"),
    [
        ("END_OF_WINDOW", {"a": 9_999, "b": 19_999}),
        ("EARLIEST", {"a": 1_500, "b": 12_000}),
        ("LATEST", {"a": 7_250, "b": 12_000}),
    ],
)
def test_window_time_follows_the_combiner(spark, combiner, expected) -> None:
    windowed = _windowed(spark.createDataFrame([], SCHEMA)).withTimestampCombiner(combiner)
    h = WindowHarness(windowed.aggregate(sw.agg.sum("amount")))
    for r in ROWS:
        h.processElement(r)
    h.endOfInput()
    out = h.extractOutput()
    assert {r["user"]: r["window_time"] for r in out} == expected
    assert {r["user"]: r["sum_amount"] for r in out} == {"a": 6, "b": 4}


def test_a_bounded_job_gives_the_earliest_event_time_and_no_hidden_column(spark) -> None:
    df = spark.createDataFrame(ROWS, SCHEMA)
    pipeline = _windowed(df).withTimestampCombiner("earliest").aggregate(sw.agg.count())
    result = pipeline.toDF()
    assert result.columns == [
        "user", "window_start", "window_end", "window_time", "count",
        "pane_timing", "pane_index", "pane_is_first", "pane_is_last",
    ]  # fmt: skip
    got = {r["user"]: int(r["window_time"].timestamp() * 1000) for r in result.collect()}
    assert got == {"a": 1_500, "b": 12_000}
    assert not result.schema["window_time"].metadata
    end = _windowed(df).aggregate(sw.agg.count()).toDF()
    assert end.schema["window_time"].metadata == {"sparkwin.eventTime": True}


def test_chaining_on_earliest_results_is_refused_with_the_reason(spark, tmp_path) -> None:
    sdf = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    results = _windowed(sdf).withTimestampCombiner("LATEST").aggregate(sw.agg.count()).toDF()
    with pytest.raises(ValueError, match="not event time downstream"):
        sw.stream(results, "window_time")


def test_bad_combiners_are_refused(spark) -> None:
    windowed = _windowed(spark.createDataFrame([], SCHEMA))
    with pytest.raises(ValueError, match="combiner must be 'END_OF_WINDOW', 'EARLIEST' or"):
        windowed.withTimestampCombiner("MIN")
    with pytest.raises(ValueError, match="is for aggregate"):
        windowed.withTimestampCombiner("EARLIEST").process(lambda k, w, p: p, "user string")
    assert "withTimestampCombiner('LATEST')" in repr(
        windowed.withTimestampCombiner("latest").aggregate(sw.agg.count())
    )
