"""A user's own trigger, assigner, evictor and aggregate (examples/extending, Java, built by the
`extendingJar` fixture as docs/concepts/extending.md builds it) on Spark, streaming and bounded,
in the harness and over Spark Connect, each against results computed here from the data alone;
and the checks that refuse a bad class or param when the pipeline is built.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import EXAMPLES
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812
from sparkstreams import canonical, replayInHarness, runStream

import sparkwin as sw
from sparkwin.errors import ConnectUnsupportedError, PlanError
from sparkwin.testing import WindowHarness

PACKAGE = "com.example.sparkwin"
COUNT_OR_END = f"{PACKAGE}.CountOrEndTrigger"
ZONED_DAYS = f"{PACKAGE}.ZonedDayWindows"
KEEP_LARGEST = f"{PACKAGE}.KeepLargestEvictor"
WEIGHTED_MEAN = f"{PACKAGE}.WeightedMean"

BERLIN = ZoneInfo("Europe/Berlin")
HOUR = 3_600_000
SCHEMA = "user string, ts long, amount long, price double, qty long"


def _ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def _r(user: str, at: str, amount: int) -> dict[str, Any]:
    return {
        "user": user,
        "ts": _ms(at),
        "amount": amount,
        "price": amount * 1.5,
        "qty": amount % 3 + 1,
    }


# Around the start of summer time in Berlin: the local day 2024-03-31 is 23 hours long,
# [2024-03-30T23:00Z, 2024-03-31T22:00Z). a@23:30Z on the 30th is already the 31st there, and
# b@22:30Z on the 31st is April 1st: fixed 24-hour windows with an offset get one of them wrong.
SCRIPT = [
    [
        _r("a", "2024-03-30T08:00", 1),
        _r("a", "2024-03-30T09:00", 2),
        _r("b", "2024-03-30T10:00", 3),
    ],
    [
        _r("a", "2024-03-30T12:00", 4),
        _r("a", "2024-03-30T23:30", 5),
        _r("b", "2024-03-31T01:00", 6),
    ],
    [
        _r("a", "2024-03-31T10:00", 7),
        _r("a", "2024-03-31T21:30", 8),
        _r("b", "2024-03-31T22:30", 9),
    ],
    [_r("a", "2024-04-01T05:00", 10), _r("a", "2024-04-01T06:00", 11)],
    [_r("z", "2024-04-05T00:00", 0)],  # moves the watermark past every window above
]
ROWS = [row for batch in SCRIPT for row in batch]


def _berlinDay(ts: int) -> tuple[int, int]:
    day = datetime.fromtimestamp(ts / 1000, BERLIN).date()
    start = datetime(day.year, day.month, day.day, tzinfo=BERLIN)
    end = datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=BERLIN)
    return int(start.timestamp() * 1000), int(end.timestamp() * 1000)


def _panes(rows: list[dict[str, Any]], n: int, closedBy: int | None = None) -> list[tuple]:
    """What CountOrEndTrigger(n) over Berlin days gives for `rows` in processing order: an early
    pane at every n-th element of a window, and the on-time pane of each window whose end the
    watermark passed (all of them when `closedBy` is None), with count, sum and weighted mean.
    """
    windows: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    panes: list[tuple] = []

    def pane(key: tuple[str, int, int], timing: str, elements: list[dict[str, Any]]) -> None:
        index = sum(1 for p in panes if p[:3] == key)
        weights = sum(e["qty"] for e in elements)
        mean = sum(e["price"] * e["qty"] for e in elements) / weights
        total = sum(e["amount"] for e in elements)
        panes.append((*key, timing, index, len(elements), total, round(mean, 9)))

    for row in rows:
        key = (row["user"], *_berlinDay(row["ts"]))
        elements = windows.setdefault(key, [])
        elements.append(row)
        if len(elements) % n == 0:
            pane(key, "EARLY", list(elements))
    for key, elements in windows.items():
        if closedBy is None or key[2] - 1 <= closedBy:
            pane(key, "ON_TIME", elements)
    return sorted(panes)


def _projected(rows: list[dict[str, Any]]) -> list[tuple]:
    return sorted(
        (
            r["user"],
            _millis(r["window_start"]),
            _millis(r["window_end"]),
            r["pane_timing"],
            r["pane_index"],
            r["n"],
            r["total"],
            round(r["vwap"], 9),
        )
        for r in rows
    )


def _millis(value: Any) -> int:
    return value if isinstance(value, int) else int(value.timestamp() * 1000)


def daily(
    df: DataFrame, n: int = 2, purging: bool = False, arrival: str | None = None
) -> sw.Pipeline:
    trigger: sw.Trigger = sw.jvm.trigger(COUNT_OR_END, {"n": n})
    watermark = sw.WatermarkStrategy.forBoundedOutOfOrderness(HOUR)
    return (
        sw.stream(df, "ts", arrival=arrival, watermark=watermark)
        .keyBy("user")
        .window(sw.jvm.assigner(ZONED_DAYS, {"zone": "Europe/Berlin"}))
        .trigger(sw.PurgingTrigger.of(trigger) if purging else trigger)
        .aggregate(
            sw.agg.count().alias("n"),
            sw.agg.sum("amount").alias("total"),
            sw.jvm.aggregate(WEIGHTED_MEAN, ["price", "qty"]).alias("vwap"),
        )
    )


def largestTwo(df: DataFrame) -> sw.Pipeline:
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(HOUR))
        .keyBy("user")
        .window(sw.jvm.assigner(ZONED_DAYS, {"zone": "Europe/Berlin"}))
        .evictor(sw.jvm.evictor(KEEP_LARGEST, {"column": "amount", "k": 2}))
        .aggregate(sw.agg.count().alias("n"), sw.agg.sum("amount").alias("total"))
    )


@pytest.fixture(scope="module")
def rows(spark, extendingJar) -> DataFrame:
    return spark.createDataFrame(ROWS, SCHEMA)


# ---------------------------------------------------------------------------------------------
# Running


def test_stream_fires_early_every_n_and_on_time_per_berlin_day(
    spark, extendingJar, tmp_path
) -> None:
    result = runStream(spark, tmp_path, SCHEMA, daily, SCRIPT)
    last = max(r["ts"] for r in ROWS) - HOUR - 1  # the watermark the last batch reached
    assert _projected(result.outputs["main"]) == _panes(ROWS, 2, closedBy=last)
    # The day of the switch is 23 hours long.
    spring = _berlinDay(_ms("2024-03-31T10:00"))
    assert spring[1] - spring[0] == 23 * HOUR
    assert any(r["window_start"] == spring[0] for r in result.outputs["main"])
    # The engine ran them as the harness does, fed the same watermarks.
    expected = replayInHarness(daily(spark.createDataFrame([], SCHEMA)), result, SCRIPT)
    assert canonical(result.outputs["main"]) == canonical(expected["main"])


@pytest.mark.compat
def test_bounded_runs_in_event_time_order_then_closes_every_window(rows) -> None:
    got = [r.asDict() for r in daily(rows, n=3).toDF().collect()]
    inOrder = sorted(ROWS, key=lambda r: r["ts"])
    assert _projected(got) == _panes(inOrder, 3)


def test_harness_runs_the_users_classes(spark, extendingJar) -> None:
    h = WindowHarness(daily(spark.createDataFrame([], SCHEMA)))
    h.processElements(ROWS)
    h.endOfInput()
    assert _projected(h.extractOutput()) == _panes(ROWS, 2)


def test_replay_runs_the_users_classes_in_arrival_order(spark, extendingJar) -> None:
    arrived = [{**row, "arrival": i * 1000} for i, row in enumerate(ROWS)]
    df = spark.createDataFrame(arrived, SCHEMA + ", arrival long")
    replayed = daily(df, arrival="arrival").replay(endOfInput=True)
    try:
        assert _projected([r.asDict() for r in replayed.toDF().collect()]) == _panes(ROWS, 2)
    finally:
        replayed.unpersist()


def test_a_users_evictor_keeps_the_two_largest_before_the_aggregates(rows) -> None:
    got = sorted(
        (r["user"], _millis(r["window_start"]), r["n"], r["total"])
        for r in largestTwo(rows).toDF().collect()
    )
    days: dict[tuple[str, int], list[int]] = {}
    for row in ROWS:
        days.setdefault((row["user"], _berlinDay(row["ts"])[0]), []).append(row["amount"])
    expected = sorted(
        (user, start, min(2, len(a)), sum(sorted(a)[-2:])) for (user, start), a in days.items()
    )
    assert got == expected


def test_connect_client_runs_the_users_classes(connectSpark, extendingJar) -> None:
    got = [r.asDict() for r in daily(connectSpark.createDataFrame(ROWS, SCHEMA)).toDF().collect()]
    assert _projected(got) == _panes(sorted(ROWS, key=lambda r: r["ts"]), 2)
    with pytest.raises(PlanError, match=f"no class {PACKAGE}.Nowhere"):
        sw.stream(connectSpark.createDataFrame(ROWS, SCHEMA), "ts").keyBy("user").window(
            sw.jvm.assigner(f"{PACKAGE}.Nowhere")
        )
    with pytest.raises(ConnectUnsupportedError, match="server's class path"):
        sw.jvm.addJar(extendingJar, connectSpark)


def test_restart_with_the_trigger_elsewhere_in_the_tree_is_refused(
    spark, extendingJar, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "checkpoint"
    runStream(spark, tmp_path / "one", SCHEMA, daily, SCRIPT[:3], checkpoint=checkpoint)

    # The same class, now inside PurgingTrigger: its state's name moved with it.
    with pytest.raises(StreamingQueryException, match=f"trigger state '{COUNT_OR_END}.count'"):
        runStream(
            spark,
            tmp_path / "one",
            SCHEMA,
            lambda df: daily(df, purging=True),
            SCRIPT[3:4],
            checkpoint=checkpoint,
            startFile=3,
        )


def test_describe_names_the_users_classes(rows) -> None:
    described = daily(rows).describe()
    assert f'trigger {COUNT_OR_END}{{"n":2}}' in described["operator"]
    assert described["timeMode"] == "EventTime"
    assert (
        f"aggregate(agg.count().alias('n'), agg.sum('amount').alias('total'), "
        f"jvm.aggregate('{WEIGHTED_MEAN}', ['price', 'qty']).alias('vwap'))"
    ) in repr(daily(rows))


def test_the_guide_shows_the_example_as_it_is_built() -> None:
    guide = (EXAMPLES.parent / "docs" / "concepts" / "extending.md").read_text()
    for name in ("CountOrEndTrigger", "ZonedDayWindows"):
        source = EXAMPLES / "extending" / "src" / "com" / "example" / "sparkwin" / f"{name}.java"
        assert f"```java\n{source.read_text()}```" in guide, name


# ---------------------------------------------------------------------------------------------
# Checked when the pipeline is built


@pytest.fixture
def keyed(rows):
    return sw.stream(rows, "ts").keyBy("user")


def test_a_missing_class_is_refused_with_how_to_add_its_jar(keyed) -> None:
    with pytest.raises(PlanError, match=rf"no class {PACKAGE}\.Nope on the class path.*addJar"):
        keyed.window(sw.TumblingEventTimeWindows.of(HOUR)).trigger(
            sw.jvm.trigger(f"{PACKAGE}.Nope")
        )


def test_a_class_of_another_kind_is_refused_naming_the_interface(keyed) -> None:
    with pytest.raises(PlanError, match=f"{ZONED_DAYS} does not implement sparkwin.api.Trigger"):
        keyed.window(sw.TumblingEventTimeWindows.of(HOUR)).trigger(sw.jvm.trigger(ZONED_DAYS))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "param 'n' is required: pass it, e.g. {\"n\": 3}"),
        ({"n": 0}, "param 'n' must be positive, got 0"),
        ({"n": "two"}, "param 'n' must be a whole number, got \"two\""),
        ({"n": 2, "every": 3}, "unknown param 'every' (it reads n): remove it or correct its name"),
    ],
)
def test_bad_params_are_refused_naming_the_param(keyed, params, message) -> None:
    windowed = keyed.window(sw.TumblingEventTimeWindows.of(HOUR))
    with pytest.raises(PlanError) as raised:
        windowed.trigger(sw.jvm.trigger(COUNT_OR_END, params))
    assert f"trigger {COUNT_OR_END}: {message}" in str(raised.value)


def test_the_assigner_evictor_and_aggregate_say_what_is_wrong(keyed) -> None:
    with pytest.raises(PlanError, match="param 'zone' must be a time zone"):
        keyed.window(sw.jvm.assigner(ZONED_DAYS, {"zone": "Mars/Olympus"}))
    windowed = keyed.window(sw.jvm.assigner(ZONED_DAYS, {"zone": "UTC"}))
    assert windowed.assigner.isEventTime  # the class's own answer, from the JVM
    with pytest.raises(PlanError, match="param 'column': no column 'size'; the input has user"):
        windowed.evictor(sw.jvm.evictor(KEEP_LARGEST, {"column": "size", "k": 1}))
    with pytest.raises(PlanError, match="WeightedMean takes two columns, the value and the weight"):
        windowed.aggregate(sw.jvm.aggregate(WEIGHTED_MEAN, "price"))


def test_arguments_are_checked_in_python_first() -> None:
    with pytest.raises(TypeError, match="className must be the class's full name"):
        sw.jvm.trigger(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is not a Java class name"):
        sw.jvm.assigner("com.acme.My Windows")
    with pytest.raises(TypeError, match="params must be a dict"):
        sw.jvm.evictor(KEEP_LARGEST, [("k", 1)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"params\['k'\] must be a string, a number or a boolean"):
        sw.jvm.evictor(KEEP_LARGEST, {"k": None})
    with pytest.raises(TypeError, match="columns must be a column name or a list of them"):
        sw.jvm.aggregate(WEIGHTED_MEAN, [1, 2])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="no file"):
        sw.jvm.addJar("/nonexistent/extending.jar")
    assert (
        sw.jvm.aggregate(WEIGHTED_MEAN, ["price", "qty"]).defaultAlias == "weighted_mean_price_qty"
    )


def test_a_users_aggregate_takes_a_filter_as_every_aggregate(rows) -> None:
    # The weighted mean of the rows with qty above 1 only: SQL's FILTER (WHERE qty > 1).
    pipeline = (
        sw.stream(rows, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(HOUR))
        .keyBy("user")
        .window(sw.jvm.assigner(ZONED_DAYS, {"zone": "Europe/Berlin"}))
        .aggregate(
            sw.jvm.aggregate(WEIGHTED_MEAN, ["price", "qty"]).filter(F.col("qty") > 1).alias("vwap")
        )
    )
    got = sorted(
        (r["user"], _millis(r["window_start"]), None if r["vwap"] is None else round(r["vwap"], 9))
        for r in pipeline.toDF().collect()
    )
    days: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in ROWS:
        days.setdefault((row["user"], _berlinDay(row["ts"])[0]), []).append(row)
    expected = []
    for (user, start), day in sorted(days.items()):
        kept = [r for r in day if r["qty"] > 1]
        weight = sum(r["qty"] for r in kept)
        mean = sum(r["price"] * r["qty"] for r in kept) / weight if weight else None
        expected.append((user, start, None if mean is None else round(mean, 9)))
    assert got == sorted(expected)
