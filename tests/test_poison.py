"""No record can fail a job: event times no window can hold (outside Spark's timestamp range,
0001-01-01..9999-12-31) and dynamic gaps too large for a long go to the ``errors`` output, on
every runtime, and the harness refuses values its columns cannot hold, as Spark would."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sparkstreams import runStream

import sparkwin as sw
from sparkwin.testing import WindowHarness

SCHEMA = "user string, amount long, ts long, part int"
MAXL, MINL = 2**63 - 1, -(2**63)
ABOVE, BELOW = 253_402_300_800_000, -62_135_596_800_001
POISON = {MAXL, MINL, ABOVE, BELOW}


def _pipeline(df, *, late: bool = False, channel: str | None = None) -> sw.Pipeline:
    windowed = (
        sw.stream(
            df, "ts", channel=channel, watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(1000))
    )
    if late:
        windowed = windowed.sideOutputLateData("late")
    return windowed.aggregate(sw.agg.sum("amount"))


def _rows() -> list[dict]:
    return [
        {"user": "a", "amount": i, "ts": ts, "part": i % 2}
        for i, ts in enumerate([5, MAXL, 7, MINL, ABOVE, 9, BELOW], start=1)
    ]


def test_a_bounded_job_sends_them_to_errors_and_finishes(spark) -> None:
    pipeline = _pipeline(spark.createDataFrame(_rows(), SCHEMA))
    assert [(r["sum_amount"]) for r in pipeline.toDF().collect()] == [1 + 3 + 6]
    errors = pipeline.getSideOutput("errors").collect()
    assert sorted(r["ts"] for r in errors) == sorted(POISON)
    assert all("outside 0001-01-01..9999-12-31" in r["error"] for r in errors)


@pytest.mark.parametrize(
    ("late", "channel"),
    [(False, None), (True, None), (False, "part")],
    ids=["pre-aggregated", "element by element", "per channel"],
)
def test_a_stream_sends_them_to_errors_and_keeps_running(spark, tmp_path, late, channel):
    rows = _rows()
    batches = [
        rows[:4],
        rows[4:],
        [{"user": "a", "amount": 100, "ts": 50_000, "part": p} for p in (0, 1)],
    ]
    result = runStream(
        spark, tmp_path, SCHEMA, lambda df: _pipeline(df, late=late, channel=channel), batches
    )
    assert sorted(r["ts"] for r in result.outputs["errors"]) == sorted(POISON)
    # The poison moved no watermark: the window of the good events fired when time reached it.
    assert [r["sum_amount"] for r in result.outputs["main"]] == [1 + 3 + 6]


def test_replay_sends_them_to_errors(spark) -> None:
    # The last event moves the watermark past the first window (replay fires what the live job
    # would have: no end of input).
    later = {"user": "b", "amount": 0, "ts": 5_000, "part": 0}
    rows = [{**r, "arrival": 1_000 * i} for i, r in enumerate([*_rows(), later, later])]
    df = spark.createDataFrame(rows, SCHEMA + ", arrival long")
    replayed = (
        sw.stream(
            df, "ts", arrival="arrival", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(1000))
        .aggregate(sw.agg.sum("amount"))
        .replay()
    )
    assert sorted(r["ts"] for r in replayed.getSideOutput("errors").collect()) == sorted(POISON)
    assert [r["sum_amount"] for r in replayed.toDF().collect()] == [10]


def test_the_harness_refuses_values_its_columns_cannot_hold(spark) -> None:
    h = WindowHarness(_pipeline(spark.createDataFrame([], SCHEMA)))
    with pytest.raises(ValueError, match=r"column 'ts' is bigint: 18446744073709551616 is outside"):
        h.processElement({"user": "a", "amount": 1, "ts": 2**64})
    with pytest.raises(TypeError, match="column 'amount' is bigint: got str '3'"):
        h.processElement({"user": "a", "amount": "3", "ts": 1})
    with pytest.raises(TypeError, match="column 'user' is string: got int 7"):
        h.processElement({"user": 7, "amount": 1, "ts": 1})
    with pytest.raises(ValueError, match="column 'part' is int: 2147483648 is outside"):
        h.processElement({"user": "a", "amount": 1, "ts": 1, "part": 2**31})
    with pytest.raises(TypeError, match="column 'ts' is bigint: got bool"):
        h.processElement({"user": "a", "amount": 1, "ts": True})
    assert h.extractOutput() == [] and h.extractSideOutput("errors") == []


ASSIGNERS = {
    "tumbling": (lambda: sw.TumblingEventTimeWindows.of(1000), 1),
    "sliding": (lambda: sw.SlidingEventTimeWindows.of(1000, 250), 4),
    "session": (lambda: sw.EventTimeSessionWindows.withGap(1000), None),
}
TIMES = st.one_of(
    st.integers(min_value=MINL, max_value=MAXL),
    st.sampled_from(sorted(POISON | {ABOVE - 1, BELOW + 1, 0, -1})),
    st.integers(min_value=-10_000, max_value=10_000),
)


@pytest.mark.parametrize("assigner", sorted(ASSIGNERS))
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(times=st.lists(TIMES, min_size=1, max_size=12))
def test_fuzzed_event_times_end_in_a_window_or_in_errors(spark, assigner, times) -> None:
    make, windowsPerElement = ASSIGNERS[assigner]
    df = spark.createDataFrame([], SCHEMA)
    pipeline = (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("user")
        .window(make())
        .aggregate(sw.agg.count())
    )
    h = WindowHarness(pipeline)
    for ts in times:
        h.processElement({"user": "a", "amount": 1, "ts": ts})
    h.endOfInput()
    good = [t for t in times if BELOW < t < ABOVE]
    counted = sum(r["count"] for r in h.extractOutput())
    # Every in-range event is in its windows' final panes (sessions: exactly one).
    assert counted == len(good) * (windowsPerElement or 1)
    assert len(h.extractSideOutput("errors")) == len(times) - len(good)
    assert h.numStateEntries() == 0


def test_a_sliding_assigner_with_too_many_windows_per_element_is_refused(spark) -> None:
    from datetime import timedelta as td

    with pytest.raises(ValueError, match="86,400,000 windows per element, more than maxWindows"):
        sw.SlidingEventTimeWindows.of(td(days=1), 1)
    assert sw.SlidingEventTimeWindows.of(td(days=1), td(seconds=10)).slideMs == 10_000
    wide = sw.SlidingEventTimeWindows.of(td(days=1), td(seconds=1), maxWindowsPerElement=100_000)
    assert wide.slideMs == 1_000
    with pytest.raises(TypeError, match="maxWindowsPerElement must be an int, got float"):
        sw.SlidingEventTimeWindows.of(td(days=1), 1, maxWindowsPerElement=1e8)
    with pytest.raises(ValueError, match="maxWindowsPerElement must be 1 or more, got 0"):
        sw.SlidingEventTimeWindows.of(td(days=1), 1, maxWindowsPerElement=0)
    # A plan that skipped the Python check (hand-edited, or from another client): the JVM says no.
    pipeline = (
        sw.stream(spark.createDataFrame([], SCHEMA), "ts")
        .keyBy("user")
        .window(wide)
        .aggregate(sw.agg.count())
    )
    pipeline.plan["assigner"]["slideMs"] = 1
    with pytest.raises(sw.errors.PlanError, match="86400000 windows per element") as raised:
        pipeline.schemas()
    assert str(raised.value).startswith("window: {") and "requirement failed" not in str(
        raised.value
    )
