"""No record can fail a job: event times no window can hold (outside Spark's timestamp range,
0001-01-01..9999-12-31) and dynamic gaps too large for a long go to the ``errors`` output, on
every runtime, and the harness refuses values its columns cannot hold, as Spark would."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F  # noqa: N812
from sparkstreams import runStream, writeBatches

import sparkwin as sw
from sparkwin._spark import runtime as _runtime
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


# ---------------------------------------------------------------------------------------------
# Typed values at the edges of what Spark holds: a timestamp column (where the event time is),
# a date and an array of timestamps beside it. Some values Spark holds have no java.sql form
# (timestamp_micros(Long.MinValue) and the days after it, dates near Int.MinValue days): read in
# a session without the java8 API, they used to fail the task, and a stream read them again after
# every restart. Each bad row must reach errors as it came, with the same reason, on every path.

MICROS = (
    "user string, amount long, us long, part int, note string, days int, more long, arrival long"
)
MIN_US, MAX_US = -(2**63), 2**63 - 1
ABOVE_US, BELOW_US = ABOVE * 1000, BELOW * 1000  # 10000-01-01, just before 0001-01-01
MIN_DAY = -(2**31)


def _micro(user: str, us: int | None, i: int, **over: Any) -> dict[str, Any]:
    row = {
        "user": user,
        "amount": i,
        "us": us,
        "part": i % 2,
        "note": f"n{i}",
        "days": 20_000,
        "more": 1_000,
        "arrival": 1_000 * i,
    }
    return {**row, **over}


def _microRows() -> list[dict[str, Any]]:
    good = [_micro("a", us, i) for i, us in enumerate([1_000_000, 2_000_000, 3_500_000], 1)]
    bad = [
        _micro("a", None, 10),  # no timestamp
        _micro("b", ABOVE_US, 11),  # past 9999-12-31 (its note is a column nothing reads)
        _micro("b", MAX_US, 12),
        _micro("c", MIN_US, 13),  # no java.sql.Timestamp holds it
        _micro("c", BELOW_US, 14),
        _micro("d", 1_200_000, 15, days=MIN_DAY),  # a date no java.sql.Date holds
        _micro("d", 1_300_000, 16, more=MIN_US),  # inside an array
    ]
    late = [_micro("a", 9_000_000, 20)]  # moves the watermark past the first window
    return good + bad + late


def _typedInput(df):
    """The pipelines' input: the raw longs as a timestamp, a date and an array of timestamps."""
    return df.select(
        "user",
        "amount",
        F.timestamp_micros("us").alias("ts"),
        "part",
        "note",
        F.date_from_unix_date("days").alias("day"),
        F.array(F.timestamp_micros("more")).alias("times"),
        "arrival",
    )


def _microPipeline(df, *, element: bool = False, channel: str | None = None) -> sw.Pipeline:
    windowed = (
        sw.stream(
            df, "ts", channel=channel, watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(1000))
    )
    if element:
        windowed = windowed.sideOutputLateData("late")
    return windowed.aggregate(sw.agg.sum("amount"))


def _comparable(errors) -> list[tuple]:
    """Error rows as plain values, computed by Spark (Python's datetime holds years 1 to 9999)."""
    return sorted(
        tuple(r)
        for r in errors.select(
            "user",
            "amount",
            F.unix_micros("ts"),
            "part",
            "note",
            F.unix_date("day"),
            F.transform("times", lambda x: F.unix_micros(x)),
            "arrival",
            "error",
        ).collect()
    )


def _streamed(spark, tmp_path: Path, build, rows, tag: str = "errors", comparable=None):
    """What a stream of `rows` (two files) puts out as `tag`, each batch as `comparable` sees it."""
    source = tmp_path / "source"
    writeBatches(source, [rows[:6], rows[6:]])
    sdf = spark.readStream.schema(MICROS).option("maxFilesPerTrigger", 1).json(str(source))
    pipeline = build(_typedInput(sdf))
    split = _runtime.splitOutputs(pipeline.planJson(), None, None, pipeline.lateOutputTag)
    found: list[tuple] = []
    query = (
        pipeline._union()
        .writeStream.foreachBatch(
            lambda b, _: found.extend((comparable or _comparable)(split(b)[tag]))
        )
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    return sorted(found)


@pytest.mark.parametrize("java8", [False, True], ids=["java.sql times", "java.time"])
def test_every_path_sends_the_same_bad_rows_to_errors_as_they_came(spark, tmp_path, java8):
    spark.conf.set("spark.sql.datetime.java8API.enabled", str(java8).lower())
    try:
        bounded = _typedInput(spark.createDataFrame(_microRows(), MICROS))
        expected = _comparable(_microPipeline(bounded).getSideOutput("errors"))
        paths = {
            "combined stream": lambda df: _microPipeline(df),
            "element stream": lambda df: _microPipeline(df, element=True),
            "per-channel stream": lambda df: _microPipeline(df, channel="part"),
        }
        for name, build in paths.items():
            found = _streamed(spark, tmp_path / name.replace(" ", "-"), build, _microRows())
            assert found == expected, name
        replayed = (
            sw.stream(
                bounded,
                "ts",
                arrival="arrival",
                watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0),
            )
            .keyBy("user")
            .window(sw.TumblingEventTimeWindows.of(1000))
            .aggregate(sw.agg.sum("amount"))
            .replay()
        )
        assert _comparable(replayed.getSideOutput("errors")) == expected, "replay"
    finally:
        spark.conf.unset("spark.sql.datetime.java8API.enabled")
    byNote = {row[4]: row for row in expected}
    unheld = {"n15", "n16"}  # the date and the array: bad only where java.sql cannot hold them
    assert set(byNote) == {f"n{i}" for i in range(10, 17)} - (unheld if java8 else set())
    # Each as it came: the note nothing reads, the time past 9999 (not null), the raw values.
    assert byNote["n11"][2] == ABOVE_US
    assert byNote["n11"][8].startswith("the event time 253402300800000 ms is outside 0001-01-01")
    assert byNote["n10"][8] == "the timestamp is null"
    assert byNote["n13"][2] == MIN_US
    if java8:  # java.time holds every value: the event time's range speaks
        assert "outside 0001-01-01..9999-12-31" in byNote["n13"][8]
        return
    words = (
        "which Spark holds but a java.sql.{} cannot (the rebase to its calendar overflows); set "
    )
    assert byNote["n13"][8].startswith(
        "column 'ts' holds the timestamp -290308-12-21T19:59:05.224192Z, "
        + words.format("Timestamp")
        + "spark.sql.datetime.java8API.enabled=true"
    )
    assert byNote["n15"][5] == MIN_DAY
    assert byNote["n15"][8].startswith(
        "column 'day' holds the date -5877641-06-23, " + words.format("Date")
    )
    assert byNote["n16"][6] == [MIN_US] and byNote["n16"][8].startswith("column 'times' holds")


def test_the_harness_gives_the_error_rows_spark_does_for_what_it_takes(spark) -> None:
    """The harness takes timestamps as epoch milliseconds: the bad rows above it can hold (a
    time of whole milliseconds, no java.sql rebase) reach its errors as they reach Spark's."""
    MAX_MS_US = (MAX_US // 1000) * 1000
    taken = [
        {**r, "us": MAX_MS_US} if r["note"] == "n12" else r
        for r in _microRows()
        if r["note"] in ("n10", "n11", "n12")
    ]
    bounded = _typedInput(spark.createDataFrame(taken, MICROS))
    expected = _comparable(_microPipeline(bounded).getSideOutput("errors"))
    h = WindowHarness(_microPipeline(bounded))
    epoch = dt.date(1970, 1, 1)
    for r in taken:
        h.processElement(
            {
                **{k: r[k] for k in ("user", "amount", "part", "note", "arrival")},
                "ts": None if r["us"] is None else r["us"] // 1000,
                "day": epoch + dt.timedelta(days=r["days"]),
                "times": [r["more"] // 1000],
            }
        )
    found = sorted(
        (
            e["user"],
            e["amount"],
            None if e["ts"] is None else e["ts"] * 1000,
            e["part"],
            e["note"],
            (e["day"] - epoch).days,
            [t * 1000 for t in e["times"]],
            e["arrival"],
            e["error"],
        )
        for e in h.extractSideOutput("errors")
    )
    assert len(found) == 3 and found == expected


@pytest.mark.parametrize("java8", [False, True], ids=["java.sql times", "java.time"])
def test_aggregates_carry_the_edge_times_spark_holds_as_spark_carries_them(spark, tmp_path, java8):
    """min, max, first and collectList of a timestamp at the far end of what the session's form
    holds (java.sql: timestamp_micros(Long.MaxValue); java.time: Long.MinValue too) give it back
    exactly, pre-aggregated, element by element and bounded. A value without a session form
    never reaches an aggregate: its row is an error, as above."""
    rows = [_micro("a", 1_000_000 + i, i, more=us) for i, us in enumerate([MAX_US, 0, MIN_US], 1)]
    rows += [_micro("a", 9_000_000, 9)]  # moves the watermark past the window
    edges = [MAX_US, 0] + ([MIN_US] if java8 else [])  # what the aggregates take

    def build(aggs, element=False):
        def pipeline(df):
            windowed = (
                sw.stream(
                    df.withColumn("at", F.col("times")[0]),
                    "ts",
                    watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0),
                )
                .keyBy("user")
                .window(sw.TumblingEventTimeWindows.of(1000))
            )
            if element:
                windowed = windowed.sideOutputLateData("late")
            return windowed.aggregate(*aggs)

        return pipeline

    def results(out) -> list[tuple]:
        return sorted(
            tuple(r)
            for r in out.where(F.unix_millis("window_start") == 1000)
            .select(
                *[
                    F.transform(c, lambda x: F.unix_micros(x))
                    if c.startswith("collect")
                    else F.unix_micros(c)
                    for c in out.columns
                    if c.endswith("_at")
                ]
            )
            .collect()
        )

    spark.conf.set("spark.sql.datetime.java8API.enabled", str(java8).lower())
    try:
        extremes = build([sw.agg.min("at"), sw.agg.max("at")])
        inOrder = build([sw.agg.first("at"), sw.agg.collectList("at")], element=True)
        bounded = _typedInput(spark.createDataFrame(rows, MICROS))
        assert results(extremes(bounded).toDF()) == [(min(edges), max(edges))]
        assert results(inOrder(bounded).toDF()) == [(edges[0], edges)]
        assert len(_comparable(inOrder(bounded).getSideOutput("errors"))) == (0 if java8 else 1)
        for name, pipeline, want in [
            ("pre-aggregated", extremes, (min(edges), max(edges))),
            ("element by element", inOrder, (edges[0], edges)),
        ]:
            found = _streamed(spark, tmp_path / name, pipeline, rows, "main", results)
            assert found == [want], name
            errors = _streamed(spark, tmp_path / f"{name}-errors", pipeline, rows)
            assert [e[6] for e in errors] == ([] if java8 else [[MIN_US]]), name
    finally:
        spark.conf.unset("spark.sql.datetime.java8API.enabled")


# What the fuzzing above did not reach: typed values at the edges of Spark's ranges (timestamps
# and dates at both ends and beyond the engine's, decimals at their precision, day-time and
# year-month intervals at their ends, NaN and infinite doubles, and arrays and structs of them)
# through a bounded job, and values at and past what each column holds through the harness.

EDGE_US = st.one_of(
    st.sampled_from(
        [MIN_US, MIN_US + 1, MIN_US + 3_000 * 86_400_000_000, BELOW_US, BELOW_US + 1_000, -1, 0]
        + [1_000_000, ABOVE_US - 1, ABOVE_US, MAX_US - 3_000 * 86_400_000_000, MAX_US]
    ),
    st.integers(MIN_US, MAX_US),
    st.integers(0, 5_000_000),
)
EDGE_DAYS = st.one_of(
    st.sampled_from([MIN_DAY, MIN_DAY + 1, MIN_DAY + 3_000, -719_163, -719_162, 0, 2_932_896])
    | st.sampled_from([2_932_897, 2**31 - 1]),
    st.integers(MIN_DAY, 2**31 - 1),
)
EDGE_DECIMAL = st.sampled_from(
    ["0", "-0.000000001", "99999999999999999999999999999.999999999", "-1e-9", "12.5"]
    + ["-99999999999999999999999999999.999999999"]
)
TYPED = (
    "user string, us long, days int, dec string, dtd int, ymy int, more long, inner long, "
    "dbl double"
)
EDGE_DOUBLE = st.sampled_from(
    [float("nan"), float("inf"), float("-inf"), -0.0, 5e-324, 1.7976931348623157e308, 1.5]
)


def _typedEdges(df):
    return df.select(
        "user",
        F.timestamp_micros("us").alias("ts"),
        F.date_from_unix_date("days").alias("day"),
        F.col("dec").cast("decimal(38,9)").alias("dec"),
        F.expr("make_dt_interval(dtd, 0, 0, 0)").alias("dti"),
        F.expr("make_ym_interval(ymy, 0)").alias("ymi"),
        F.array(F.timestamp_micros("more"), F.timestamp_micros("us")).alias("times"),
        F.struct(
            F.timestamp_micros("inner").alias("at"), F.date_from_unix_date("days").alias("on")
        ).alias("nested"),
        "dbl",
    )


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.fixed_dictionaries(
            {
                "user": st.sampled_from(["a", "b"]),
                "us": EDGE_US,
                "days": EDGE_DAYS,
                "dec": EDGE_DECIMAL,
                "dtd": st.sampled_from([0, 106_751_990, -106_751_990]),
                "ymy": st.sampled_from([0, 178_956_969, -178_956_969]),
                "more": EDGE_US,
                "inner": EDGE_US,
                "dbl": EDGE_DOUBLE,
            }
        ),
        min_size=1,
        max_size=8,
    ),
    java8=st.booleans(),
)
def test_fuzzed_typed_values_end_in_a_window_or_in_errors_as_they_came(spark, rows, java8):
    spark.conf.set("spark.sql.datetime.java8API.enabled", str(java8).lower())
    try:
        df = _typedEdges(spark.createDataFrame(rows, TYPED))
        pipeline = (
            sw.stream(df, "ts")
            .keyBy("user")
            .window(sw.TumblingEventTimeWindows.of(1000))
            .aggregate(
                sw.agg.count(),
                sw.agg.first("day"),
                sw.agg.collectList("dti"),
                sw.agg.max("dec"),
                sw.agg.collectList("nested"),
                sw.agg.max("dbl"),
            )
        )
        counted = pipeline.toDF().select(F.sum("count")).collect()[0][0] or 0
        errors = pipeline.getSideOutput("errors")
        seen = errors.select(
            "user",
            F.unix_micros("ts"),
            F.unix_date("day"),
            F.col("dec").cast("string"),
            F.col("dti").cast("string"),
            F.col("ymi").cast("string"),
            F.transform("times", lambda x: F.unix_micros(x)),
            F.unix_micros("nested.at"),
            F.unix_date("nested.on"),
            F.col("dbl").cast("string"),  # NaN as text: equal to itself
        ).collect()
        came = df.select(
            "user",
            F.unix_micros("ts"),
            F.unix_date("day"),
            F.col("dec").cast("string"),
            F.col("dti").cast("string"),
            F.col("ymi").cast("string"),
            F.transform("times", lambda x: F.unix_micros(x)),
            F.unix_micros("nested.at"),
            F.unix_date("nested.on"),
            F.col("dbl").cast("string"),  # NaN as text: equal to itself
        ).collect()
    finally:
        spark.conf.unset("spark.sql.datetime.java8API.enabled")
    assert counted + len(seen) == len(rows)
    remaining = [tuple(r) for r in came]
    for r in seen:  # each error row is one of the input's, as it came
        remaining.remove(tuple(r))
    inRange = [r for r in rows if BELOW_US < r["us"] < ABOVE_US]
    assert counted <= len(inRange)


HARNESS_SCHEMA = (
    "user string, ts timestamp, day date, dec decimal(10,2), n int, times array<timestamp>, "
    "inner struct<at: timestamp, k: bigint>"
)
EDGE_VALUES = {
    "ts": st.one_of(
        EDGE_US.map(lambda us: us // 1000),
        st.sampled_from([-(2**63) // 1000 - 1, (2**63 - 1) // 1000 + 1, 2**64, True, "1", 1.5]),
    ),
    "day": st.one_of(EDGE_DAYS, st.sampled_from([-(2**31) - 1, 2**31, 2**70, "x", 1.0])),
    "dec": st.sampled_from(
        [
            decimal.Decimal("99999999.99"),
            decimal.Decimal("99999999.995"),
            decimal.Decimal("-99999999.994"),
            decimal.Decimal("1e8"),
            decimal.Decimal("NaN"),
            decimal.Decimal("1e400000"),
            decimal.Decimal("1e-400000"),
            12,
            10**9,
            1.5,
            "3",
        ]
    ),
    "n": st.sampled_from([0, 2**31 - 1, -(2**31), 2**31, "1"]),
    "times": st.lists(EDGE_US.map(lambda us: us // 1000), max_size=3)
    | st.sampled_from([[2**64], ["x"], 5]),
    "inner": st.fixed_dictionaries({"at": EDGE_US.map(lambda us: us // 1000), "k": st.integers()})
    | st.sampled_from([{"nope": 1}, [1], {"at": "x"}]),
}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=st.fixed_dictionaries({}, optional=EDGE_VALUES))
def test_the_harness_takes_a_typed_value_or_refuses_it_by_name(spark, values) -> None:
    df = spark.createDataFrame([], HARNESS_SCHEMA)
    h = WindowHarness(
        sw.stream(df, "ts")
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(1000))
        .aggregate(sw.agg.count(), sw.agg.collectList("inner"), sw.agg.max("dec")),
        record=False,
    )
    try:
        h.processElement({"user": "a", **values})
    except (TypeError, ValueError) as e:  # refused, naming the column
        assert any(f"'{name}" in str(e) for name in values), e
        return
    h.endOfInput()
    assert len(h.extractOutput()) + len(h.extractSideOutput("errors")) == 1
