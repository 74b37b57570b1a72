"""Every engine feature through the public Python harness (``sparkwin.testing.WindowHarness``):
the same JVM engine Spark runs, driven by hand. Expected values follow docs/DESIGN.md."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import pytest

import sparkwin as sw
from sparkwin.testing import WindowHarness

SCHEMA = "user string, amount long, ts long"


@pytest.fixture(scope="module")
def df(spark):
    return spark.createDataFrame([], SCHEMA)


def src(df, bound: int = 0) -> sw.DataStream:
    return sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(bound))


def row(user: str, amount: int, ts: int) -> dict:
    return {"user": user, "amount": amount, "ts": ts}


def short(out: list[dict], *extra: str) -> list[tuple]:
    return [(o["user"], o["window_start"], o["window_end"], *(o[e] for e in extra)) for o in out]


def tumbling(df, size: int = 10, **kw) -> sw.WindowedStream:
    w = src(df).keyBy("user").window(sw.TumblingEventTimeWindows.of(size))
    for name, value in kw.items():
        w = getattr(w, name)(value)
    return w


# ---------------------------------------------------------------------------------------------
# Windows, watermarks at the boundary, negative time


def test_window_all_and_global_windows_have_no_bounds(df) -> None:
    p = (
        src(df)
        .windowAll(sw.GlobalWindows.create())
        .trigger(sw.CountTrigger.of(2))
        .aggregate(sw.agg.count())
    )
    h = WindowHarness(p)
    h.processElements([row("a", 1, 1), row("b", 1, 2)])
    assert h.extractOutput() == [
        {
            "window_start": None,
            "window_end": None,
            "window_time": None,
            "count": 2,
            "pane_timing": "EARLY",
            "pane_index": 0,
            "pane_is_first": True,
            "pane_is_last": False,
        }
    ]


# ---------------------------------------------------------------------------------------------
# Lateness


def test_late_elements_are_counted_when_there_is_no_side_output(df) -> None:
    h = WindowHarness(tumbling(df).aggregate(sw.agg.count()))
    h.processElement(row("a", 1, 1))
    h.processWatermark(20)
    h.processElement(row("a", 1, 2))
    assert h.numLateRecordsDropped() == 1
    with pytest.raises(ValueError, match="no side output 'late'"):
        h.extractSideOutput("late")


# ---------------------------------------------------------------------------------------------
# Sessions


def test_dynamic_gaps_and_bad_gaps_go_to_the_error_output(spark) -> None:
    gdf = spark.createDataFrame([], "user string, gap long, ts long")
    p = (
        sw.stream(gdf, "ts", watermark=sw.WatermarkStrategy.forMonotonousTimestamps())
        .keyBy("user")
        .window(sw.EventTimeSessionWindows.withDynamicGap("gap"))
        .aggregate(sw.agg.count())
    )
    h = WindowHarness(p)
    h.processElements([{"user": "a", "gap": 10, "ts": 0}, {"user": "a", "gap": 3, "ts": 12}])
    h.processElement({"user": "a", "gap": 0, "ts": 13})
    h.processWatermark(100)
    assert sorted((o["window_start"], o["window_end"]) for o in h.extractOutput()) == [
        (0, 10),
        (12, 15),
    ]
    assert h.extractSideOutput("errors") == [
        {
            "user": "a",
            "gap": 0,
            "ts": 13,
            "error": "a dynamic session gap must be positive, got 0 ms",
        }
    ]


def test_each_elements_fate_is_the_engines_word(spark) -> None:
    """The run log's fate comes from the engine: a bad dynamic gap is an error (the engine
    counted it in, so counters alone would call it accepted), an element in no window is dropped.
    """
    gdf = spark.createDataFrame([], "user string, gap long, ts long")
    sessions = WindowHarness(
        sw.stream(gdf, "ts")
        .keyBy("user")
        .window(sw.EventTimeSessionWindows.withDynamicGap("gap"))
        .aggregate(sw.agg.count())
    )
    sessions.processElement({"user": "a", "gap": 0, "ts": 13})
    sessions.processElement({"user": "a", "gap": 5, "ts": 14})
    sliding = WindowHarness(
        sw.stream(gdf, "ts")
        .keyBy("user")
        .window(sw.SlidingEventTimeWindows.of(5, 10))
        .aggregate(sw.agg.count())
    )
    sliding.processElement({"user": "a", "gap": 0, "ts": 7})
    assert [s.fate for s in sessions.runLog().steps] == ["error", "accepted"]
    assert [s.fate for s in sliding.runLog().steps] == ["dropped"]
    assert sessions.metrics()["elementsIn"] == 2


def test_null_timestamps_go_to_the_error_output(df) -> None:
    h = WindowHarness(tumbling(df).aggregate(sw.agg.count()))
    h.processElement({"user": "a", "amount": 1, "ts": None})
    assert h.extractSideOutput("errors") == [
        {"user": "a", "amount": 1, "ts": None, "error": "the timestamp is null"}
    ]


# ---------------------------------------------------------------------------------------------
# Flink triggers and evictors


def test_processing_time_windows_and_timeout_triggers(df) -> None:
    p = (
        src(df)
        .keyBy("user")
        .window(sw.TumblingProcessingTimeWindows.of(100))
        .aggregate(sw.agg.count())
    )
    h = WindowHarness(p)
    h.setProcessingTime(10)
    h.processElement(row("a", 1, 999))
    h.setProcessingTime(98)
    assert h.extractOutput() == []
    h.setProcessingTime(99)
    assert short(h.extractOutput(), "count") == [("a", 0, 100, 1)]

    timeout = sw.PurgingTrigger.of(sw.ProcessingTimeoutTrigger.of(sw.CountTrigger.of(3), 100))
    g = WindowHarness(
        src(df)
        .keyBy("user")
        .window(sw.GlobalWindows.create())
        .trigger(timeout)
        .aggregate(sw.agg.count())
    )
    g.setProcessingTime(0)
    g.processElements([row("a", 1, 0)] * 4)
    assert [o["count"] for o in g.extractOutput()] == [3]
    g.setProcessingTime(99)
    assert g.extractOutput() == []
    g.setProcessingTime(100)
    assert [o["count"] for o in g.extractOutput()] == [1]


# ---------------------------------------------------------------------------------------------
# Beam triggers, panes and accumulation modes


def _early_late(df, mode: str, lateness: int) -> sw.Pipeline:
    trigger = (
        sw.AfterWatermark.pastEndOfWindow()
        .withEarlyFirings(sw.AfterPane.elementCountAtLeast(2))
        .withLateFirings(sw.AfterPane.elementCountAtLeast(1))
    )
    return (
        tumbling(df, trigger=trigger, allowedLateness=lateness, sideOutputLateData="late")
        .accumulationMode(mode)
        .aggregate(sw.agg.collectList("amount"))
    )


@pytest.mark.parametrize("mode", ["accumulating", "discarding"])
def test_beam_pane_sequence_early_on_time_late(df, mode: str) -> None:
    h = WindowHarness(_early_late(df, mode, lateness=5))
    h.processWatermark(0)
    h.processElements([row("a", 1, 1), row("a", 2, 3), row("a", 3, 5)])
    h.processWatermark(12)
    h.processElements([row("a", 4, 7), row("a", 5, 9)])
    h.processWatermark(15)
    acc = mode == "accumulating"
    panes = [
        (
            o["pane_timing"],
            o["pane_index"],
            o["pane_is_first"],
            o["pane_is_last"],
            o["collect_list_amount"],
        )
        for o in h.extractOutput()
    ]
    assert panes == [
        ("EARLY", 0, True, False, [1, 2]),
        ("ON_TIME", 1, False, False, [1, 2, 3] if acc else [3]),
        ("LATE", 2, False, False, [1, 2, 3, 4] if acc else [4]),
        ("LATE", 3, False, False, [1, 2, 3, 4, 5] if acc else [5]),
    ]


@pytest.mark.parametrize("mode", ["accumulating", "discarding"])
def test_beam_on_time_pane_is_last_and_always_emitted_without_lateness(df, mode: str) -> None:
    h = WindowHarness(_early_late(df, mode, lateness=0))
    h.processElements([row("a", 1, 1), row("a", 2, 3)])
    h.processWatermark(12)
    out = h.extractOutput()
    last = out[-1]
    assert (last["pane_timing"], last["pane_is_last"]) == ("ON_TIME", True)
    assert last["collect_list_amount"] == ([1, 2] if mode == "accumulating" else [])


@pytest.mark.parametrize("mode", ["accumulating", "discarding"])
def test_beam_sessions_merged_window_restarts_pane_numbering(df, mode: str) -> None:
    trigger = sw.AfterWatermark.pastEndOfWindow().withEarlyFirings(
        sw.AfterPane.elementCountAtLeast(2)
    )
    p = (
        src(df)
        .keyBy("user")
        .window(sw.EventTimeSessionWindows.withGap(10))
        .trigger(trigger)
        .accumulationMode(mode)
        .aggregate(sw.agg.collectList("amount"))
    )
    h = WindowHarness(p)
    h.processWatermark(0)
    h.processElements([row("a", 1, 1), row("a", 2, 2), row("a", 3, 20), row("a", 4, 11)])
    h.processWatermark(31)
    acc = mode == "accumulating"
    assert [
        (
            o["window_start"],
            o["window_end"],
            o["pane_timing"],
            o["pane_index"],
            o["collect_list_amount"],
        )
        for o in h.extractOutput()
    ] == [
        (1, 12, "EARLY", 0, [1, 2]),
        (1, 30, "EARLY", 0, [1, 2, 3, 4] if acc else [3, 4]),
        (1, 30, "ON_TIME", 1, [1, 2, 3, 4] if acc else []),
    ]


def test_composite_triggers_or_finally_and_after_each(df) -> None:
    keyed = src(df).keyBy("user").window(sw.GlobalWindows.create())
    until = sw.Repeatedly.forever(sw.AfterPane.elementCountAtLeast(2)).orFinally(
        sw.AfterPane.elementCountAtLeast(5)
    )
    h = WindowHarness(
        keyed.trigger(until).accumulationMode("discarding").aggregate(sw.agg.collectList("amount"))
    )
    h.processElements([row("a", v, v) for v in range(1, 7)])
    out = h.extractOutput()
    assert [(o["collect_list_amount"], o["pane_is_last"]) for o in out] == [
        ([1, 2], False),
        ([3, 4], False),
        ([5], True),
    ]
    assert h.metrics()["droppedClosedWindow"] == 1
    each = sw.AfterEach.inOrder(
        sw.AfterPane.elementCountAtLeast(2), sw.AfterPane.elementCountAtLeast(3)
    )
    g = WindowHarness(keyed.trigger(each).accumulationMode("discarding").aggregate(sw.agg.count()))
    g.processElements([row("a", 1, v) for v in range(6)])
    assert [o["count"] for o in g.extractOutput()] == [2, 3]


def test_after_first_and_after_all_with_processing_time(df) -> None:
    keyed = src(df).keyBy("user").window(sw.GlobalWindows.create())
    first = sw.Repeatedly.forever(
        sw.AfterFirst.of(
            sw.AfterPane.elementCountAtLeast(3),
            sw.AfterProcessingTime.pastFirstElementInPane().plusDelayOf(100),
        )
    )
    h = WindowHarness(keyed.trigger(first).accumulationMode("discarding").aggregate(sw.agg.count()))
    h.setProcessingTime(0)
    h.processElements([row("a", 1, 1), row("a", 1, 2)])
    h.setProcessingTime(100)
    assert [o["count"] for o in h.extractOutput()] == [2]
    both = sw.AfterAll.of(
        sw.AfterPane.elementCountAtLeast(2),
        sw.AfterProcessingTime.pastFirstElementInPane().plusDelayOf(100),
    )
    g = WindowHarness(keyed.trigger(both).aggregate(sw.agg.count()))
    g.setProcessingTime(0)
    g.processElement(row("a", 1, 1))
    g.setProcessingTime(100)
    assert g.extractOutput() == []
    g.processElement(row("a", 1, 2))
    assert [(o["count"], o["pane_is_last"]) for o in g.extractOutput()] == [(2, True)]


# ---------------------------------------------------------------------------------------------
# Storm


def test_storm_documented_example(spark) -> None:
    tdf = spark.createDataFrame([], "id string, ts timestamp")
    p = (
        sw.stream(tdf, "ts", watermark=sw.WatermarkStrategy.forStormLag(5000))
        .windowAll(
            sw.StormWindows.of(dt.timedelta(seconds=20), dt.timedelta(seconds=10)).withLag(5000)
        )
        .aggregate(sw.agg.collectList("id"))
    )
    h = WindowHarness(p)
    six = dt.datetime(2026, 1, 1, 6, 0, 0, tzinfo=dt.UTC)

    def at(seconds: int) -> dt.datetime:
        return six + dt.timedelta(seconds=seconds)

    for i, s in enumerate([3, 5, 7, 18, 26, 36], start=1):
        h.processElement({"id": f"e{i}", "ts": at(s)})
    h.processWatermark(at(31))
    ms = int(six.timestamp() * 1000)
    assert [
        (o["window_start"] - ms, o["window_end"] - ms, o["collect_list_id"])
        for o in h.extractOutput()
    ] == [
        (-10_000, 10_000, ["e1", "e2", "e3"]),
        (0, 20_000, ["e1", "e2", "e3", "e4"]),
        (10_000, 30_000, ["e4", "e5"]),
    ]  # e6 waits for the window ending at 6:00:40


# ---------------------------------------------------------------------------------------------
# Channels, the valve and generated watermarks


def test_generated_watermarks_are_periodic_in_processing_time(df) -> None:
    p = (
        sw.stream(
            df,
            "ts",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(3).withAutoWatermarkInterval(
                200
            ),
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10))
        .aggregate(sw.agg.count())
    )
    h = WindowHarness(p, generateWatermarks=True)
    h.processElement(row("a", 1, 15))
    assert h.currentWatermark() is None  # no tick yet
    h.setProcessingTime(199)
    assert h.currentWatermark() is None
    h.setProcessingTime(200)
    assert h.currentWatermark() == 11  # 15 - 3 - 1


def test_punctuated_watermarks_and_idleness(spark) -> None:
    mdf = spark.createDataFrame([], "user string, ts long, mark boolean")
    punctuated = (
        sw.stream(mdf, "ts", watermark=sw.WatermarkStrategy.forPunctuated("mark"))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10))
        .aggregate(sw.agg.count())
    )
    h = WindowHarness(punctuated, generateWatermarks=True)
    h.processElement({"user": "a", "ts": 5, "mark": False})
    assert h.currentWatermark() is None
    h.processElement({"user": "a", "ts": 12, "mark": True})
    assert h.currentWatermark() == 11
    assert [o["count"] for o in h.extractOutput()] == [1]

    idle = (
        sw.WatermarkStrategy.forMonotonousTimestamps()
        .withAutoWatermarkInterval(100)
        .withIdleness(500)
    )
    two = (
        sw.stream(mdf, "ts", watermark=idle)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10))
        .aggregate(sw.agg.count())
    )
    g = WindowHarness(two, channels=2, generateWatermarks=True)
    g.processElement({"user": "a", "ts": 5, "mark": False}, channel=1)
    g.setProcessingTime(100)
    g.processElement({"user": "a", "ts": 50, "mark": False}, channel=0)
    g.setProcessingTime(200)
    assert g.currentWatermark() == 4  # channel 1 holds the valve at 5 - 1
    g.setProcessingTime(600)  # channel 1's last element was at 0: idle from the tick at 500
    assert g.currentWatermark() == 49


# ---------------------------------------------------------------------------------------------
# Process functions, types, state, arguments


def test_process_function_gets_the_panes_elements(df) -> None:
    def summary(key, window, pdf: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {"user": [key[0]], "n": [len(pdf)], "timing": [window.paneTiming], "end": [window.end]}
        )

    p = tumbling(df).process(summary, "user string, n long, timing string, end timestamp")
    h = WindowHarness(p)
    h.processElements([row("a", 1, 1), row("a", 2, 3)])
    h.processWatermark(9)
    out = h.extractOutput()
    assert out == [
        {
            "user": "a",
            "n": 2,
            "timing": "ON_TIME",
            "end": pd.Timestamp(dt.datetime(1970, 1, 1, 0, 0, 0, 10000)),
        }
    ]


def test_timestamp_decimal_and_date_columns(spark) -> None:
    tdf = spark.createDataFrame([], "user string, price decimal(10,2), day date, ts timestamp")
    p = (
        sw.stream(tdf, "ts", watermark=sw.WatermarkStrategy.forMonotonousTimestamps())
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(dt.timedelta(seconds=10)))
        .aggregate(sw.agg.sum("price"), sw.agg.min("day"), sw.agg.max("ts"))
    )
    h = WindowHarness(p)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    h.processElement({"user": "a", "price": Decimal("1.25"), "day": dt.date(2026, 1, 2), "ts": t0})
    h.processElement(
        {
            "user": "a",
            "price": Decimal("2.50"),
            "day": dt.date(2026, 1, 1),
            "ts": t0 + dt.timedelta(seconds=3),
        }
    )
    h.processWatermark(t0 + dt.timedelta(seconds=20))
    (out,) = h.extractOutput()
    assert out["sum_price"] == Decimal("3.75")
    assert out["min_day"] == dt.date(2026, 1, 1)
    assert out["max_ts"] == int(t0.timestamp() * 1000) + 3000


def test_state_is_empty_once_every_window_is_cleaned_up(df) -> None:
    p = tumbling(df, allowedLateness=5).aggregate(sw.agg.count())
    h = WindowHarness(p)
    h.processElements([row(u, 1, t) for u in "abc" for t in (1, 11, 21)])
    assert h.numStateEntries() > 0
    h.processWatermark(1_000)
    assert h.numStateEntries() == 0


def test_harness_rejects_bad_arguments(df) -> None:
    p = tumbling(df).aggregate(sw.agg.count())
    with pytest.raises(TypeError, match="pipeline must be"):
        WindowHarness("not a pipeline")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="channels must be a positive int"):
        WindowHarness(p, channels=0)
    h = WindowHarness(p, channels=2)
    with pytest.raises(ValueError, match="channel must be in"):
        h.processElement(row("a", 1, 1), channel=2)
    with pytest.raises(ValueError, match="unknown columns \\['amout'\\]"):
        h.processElement({"user": "a", "amout": 1, "ts": 1})
    with pytest.raises(TypeError, match="watermark must be an int"):
        h.processWatermark("soon")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "assigner",
    [sw.SlidingEventTimeWindows.of(300, 100), sw.EventTimeSessionWindows.withGap(600)],
    ids=["sliding", "sessions"],
)
def test_many_keys_in_one_harness_agree_with_spark_batch(spark, assigner) -> None:
    # The harness holds every key in one process and packs count/sum/avg state in primitive
    # arrays by key id; Spark's batch runtime runs each key on its own. Same panes from both.
    import random

    rnd = random.Random(5)
    rows = [
        {
            "user": f"u{rnd.randrange(150)}",
            "amount": None if rnd.random() < 0.1 else rnd.randrange(100),
            "ts": i * 3 - rnd.randrange(400),
        }
        for i in range(3000)
    ]
    data = spark.createDataFrame(rows, SCHEMA)

    def pipeline(frame):
        return (
            src(frame, bound=400)
            .keyBy("user")
            .window(assigner)
            .aggregate(
                sw.agg.sum("amount"), sw.agg.count(), sw.agg.count("amount"), sw.agg.avg("amount")
            )
        )

    h = WindowHarness(pipeline(data))
    h.processElements(rows)
    h.endOfInput()
    columns = [
        "user",
        "window_start",
        "window_end",
        "sum_amount",
        "count",
        "count_amount",
        "avg_amount",
    ]
    harnessed = sorted(tuple(o[c] for c in columns) for o in h.extractOutput())
    millis = [f"unix_millis({c}) as {c}" if c.startswith("window_") else c for c in columns]
    batch = sorted(tuple(r) for r in pipeline(data).toDF().selectExpr(*millis).collect())
    assert len(harnessed) > 500
    assert harnessed == batch
    assert h.numStateEntries() == 0
