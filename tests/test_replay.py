"""Replay: a bounded DataFrame run as the live stream that delivered it would have run."""

from __future__ import annotations

import random

import pandas as pd
import pytest
from pyspark.sql import functions as F  # noqa: N812

import sparkwin as sw
from sparkwin.stream import DataStream
from sparkwin.testing import WindowHarness

SCHEMA = "user string, amount long, ts long, arrival long, part int, marker boolean"


def _rows(seed: int, channels: int) -> list[dict]:
    rnd = random.Random(seed)
    t, out = rnd.randint(0, 50), []
    for i in range(rnd.randint(40, 90)):
        t += rnd.randint(100, 600) if rnd.random() < 0.08 else rnd.randint(0, 15)
        part = rnd.randrange(channels)
        disorder = rnd.randint(150, 400) if rnd.random() < 0.1 else rnd.randint(0, 40)
        out.append(
            {
                "user": f"k{rnd.randrange(3)}",
                "amount": i,
                "ts": t - disorder - 9 * part,
                "arrival": t,
                "part": part,
                "marker": rnd.random() < 0.2,
            }
        )
    return out


STRATEGIES = {
    "bounded+idleness": sw.WatermarkStrategy.forBoundedOutOfOrderness(20)
    .withAutoWatermarkInterval(25)
    .withIdleness(120),
    "punctuated": sw.WatermarkStrategy.forPunctuated("marker", 5).withAutoWatermarkInterval(30),
}


def _pipelines(source: DataStream) -> dict[str, sw.Pipeline]:
    keyed = source.keyBy("user")
    return {
        "tumbling+lateness": keyed.window(sw.TumblingEventTimeWindows.of(100))
        .allowedLateness(60)
        .sideOutputLateData("late")
        .aggregate(sw.agg.sum("amount"), sw.agg.count()),
        "sessions+early": keyed.window(sw.EventTimeSessionWindows.withGap(50))
        .trigger(
            sw.AfterWatermark.pastEndOfWindow()
            .withEarlyFirings(sw.AfterPane.elementCountAtLeast(3))
            .withLateFirings(sw.AfterPane.elementCountAtLeast(1))
        )
        .allowedLateness(40)
        .sideOutputLateData("late")
        .aggregate(sw.agg.collectList("amount")),
    }


def _harness(pipeline: sw.Pipeline, rows: list[dict], channels: int) -> dict[str, list]:
    h = WindowHarness(pipeline, channels=channels, generateWatermarks=True)
    for r in sorted(rows, key=lambda r: (r["arrival"], r["part"])):
        h.setProcessingTime(r["arrival"])
        h.processElement(r, channel=r["part"])
    return {"main": h.extractOutput(), "late": h.extractSideOutput("late")}


def _frozen(rows: list[dict]) -> list:
    return sorted(
        tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in r.items()))
        for r in rows
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("strategy", list(STRATEGIES), ids=str)
def test_replay_equals_the_harness_fed_in_arrival_order(spark, seed: int, strategy: str) -> None:
    channels = 1 + seed % 3
    rows = _rows(seed, channels)
    df = spark.createDataFrame(rows, SCHEMA)
    source = sw.stream(df, "ts", arrival="arrival", channel="part", watermark=STRATEGIES[strategy])
    for name, pipeline in _pipelines(source).items():
        expected = _harness(pipeline, rows, channels)
        replayed = pipeline.replay()
        main = [
            r.asDict(recursive=True)
            for r in replayed.toDF()
            .drop("fired_at")
            .select(
                *[
                    F.unix_millis(c).alias(c) if c.startswith("window_") else F.col(c)
                    for c in replayed.toDF().drop("fired_at").columns
                ]
            )
            .collect()
        ]
        late = [r.asDict() for r in replayed.getSideOutput("late").collect()]
        replayed.unpersist()
        assert _frozen(main) == _frozen(expected["main"]), name
        assert _frozen(late) == _frozen(expected["late"]), name


def _two_channels(spark, idleness: int | None):
    # Channel 0 keeps sending; channel 1 sends once at arrival 5 and then goes quiet.
    rows = [{"user": "a", "amount": 1, "ts": 10, "arrival": 5, "part": 1, "marker": False}]
    rows += [
        {"user": "b", "amount": i, "ts": 100 * i, "arrival": 100 * i, "part": 0, "marker": False}
        for i in range(1, 11)
    ]
    strategy = sw.WatermarkStrategy.forBoundedOutOfOrderness(0).withAutoWatermarkInterval(50)
    if idleness:
        strategy = strategy.withIdleness(idleness)
    df = spark.createDataFrame(rows, SCHEMA)
    return (
        sw.stream(df, "ts", arrival="arrival", channel="part", watermark=strategy)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(300))
        .aggregate(sw.agg.count())
        .replay()
    )


def test_a_lagging_channel_holds_back_every_keys_windows(spark) -> None:
    replayed = _two_channels(spark, idleness=None)
    assert replayed.toDF().count() == 0  # channel 1 stays at watermark 9
    assert max(w for _, w in replayed.timeline()) == 9
    replayed.unpersist()


def test_an_idle_channel_stops_holding_the_watermark_back(spark) -> None:
    replayed = _two_channels(spark, idleness=200)
    fired = sorted(
        (r["user"], r["window_end"], r["count"], r["fired_at"])
        for r in replayed.toDF()
        .select("user", F.unix_millis("window_end").alias("window_end"), "count", "fired_at")
        .collect()
    )
    # Channel 1 is idle at the first tick 200 after its last element (5): tick 250. From then
    # channel 0 alone sets the watermark; windows fire at the first tick after it passes them.
    assert fired == [("a", 300, 1, 350), ("b", 300, 2, 350), ("b", 600, 3, 650), ("b", 900, 3, 950)]
    # Nothing before tick 150: until then channel 0 has no element (and is not idle yet).
    assert replayed.timeline()[0] == (150, 9)
    replayed.unpersist()


@pytest.mark.parametrize(
    ("channels", "fired"),
    [(None, [(2, 350), (3, 650), (3, 950)]), ([0, 7], [(2, 450), (3, 650), (3, 950)])],
    ids=["from first data", "declared"],
)
def test_a_declared_channel_without_rows_holds_back_until_it_is_idle(
    spark, channels, fired
) -> None:
    rows = [
        {"user": "b", "amount": i, "ts": 100 * i, "arrival": 100 * i, "part": 0, "marker": False}
        for i in range(1, 11)
    ]
    strategy = (
        sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
        .withAutoWatermarkInterval(50)
        .withIdleness(420)
    )
    replayed = (
        sw.stream(
            spark.createDataFrame(rows, SCHEMA),
            "ts",
            arrival="arrival",
            channel="part",
            channels=channels,
            watermark=strategy,
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(300))
        .aggregate(sw.agg.count())
        .replay()
    )
    # Channel 7 never delivers: from arrival 0 it holds the watermark until the first tick at
    # least 420 later (450), where the window [0, 300) fires instead of at 350.
    assert replayed.channels() == ["0"] + (["7"] if channels else [])
    assert sorted((r["count"], r["fired_at"]) for r in replayed.toDF().collect()) == fired
    replayed.unpersist()


def test_rows_without_arrival_or_timestamp_go_to_errors(spark) -> None:
    rows = [
        {"user": "a", "amount": 1, "ts": 10, "arrival": None, "part": 0, "marker": False},
        {"user": "a", "amount": 2, "ts": None, "arrival": 3, "part": 0, "marker": False},
        {"user": "a", "amount": 3, "ts": 20, "arrival": 4, "part": 0, "marker": False},
    ]
    df = spark.createDataFrame(rows, SCHEMA)
    replayed = (
        sw.stream(
            df, "ts", arrival="arrival", watermark=sw.WatermarkStrategy.forMonotonousTimestamps()
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(100))
        .aggregate(sw.agg.count())
        .replay(endOfInput=True)
    )
    errors = sorted((r["amount"], r["error"]) for r in replayed.getSideOutput("errors").collect())
    assert errors == [(1, "the arrival is null"), (2, "the timestamp is null")]
    assert [r["count"] for r in replayed.toDF().collect()] == [1]
    replayed.unpersist()


def test_replay_refuses_streams_and_missing_arrival(spark) -> None:
    df = spark.createDataFrame([], SCHEMA)
    pipeline = (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forMonotonousTimestamps())
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(100))
        .aggregate(sw.agg.count())
    )
    with pytest.raises(ValueError, match="arrival"):
        pipeline.replay()


def test_replay_calls_a_process_function_once_per_pane(spark) -> None:
    def perPane(key, window, pdf: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {"user": [key[0]], "n": [len(pdf)], "total": [int(pdf["amount"].sum())]}
        )

    rows = [
        {"user": u, "amount": a, "ts": ts, "arrival": i, "part": 0, "marker": False}
        for i, (u, a, ts) in enumerate([("a", 1, 10), ("b", 2, 20), ("a", 3, 150), ("a", 4, 260)])
    ]
    replayed = (
        sw.stream(
            spark.createDataFrame(rows, SCHEMA),
            "ts",
            arrival="arrival",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(1000),
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(100))
        .process(perPane, "user string, n long, total long")
        .replay(endOfInput=True)
    )
    # Every window fires at the end of input, at the same arrival: still one call per pane.
    got = sorted(tuple(r) for r in replayed.toDF().collect())
    assert got == [("a", 1, 1), ("a", 1, 3), ("a", 1, 4), ("b", 1, 2)]
    replayed.unpersist()
