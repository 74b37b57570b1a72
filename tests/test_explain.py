"""``Pipeline.describe()``/``explain()`` say what will run: the runtime, where watermarks come
from, the engine's operator and state layout, Spark's time mode and the outputs' schemas."""

from __future__ import annotations

import pytest

import sparkwin as sw

SCHEMA = "user string, amount long, ts long, part int"


def _bounded(d: int = 1_000) -> sw.WatermarkStrategy:
    return sw.WatermarkStrategy.forBoundedOutOfOrderness(d)


def test_a_live_stream_with_channels_says_where_its_watermarks_come_from(spark, tmp_path):
    stream = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    pipeline = (
        sw.stream(stream, "ts", channel="part", watermark=_bounded().withIdleness(60_000))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(60_000))
        .sideOutputLateData("late")
        .aggregate(sw.agg.sum("amount"))
    )
    d = pipeline.describe()
    assert d["runtime"].startswith("streaming: transformWithState")
    assert "checkpointLocation" in d["runtime"]  # where the other operator comes from
    # A new micro-batch checkpoint runs on one value per key group (DESIGN.md, "Which operator
    # hosts the key groups").
    fresh = pipeline.describe(checkpointLocation=str(tmp_path / "new-checkpoint"))
    assert fresh["runtime"].startswith("streaming: flatMapGroupsWithState")
    assert fresh["timers"] == "GroupStateTimeout.NoTimeout"  # channels: the clock, no Spark timer
    assert d["watermarks"] == (
        "bounded out-of-orderness 1000 ms, idle after 60000 ms per channel of 'part', a valve "
        "over the channels (at micro-batch boundaries, kept in the checkpoint)"
    )
    assert d["operator"].startswith("sliced/keyed")
    # Channels go idle as processing time passes: sparkwin's clock wakes the key groups, and
    # Spark's timers are not used (event time is the groups' own).
    assert d["timeMode"] == "None" and d["timerDomains"] == "EventOnly" and d["clock"]
    windows = sw.stream(stream, "ts", watermark=_bounded()).keyBy("user")
    ticking = windows.window(sw.TumblingProcessingTimeWindows.of(1_000)).aggregate(sw.agg.count())
    assert ticking.describe()["timeMode"] == "None" and ticking.describe()["clock"]
    counting = windows.window(sw.TumblingEventTimeWindows.of(1_000)).aggregate(sw.agg.count())
    assert counting.describe()["timeMode"] == "EventTime" and not counting.describe()["clock"]
    assert set(d["outputs"]) == {"main", "late", "errors"}
    assert d["outputs"]["late"] == stream.schema.simpleString()
    assert "sum_amount:bigint" in d["outputs"]["main"]
    declared = sw.stream(stream, "ts", channel="part", channels=[0, 1], watermark=_bounded())
    counted = declared.keyBy("user").window(sw.TumblingEventTimeWindows.of(60_000))
    assert (
        counted.aggregate(sw.agg.count())
        .describe()["watermarks"]
        .endswith(
            "(at micro-batch boundaries, kept in the checkpoint; channels 0, 1 hold it back from "
            "the first data)"
        )
    )


def test_the_operator_follows_the_assigner_and_the_trigger(spark):
    df = spark.createDataFrame([], SCHEMA)
    keyed = sw.stream(df, "ts", watermark=_bounded()).keyBy("user")
    sessions = keyed.window(sw.EventTimeSessionWindows.withGap(5_000)).aggregate(sw.agg.count())
    counted = (
        keyed.window(sw.TumblingEventTimeWindows.of(10_000))
        .trigger(sw.CountTrigger.of(3))
        .evictor(sw.CountEvictor.of(2))
        .aggregate(sw.agg.count())
    )
    assert sessions.describe()["operator"].startswith("session/keyed")
    assert counted.describe()["operator"].startswith("general/keyed")
    assert sessions.describe()["runtime"].startswith("bounded:")
    assert sessions.describe()["watermarks"].endswith("a bounded input ends at +infinity")
    ticking = (
        sw.stream(df, "ts", watermark=_bounded())
        .keyBy("user")
        .window(sw.TumblingProcessingTimeWindows.of(1_000))
        .aggregate(sw.agg.count())
    )
    assert ticking.describe()["timerDomains"] == "ProcessingOnly"
    # A bounded input's processing time stands still: no clock.
    assert not ticking.describe()["clock"]


def test_explain_prints_every_part(spark, capsys):
    df = spark.createDataFrame([], SCHEMA)
    pipeline = (
        sw.stream(df, "ts", watermark=_bounded())
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(60_000))
        .aggregate(sw.agg.count())
    )
    pipeline.explain()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == repr(pipeline)
    assert [line.split(":")[0].strip() for line in lines[1:7]] == [
        "runtime",
        "mode",
        "watermarks",
        "operator",
        "timers",
        "outputs",
    ]
    assert lines[2].split(":", 1)[1].strip() == "batch (a bounded input)"
    assert lines[7].split()[0] == "main" and lines[8].split()[0] == "errors"


def test_spark_sparkwin_operator_picks_the_operator_of_a_checkpoint_without_state(spark, tmp_path):
    stream = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    pipeline = (
        sw.stream(stream, "ts", watermark=_bounded())
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(60_000))
        .aggregate(sw.agg.sum("amount"))
    )
    try:
        spark.conf.set("spark.sparkwin.operator", "flatMapGroupsWithState")
        runtime = pipeline.describe()["runtime"]  # toDF() alone: no checkpoint in sight
        assert runtime.startswith("streaming: flatMapGroupsWithState over key groups (spark.")
        spark.conf.set("spark.sparkwin.operator", "mapGroups")
        with pytest.raises(sw.errors.PlanError, match=r"spark.sparkwin.operator must name one of"):
            pipeline.describe(checkpointLocation=str(tmp_path / "chk"))
    finally:
        spark.conf.unset("spark.sparkwin.operator")
