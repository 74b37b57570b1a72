"""Logic as Spark Columns beyond aggregates and element conditions: calendar windows in a time
zone (daylight saving included), windows computed from the row, triggers on a pane's running
aggregate and on a relative change, and evictors by a condition. Expected answers are computed
here by hand (zoneinfo for the calendar), in batch on both transports, on a stream, in the
harness and in replay; bad Columns and arguments are refused before a query starts.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from pyspark.sql import functions as F  # noqa: N812
from pyspark.sql.functions import pandas_udf
from sparkstreams import canonical, replayInHarness, runStream
from test_expressions import _functions, _millis

import sparkwin as sw
from sparkwin.errors import PlanError
from sparkwin.testing import WindowHarness

AMSTERDAM = ZoneInfo("Europe/Amsterdam")


def _at(text: str) -> int:
    """Epoch milliseconds of a local time in Amsterdam."""
    return int(datetime.fromisoformat(text).replace(tzinfo=AMSTERDAM).timestamp() * 1000)


def _dayOf(ms: int) -> tuple[int, int]:
    """The Amsterdam day holding `ms`: its first millisecond and the next day's, by zoneinfo."""
    day = datetime.fromtimestamp(ms / 1000, AMSTERDAM).date()
    start = datetime(day.year, day.month, day.day, tzinfo=AMSTERDAM)
    following = day + timedelta(days=1)
    end = datetime(following.year, following.month, following.day, tzinfo=AMSTERDAM)
    return int(start.timestamp() * 1000), int(end.timestamp() * 1000)


SALES_DDL = "shop string, amount long, ts long"
# Around both daylight saving changes of 2026 in Amsterdam (March 29 has 23 hours, October 25
# has 25), with elements at the days' first and last local minutes.
SALES = [
    ("s", 1, _at("2026-03-28T23:59")),
    ("s", 2, _at("2026-03-29T00:00")),
    ("s", 4, _at("2026-03-29T03:30")),
    ("s", 8, _at("2026-03-29T23:59")),
    ("s", 16, _at("2026-10-25T00:10")),
    ("s", 32, _at("2026-10-25T02:30")),
    ("s", 64, _at("2026-10-25T23:50")),
    ("s", 128, _at("2026-10-26T00:00")),
]


def _byDay() -> list[tuple[int, int, int]]:
    days: dict[tuple[int, int], int] = {}
    for _, amount, ts in SALES:
        days[_dayOf(ts)] = days.get(_dayOf(ts), 0) + amount
    return sorted((start, end, total) for (start, end), total in days.items())


def _daily(df: Any) -> sw.Pipeline:
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("shop")
        .window(sw.CalendarWindows.days("Europe/Amsterdam"))
        .aggregate(sw.agg.sum("amount"))
    )


def test_calendar_days_follow_daylight_saving_in_batch(session) -> None:
    rows = _millis(_daily(session.createDataFrame(SALES, SALES_DDL)).toDF())
    got = sorted((r["window_start"], r["window_end"], r["sum_amount"]) for r in rows)
    assert got == _byDay()
    lengths = {(end - start) // 3_600_000 for start, end, _ in got}
    assert lengths == {23, 24, 25}  # the two changes and ordinary days


def test_calendar_days_on_a_stream_and_in_the_harness(spark, tmp_path: Path) -> None:
    names = ["shop", "amount", "ts"]
    batches = [[dict(zip(names, r, strict=True))] for r in SALES]
    batches.append([{"shop": "s", "amount": 0, "ts": _at("2026-12-01T00:00")}])
    result = runStream(spark, tmp_path, SALES_DDL, _daily, batches, trigger=None)
    # The stream's rows hold times as epoch milliseconds (sparkstreams reads them so).
    got = sorted((r["window_start"], r["window_end"]) for r in result.outputs["main"])
    assert got == [(start, end) for start, end, _ in _byDay()]

    h = WindowHarness(_daily(spark.createDataFrame(SALES, SALES_DDL)))
    h.processElements(dict(zip(names, r, strict=True)) for r in SALES)
    h.processWatermark(_at("2026-12-01T00:00"))
    assert (
        sorted((r["window_start"], r["window_end"], r["sum_amount"]) for r in h.extractOutput())
        == _byDay()
    )


@pytest.mark.compat
def test_calendar_months_and_weeks(spark) -> None:
    df = spark.createDataFrame(SALES, SALES_DDL)
    keyed = sw.stream(df, "ts").keyBy("shop")
    months = _millis(
        keyed.window(sw.CalendarWindows.months("Europe/Amsterdam"))
        .aggregate(sw.agg.sum("amount"))
        .toDF()
    )
    assert sorted((r["window_start"], r["window_end"], r["sum_amount"]) for r in months) == [
        (_at("2026-03-01T00:00"), _at("2026-04-01T00:00"), 15),
        (_at("2026-10-01T00:00"), _at("2026-11-01T00:00"), 240),
    ]
    weeks = _millis(
        keyed.window(sw.CalendarWindows.weeks("Europe/Amsterdam"))
        .aggregate(sw.agg.sum("amount"))
        .toDF()
    )
    # 2026-03-28 is a Saturday: its week began on Monday the 23rd; the 29th's too.
    assert sorted((r["window_start"], r["sum_amount"]) for r in weeks) == [
        (_at("2026-03-23T00:00"), 1 + 2 + 4 + 8),
        (_at("2026-10-19T00:00"), 16 + 32 + 64),
        (_at("2026-10-26T00:00"), 128),
    ]


# ---------------------------------------------------------------------------------------------
# Windows computed from the row

ORDERS_DDL = "user string, amount long, ts long, opened long, closed long"
ORDERS = [
    ("a", 1, 1_000, 0, 5_000),
    ("a", 2, 2_000, 0, 5_000),
    ("a", 4, 6_000, 6_000, 9_000),
    ("b", 8, 1_500, 1_000, 3_000),
]


def _perOrder(df: Any, many: bool = False) -> sw.Pipeline:
    F = _functions(df)  # noqa: N806
    opened, closed = F.timestamp_millis(F.col("opened")), F.timestamp_millis(F.col("closed"))
    if many:  # the order's window and the hour it opened in
        hour = F.date_trunc("hour", opened)
        assigner = sw.ComputedWindows.ofMany(
            F.array(
                F.struct(opened.alias("start"), closed.alias("end")),
                F.struct(hour.alias("start"), (hour + F.expr("INTERVAL 1 HOUR")).alias("end")),
            )
        )
    else:
        assigner = sw.ComputedWindows.of(opened, closed)
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("user")
        .window(assigner)
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )


def test_windows_computed_from_the_row_in_batch(session) -> None:
    df = session.createDataFrame(ORDERS, ORDERS_DDL)
    got = sorted(
        (r["user"], r["window_start"], r["window_end"], r["sum_amount"])
        for r in _millis(_perOrder(df).toDF())
    )
    assert got == [("a", 0, 5_000, 3), ("a", 6_000, 9_000, 4), ("b", 1_000, 3_000, 8)]
    many = sorted(
        (r["user"], r["window_start"], r["window_end"], r["count"])
        for r in _millis(_perOrder(df, many=True).toDF())
    )
    assert many == [
        ("a", 0, 5_000, 2),
        ("a", 0, 3_600_000, 3),
        ("a", 6_000, 9_000, 1),
        ("b", 0, 3_600_000, 1),
        ("b", 1_000, 3_000, 1),
    ]


@pytest.mark.compat
def test_computed_windows_in_the_harness_and_a_bad_row_goes_to_errors(spark) -> None:
    rows = [*ORDERS, ("c", 1, 1_000, 5_000, 5_000)]  # an empty window: the errors output
    h = WindowHarness(_perOrder(spark.createDataFrame(rows, ORDERS_DDL)))
    names = ["user", "amount", "ts", "opened", "closed"]
    h.processElements(dict(zip(names, r, strict=True)) for r in rows)
    h.processWatermark(100_000)
    assert sorted((r["user"], r["window_start"], r["sum_amount"]) for r in h.extractOutput()) == [
        ("a", 0, 3),
        ("a", 6_000, 4),
        ("b", 1_000, 8),
    ]
    assert [e["user"] for e in h.extractSideOutput("errors")] == ["c"]


# ---------------------------------------------------------------------------------------------
# Triggers on the pane's running aggregate, relative deltas, evictors by a condition

BASKET_DDL = "user string, price long, qty long, event string, ts long"
BASKET = [
    ("a", 2, 3, "buy", 1_000),  # 6
    ("a", 1, 1, "test", 2_000),  # 1
    ("a", 5, 1, "buy", 3_000),  # 5: 12 since the start
    ("a", 3, 3, "buy", 4_000),  # 9
    ("a", 1, 2, "buy", 5_000),  # 2: 11 since the last firing
    ("b", 4, 1, "buy", 1_500),
]


def _spent(df: Any, mode: str = "accumulating", arrival: str | None = None) -> sw.Pipeline:
    F = _functions(df)  # noqa: N806
    spent = sw.agg.sum(F.col("price") * F.col("qty"))
    bound = sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
    return (
        sw.stream(df, "ts", arrival=arrival, watermark=bound)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .trigger(
            sw.AfterWatermark.pastEndOfWindow().withEarlyFirings(
                sw.AggregateTrigger.of(spent >= 10)
            )
        )
        .accumulationMode(mode)
        .aggregate(spent, sw.agg.count())
    )


def test_a_running_total_fires_each_time_it_crosses_the_threshold(session) -> None:
    rows = _millis(_spent(session.createDataFrame(BASKET, BASKET_DDL)).toDF())
    got = sorted((r["user"], r["pane_index"], r["pane_timing"], r["sum_price_qty"]) for r in rows)
    assert got == [
        ("a", 0, "EARLY", 12),
        ("a", 1, "EARLY", 23),
        ("a", 2, "ON_TIME", 23),
        ("b", 0, "ON_TIME", 4),
    ]


def test_a_running_total_in_the_harness_and_in_replay(spark) -> None:
    names = ["user", "price", "qty", "event", "ts"]
    df = spark.createDataFrame(BASKET, BASKET_DDL)
    h = WindowHarness(_spent(df, "discarding"))
    h.processElements(dict(zip(names, r, strict=True)) for r in BASKET)
    h.processWatermark(100_000)
    assert sorted((r["user"], r["pane_index"], r["count"]) for r in h.extractOutput()) == [
        ("a", 0, 3),
        ("a", 1, 2),
        ("a", 2, 0),
        ("b", 0, 1),
    ]
    replayed = _spent(df.withColumn("arrival", F.col("ts")), arrival="arrival").replay(
        endOfInput=True
    )
    got = sorted((r["user"], r["pane_index"], r["count"]) for r in _millis(replayed.toDF()))
    replayed.unpersist()
    assert got == [("a", 0, 3), ("a", 1, 5), ("a", 2, 5), ("b", 0, 1)]


def test_the_harness_computes_each_sessions_own_columns(session) -> None:
    # A Spark Connect client's Columns are its session's: the harness asks that session.
    names = ["user", "price", "qty", "event", "ts"]
    h = WindowHarness(_spent(session.createDataFrame(BASKET, BASKET_DDL), "discarding"))
    h.processElements(dict(zip(names, r, strict=True)) for r in BASKET)
    h.processWatermark(100_000)
    assert sorted((r["user"], r["pane_index"], r["sum_price_qty"]) for r in h.extractOutput()) == [
        ("a", 0, 12),
        ("a", 1, 11),
        ("a", 2, None),
        ("b", 0, 4),
    ]


@pytest.mark.compat
def test_count_above_a_threshold_fires_as_count_trigger(spark) -> None:
    df = spark.createDataFrame(BASKET, BASKET_DDL)
    windowed = sw.stream(df, "ts").keyBy("user").window(sw.EventTimeSessionWindows.withGap(1_500))

    def panes(trigger: sw.Trigger) -> list[tuple]:
        rows = _millis(windowed.trigger(trigger).aggregate(sw.agg.count()).toDF())
        return sorted((r["user"], r["window_start"], r["count"]) for r in rows)

    assert panes(sw.AggregateTrigger.of(sw.agg.count() >= 2)) == panes(sw.CountTrigger.of(2))
    assert panes(sw.AggregateTrigger.of(sw.agg.count() >= 2)) == [("a", 1_000, 2), ("a", 1_000, 4)]


QUOTES_DDL = "user string, bid double, ask double, ts long"
QUOTES = [("a", 99.0, 101.0, 1), ("a", 104.0, 106.0, 2), ("a", 109.0, 111.0, 3)]


def _onRelativeDelta(df: Any, functions: Any) -> sw.Pipeline:
    """Fires when bid + ask moved 8% from its value at the last firing, on quotes of QUOTES_DDL."""
    return (
        sw.stream(df, "ts")
        .keyBy("user")
        .window(sw.GlobalWindows.create())
        .trigger(
            sw.DeltaTrigger.of(0.08, functions.col("bid") + functions.col("ask"), relative=True)
        )
        .aggregate(sw.agg.count(), sw.agg.last("bid"))
    )


@pytest.mark.compat
def test_a_relative_delta_of_an_expression(spark) -> None:
    pipeline = _onRelativeDelta(spark.createDataFrame(QUOTES, QUOTES_DDL), F)
    h = WindowHarness(pipeline)
    h.processElements(dict(zip(["user", "bid", "ask", "ts"], q, strict=True)) for q in QUOTES)
    # 200 -> 210 is 5%, 200 -> 220 is 10%: the third quote fires.
    assert [(r["count"], r["last_bid"]) for r in h.extractOutput()] == [(3, 109.0)]


def test_a_relative_delta_in_batch_on_both_transports(session) -> None:
    quotes = [*QUOTES, ("a", 100.0, 100.0, 4)]  # 200 against 220: 9.1% down
    df = session.createDataFrame(quotes, QUOTES_DDL)
    rows = _onRelativeDelta(df, _functions(df)).toDF().collect()
    assert sorted((r["count"], r["last_bid"]) for r in rows) == [(3, 109.0), (4, 100.0)]


def test_an_evictor_by_condition_drops_test_events(session) -> None:
    df = session.createDataFrame(BASKET, BASKET_DDL)
    F = _functions(df)  # noqa: N806
    rows = _millis(
        sw.stream(df, "ts")
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .evictor(sw.ConditionEvictor.of(F.col("event") == "test"))
        .aggregate(sw.agg.count(), sw.agg.sum("price"))
        .toDF()
    )
    assert sorted((r["user"], r["count"], r["sum_price"]) for r in rows) == [
        ("a", 4, 11),
        ("b", 1, 4),
    ]


def test_bad_logic_is_refused_before_a_query_starts(spark) -> None:
    df = spark.createDataFrame(ORDERS, ORDERS_DDL)
    keyed = sw.stream(df, "ts").keyBy("user")
    with pytest.raises(PlanError, match=r"zone 'Europe/Amsterdm' is not a time zone"):
        keyed.window(sw.CalendarWindows.days("Europe/Amsterdm"))
    with pytest.raises(TypeError, match=r"ComputedWindows.of\(start, end\): start is bigint.*"):
        keyed.window(sw.ComputedWindows.of("opened", F.timestamp_millis(F.col("closed"))))
    with pytest.raises(ValueError, match=r"ComputedWindows.of\(start, end\): .*do not resolve"):
        keyed.window(sw.ComputedWindows.of(F.col("nope"), F.col("closed")))
    with pytest.raises(TypeError, match=r"ofMany\(windows\): windows is array<bigint>"):
        keyed.window(sw.ComputedWindows.ofMany(F.array("opened", "closed")))
    windowed = keyed.window(sw.TumblingEventTimeWindows.of(10_000))
    with pytest.raises(TypeError, match=r"ConditionEvictor.of\(condition\): .* is bigint"):
        windowed.evictor(sw.ConditionEvictor.of(F.col("amount") + 1))
    with pytest.raises(TypeError, match=r"a trigger keeps only agg.count, agg.sum"):
        sw.agg.collectList("amount") >= 3  # noqa: B015
    with pytest.raises(TypeError, match=r"compare the aggregate with a number"):
        sw.agg.sum("amount") >= "3"  # noqa: B015
    with pytest.raises(TypeError, match=r"AggregateTrigger.of\(condition\): condition must"):
        sw.AggregateTrigger.of(sw.agg.sum("amount"))  # type: ignore[arg-type]
    with pytest.raises(
        PlanError, match=r"AggregateTrigger: sum needs a numeric column, got string"
    ):
        windowed.trigger(sw.AggregateTrigger.of(sw.agg.sum("user") >= 3))
    with pytest.raises(ValueError, match=r"relative=True\) reads one column, got 2"):
        sw.DeltaTrigger.of(0.1, "amount", "ts", relative=True)
    # Spark runs a micro-batch again after a failure: a Column that changes is refused.
    with pytest.raises(
        PlanError, match=r"agg.sum\(column\): the Column .*rand.* not deterministic"
    ):
        windowed.trigger(sw.AggregateTrigger.of(sw.agg.sum(F.rand()) >= 3))
    with pytest.raises(PlanError, match=r"ComputedWindows.of\(start, end\): .* not deterministic"):
        keyed.window(
            sw.ComputedWindows.of(
                F.timestamp_millis("opened"), F.timestamp_millis(F.rand().cast("long"))
            )
        )


# ---------------------------------------------------------------------------------------------
# Every case on a stream, as the harness gives it for what Spark saw

MIXED_DDL = "user string, event string, price double, qty long, ts long, opened long, closed long"
_DAY = _at("2026-03-29T00:00")
MIXED = [
    ("a", "view", 10.0, 1, _DAY - 7_200_000, _DAY - 7_200_000, _DAY),
    ("a", "test", 99.0, 5, _DAY - 3_600_000, _DAY - 7_200_000, _DAY),
    ("a", "checkout", 11.5, 2, _DAY + 1_000, _DAY, _DAY + 3_600_000),
    ("b", "view", 20.0, 3, _DAY + 2_000, _DAY, _DAY + 3_600_000),
    ("a", "view", 12.0, 4, _DAY + 3_000, _DAY, _DAY + 3_600_000),
    ("b", "checkout", 23.0, 1, _DAY + 4_000, _DAY, _DAY + 3_600_000),
    ("a", "view", 9.0, 2, _DAY + 5_000, _DAY, _DAY + 3_600_000),
]


def _case(name: str) -> Any:
    """One case of the issue's list as a pipeline builder over MIXED_DDL."""

    def build(df: Any) -> sw.Pipeline:
        F = _functions(df)  # noqa: N806
        bound = sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
        keyed = sw.stream(df, "ts", watermark=bound).keyBy("user")
        days = keyed.window(sw.CalendarWindows.days("Europe/Amsterdam"))
        spent = sw.agg.sum(F.col("price") * F.col("qty"))
        early = sw.AfterWatermark.pastEndOfWindow().withEarlyFirings
        if name == "checkout":
            windowed = days.trigger(early(sw.ConditionTrigger.of(F.col("event") == "checkout")))
        elif name == "runningTotal":
            windowed = days.trigger(early(sw.AggregateTrigger.of(spent >= 50)))
        elif name == "relativeDelta":
            windowed = keyed.window(sw.GlobalWindows.create()).trigger(
                sw.DeltaTrigger.of(0.1, F.col("price") * 2, relative=True)
            )
        elif name == "computedWindows":
            windowed = keyed.window(
                sw.ComputedWindows.of(F.timestamp_millis("opened"), F.timestamp_millis("closed"))
            )
        elif name == "evictTests":
            windowed = days.evictor(sw.ConditionEvictor.of(F.col("event") == "test"))
        else:  # pandas

            @pandas_udf("double")
            def spread(v: pd.Series) -> float:
                return float(v.max() - v.min())

            return days.aggregate(sw.agg.count(), sw.agg.pandas(spread, "price"))
        return windowed.aggregate(
            sw.agg.count(), spent, sw.agg.sum("qty", filter=F.col("event") != "test")
        )

    return build


@pytest.mark.parametrize(
    "name",
    ["checkout", "runningTotal", "relativeDelta", "computedWindows", "evictTests", "pandas"],
)
def test_every_case_on_a_stream_is_what_the_harness_gives(spark, tmp_path: Path, name) -> None:
    names = ["user", "event", "price", "qty", "ts", "opened", "closed"]
    rows = [dict(zip(names, r, strict=True)) for r in MIXED]
    batches = [[r] for r in rows] + [[{**rows[0], "user": "z", "ts": _DAY + 10 * 86_400_000}]]
    build = _case(name)
    result = runStream(spark, tmp_path, MIXED_DDL, build, batches, trigger=None)
    expected = replayInHarness(build(spark.createDataFrame([], MIXED_DDL)), result, batches)
    assert result.outputs["main"], name
    assert canonical(result.outputs["main"]) == canonical(expected["main"]), name
