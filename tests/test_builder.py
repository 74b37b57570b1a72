"""The pipeline builder: the plan JSON it produces and every check it makes against the input
DataFrame, before anything reaches the JVM.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import planOf
from pyspark.sql.types import LongType, StringType, StructField, StructType

import sparkwin as sw
from sparkwin import (
    AfterPane,
    AfterWatermark,
    Count,
    CountEvictor,
    CountTrigger,
    DeltaEvictor,
    DeltaTrigger,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindows,
    Pipeline,
    ProcessingTimeoutTrigger,
    ProcessingTimeSessionWindows,
    PurgingTrigger,
    Repeatedly,
    SlidingEventTimeWindows,
    StormWindows,
    TimeEvictor,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WatermarkStrategy,
)
from sparkwin.stream import DataStream, KeyedStream, WindowedStream

BOUNDED_5S = WatermarkStrategy.forBoundedOutOfOrderness(timedelta(seconds=5))


@pytest.fixture
def keyed(events):
    return sw.stream(events, "ts", watermark=BOUNDED_5S).keyBy("user")


@pytest.fixture
def windowed(keyed):
    return keyed.window(TumblingEventTimeWindows.of(timedelta(minutes=1)))


@pytest.fixture
def sessions(keyed):
    return keyed.window(EventTimeSessionWindows.withGap(timedelta(seconds=30)))


# ---------------------------------------------------------------------------------------------
# Plans


def test_full_plan_of_keyed_tumbling_aggregate_pipeline(events):
    pipeline = (
        sw.stream(events, "ts", watermark=BOUNDED_5S.withIdleness(60_000))
        .keyBy("user", "device")
        .window(TumblingEventTimeWindows.of(timedelta(minutes=1)))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )
    assert planOf(pipeline) == {
        "planVersion": 1,
        "inputSchema": events.schema.jsonValue(),
        "timestamp": "ts",
        "keys": ["user", "device"],
        "watermark": {
            "kind": "boundedOutOfOrderness",
            "boundMs": 5000,
            "idleTimeoutMs": 60000,
            "intervalMs": 200,
        },
        "arrival": None,
        "channel": None,
        "channels": None,
        "assigner": {"kind": "tumbling", "sizeMs": 60000, "offsetMs": 0, "eventTime": True},
        "trigger": None,
        "evictor": None,
        "allowedLatenessMs": 0,
        "lateOutputTag": None,
        "accumulationMode": "accumulating",
        "ansi": True,
        "function": {
            "kind": "aggregate",
            "aggregates": [
                {"fn": "count", "column": None, "alias": "count"},
                {"fn": "sum", "column": "amount", "alias": "sum_amount"},
            ],
        },
    }


def test_full_plan_of_refined_window_all_pipeline(events):
    pipeline = (
        sw.stream(events, "ts_ms", arrival="seq", channel="ch", channels=range(2))
        .windowAll(SlidingEventTimeWindows.of(600_000, 60_000))
        .trigger(AfterWatermark.pastEndOfWindow().withLateFirings(AfterPane.elementCountAtLeast(1)))
        .evictor(TimeEvictor.of(timedelta(seconds=1)))
        .allowedLateness(timedelta(minutes=2))
        .sideOutputLateData("late")
        .accumulationMode("discarding")
        .aggregate(sw.agg.max("price").alias("top"))
    )
    assert planOf(pipeline) == {
        "planVersion": 1,
        "inputSchema": events.schema.jsonValue(),
        "timestamp": "ts_ms",
        "keys": [],
        "watermark": None,
        "arrival": "seq",
        "channel": "ch",
        "channels": ["0", "1"],
        "assigner": {
            "kind": "sliding",
            "sizeMs": 600000,
            "slideMs": 60000,
            "offsetMs": 0,
            "eventTime": True,
        },
        "trigger": {
            "kind": "afterWatermark",
            "early": None,
            "late": {"kind": "afterPane", "count": 1},
        },
        "evictor": {"kind": "time", "windowSizeMs": 1000, "doEvictAfter": False},
        "allowedLatenessMs": 120000,
        "lateOutputTag": "late",
        "accumulationMode": "discarding",
        "ansi": True,
        "function": {
            "kind": "aggregate",
            "aggregates": [{"fn": "max", "column": "price", "alias": "top"}],
        },
    }


def test_plan_json_is_the_plan_dict(windowed):
    pipeline = windowed.aggregate(sw.agg.count())
    assert planOf(pipeline) == pipeline.plan
    assert isinstance(pipeline.planJson(), str)


@pytest.mark.parametrize(
    ("assigner", "expected"),
    [
        (
            TumblingEventTimeWindows.of(60_000, offset=-1_000),
            {"kind": "tumbling", "sizeMs": 60000, "offsetMs": -1000, "eventTime": True},
        ),
        (
            TumblingProcessingTimeWindows.of(timedelta(seconds=1)),
            {"kind": "tumbling", "sizeMs": 1000, "offsetMs": 0, "eventTime": False},
        ),
        (
            SlidingEventTimeWindows.of(600_000, 60_000, offset=5),
            {
                "kind": "sliding",
                "sizeMs": 600000,
                "slideMs": 60000,
                "offsetMs": 5,
                "eventTime": True,
            },
        ),
        (
            sw.SlidingProcessingTimeWindows.of(10, 3),
            {"kind": "sliding", "sizeMs": 10, "slideMs": 3, "offsetMs": 0, "eventTime": False},
        ),
        (
            EventTimeSessionWindows.withGap(30_000),
            {"kind": "session", "gapMs": 30000, "gapColumn": None, "eventTime": True},
        ),
        (
            EventTimeSessionWindows.withDynamicGap("gap_ms"),
            {"kind": "session", "gapMs": None, "gapColumn": "gap_ms", "eventTime": True},
        ),
        (
            ProcessingTimeSessionWindows.withGap(timedelta(minutes=1)),
            {"kind": "session", "gapMs": 60000, "gapColumn": None, "eventTime": False},
        ),
        (
            ProcessingTimeSessionWindows.withDynamicGap("gap_i"),
            {"kind": "session", "gapMs": None, "gapColumn": "gap_i", "eventTime": False},
        ),
        (GlobalWindows.create(), {"kind": "global"}),
        (
            StormWindows.of(Count(3), timedelta(seconds=10)),
            {
                "kind": "storm",
                "length": {"count": 3},
                "slide": {"durationMs": 10000},
                "lagMs": 0,
                "eventTime": True,
            },
        ),
        (
            StormWindows.of(timedelta(minutes=1)).withLag(5_000),
            {
                "kind": "storm",
                "length": {"durationMs": 60000},
                "slide": None,
                "lagMs": 5000,
                "eventTime": True,
            },
        ),
        (
            StormWindows.of(Count(10), Count(2)),
            {
                "kind": "storm",
                "length": {"count": 10},
                "slide": {"count": 2},
                "lagMs": 0,
                "eventTime": True,
            },
        ),
    ],
    ids=repr,
)
def test_each_assigner_lands_in_the_plan(keyed, assigner, expected):
    assert planOf(keyed.window(assigner).aggregate(sw.agg.count()))["assigner"] == expected


def test_count_window_expands_to_global_with_purging_count_trigger(keyed):
    plan = planOf(keyed.countWindow(100).aggregate(sw.agg.count()))
    assert plan["assigner"] == {"kind": "global"}
    assert plan["trigger"] == {"kind": "purging", "nested": {"kind": "count", "count": 100}}
    assert plan["evictor"] is None


def test_sliding_count_window_expands_to_count_trigger_and_count_evictor(keyed):
    plan = planOf(keyed.countWindow(100, 10).aggregate(sw.agg.count()))
    assert plan["assigner"] == {"kind": "global"}
    assert plan["trigger"] == {"kind": "count", "count": 10}
    assert plan["evictor"] == {"kind": "count", "maxCount": 100, "doEvictAfter": False}


def test_count_window_all_expands_like_count_window(events):
    plan = planOf(sw.stream(events, "ts").countWindowAll(5, 2).aggregate(sw.agg.count()))
    assert plan["keys"] == []
    assert plan["trigger"] == {"kind": "count", "count": 2}
    assert plan["evictor"] == {"kind": "count", "maxCount": 5, "doEvictAfter": False}


@pytest.mark.parametrize(("size", "slide"), [(0, None), (-1, None), (3, 0), (3, -2)])
def test_count_window_rejects_non_positive_counts(keyed, size, slide):
    with pytest.raises(ValueError, match="size|slide"):
        keyed.countWindow(size, slide)


def test_count_window_rejects_float_size(keyed):
    with pytest.raises(TypeError, match="size must be an int"):
        keyed.countWindow(2.5)


def test_storm_without_watermark_plans_storm_lag_of_the_assigner(events):
    pipeline = (
        sw.stream(events, "ts")
        .keyBy("user")
        .window(StormWindows.of(Count(3)).withLag(timedelta(seconds=2)))
        .aggregate(sw.agg.count())
    )
    assert planOf(pipeline)["watermark"] == {
        "kind": "stormLag",
        "lagMs": 2000,
        "idleTimeoutMs": None,
        "intervalMs": 1000,
    }


def test_storm_with_a_watermark_strategy_keeps_it(events):
    strategy = WatermarkStrategy.forStormLag(7_000).withIdleness(1_000)
    pipeline = (
        sw.stream(events, "ts", watermark=strategy)
        .keyBy("user")
        .window(StormWindows.of(Count(3)))
        .aggregate(sw.agg.count())
    )
    assert planOf(pipeline)["watermark"] == {
        "kind": "stormLag",
        "lagMs": 7000,
        "idleTimeoutMs": 1000,
        "intervalMs": 1000,
    }


def test_no_watermarks_strategy_plans_null(events):
    pipeline = (
        sw.stream(events, "ts", watermark=WatermarkStrategy.noWatermarks())
        .keyBy("user")
        .window(TumblingProcessingTimeWindows.of(1_000))
        .aggregate(sw.agg.count())
    )
    assert planOf(pipeline)["watermark"] is None


def test_punctuated_watermark_lands_in_the_plan(events):
    pipeline = (
        sw.stream(events, "ts", watermark=WatermarkStrategy.forPunctuated("is_marker"))
        .keyBy("user")
        .window(TumblingEventTimeWindows.of(1_000))
        .aggregate(sw.agg.count())
    )
    assert planOf(pipeline)["watermark"] == {
        "kind": "punctuated",
        "markerColumn": "is_marker",
        "boundMs": 0,
        "idleTimeoutMs": None,
        "intervalMs": 200,
    }


def test_batch_event_time_window_without_watermark_plans_null(events):
    pipeline = sw.stream(events, "ts").keyBy("user").window(TumblingEventTimeWindows.of(1_000))
    assert planOf(pipeline.aggregate(sw.agg.count()))["watermark"] is None


def test_trigger_and_evictor_land_in_the_plan(windowed):
    plan = planOf(
        windowed.trigger(ProcessingTimeoutTrigger.of(CountTrigger.of(3), 1_000))
        .evictor(DeltaEvictor.of(5, "price", doEvictAfter=True))
        .aggregate(sw.agg.count())
    )
    assert plan["trigger"] == {
        "kind": "processingTimeout",
        "nested": {"kind": "count", "count": 3},
        "timeoutMs": 1000,
        "resetTimerOnNewRecord": False,
        "shouldClearOnTimeout": True,
    }
    assert plan["evictor"] == {
        "kind": "delta",
        "threshold": 5.0,
        "columns": ["price"],
        "doEvictAfter": True,
    }


def test_later_trigger_replaces_earlier_one(windowed):
    plan = planOf(
        windowed.trigger(CountTrigger.of(3))
        .trigger(EventTimeTrigger.create())
        .aggregate(sw.agg.count())
    )
    assert plan["trigger"] == {"kind": "eventTime"}


def test_long_timestamp_column_is_accepted(events):
    plan = planOf(sw.stream(events, "ts_ms").countWindowAll(2).aggregate(sw.agg.count()))
    assert plan["timestamp"] == "ts_ms"


@pytest.mark.parametrize(
    ("aggregate", "expected"),
    [
        (sw.agg.count(), {"fn": "count", "column": None, "alias": "count"}),
        (sw.agg.count("user"), {"fn": "count", "column": "user", "alias": "count_user"}),
        (sw.agg.sum("amount"), {"fn": "sum", "column": "amount", "alias": "sum_amount"}),
        (sw.agg.sum("dec"), {"fn": "sum", "column": "dec", "alias": "sum_dec"}),
        (sw.agg.avg("price"), {"fn": "avg", "column": "price", "alias": "avg_price"}),
        (sw.agg.min("user"), {"fn": "min", "column": "user", "alias": "min_user"}),
        (sw.agg.max("ts"), {"fn": "max", "column": "ts", "alias": "max_ts"}),
        (sw.agg.min("day"), {"fn": "min", "column": "day", "alias": "min_day"}),
        (sw.agg.max("is_marker"), {"fn": "max", "column": "is_marker", "alias": "max_is_marker"}),
        (sw.agg.first("tags"), {"fn": "first", "column": "tags", "alias": "first_tags"}),
        (sw.agg.last("arr"), {"fn": "last", "column": "arr", "alias": "last_arr"}),
        (
            sw.agg.collectList("user"),
            {"fn": "collectList", "column": "user", "alias": "collect_list_user"},
        ),
        (
            sw.agg.collectSet("qty"),
            {"fn": "collectSet", "column": "qty", "alias": "collect_set_qty"},
        ),
        (sw.agg.avg("qty").alias("mean"), {"fn": "avg", "column": "qty", "alias": "mean"}),
    ],
    ids=repr,
)
def test_each_aggregate_lands_in_the_plan(windowed, aggregate, expected):
    assert planOf(windowed.aggregate(aggregate))["function"] == {
        "kind": "aggregate",
        "aggregates": [expected],
    }


def test_aggregates_keep_their_order(windowed):
    plan = planOf(windowed.aggregate(sw.agg.max("price"), sw.agg.count(), sw.agg.min("price")))
    aliases = [a["alias"] for a in plan["function"]["aggregates"]]
    assert aliases == ["max_price", "count", "min_price"]


def test_aggregate_accepts_a_list(windowed):
    plan = planOf(windowed.aggregate([sw.agg.count(), sw.agg.sum("amount")]))
    assert len(plan["function"]["aggregates"]) == 2


def _summarise(key, window, pdf):
    return pdf


def test_process_with_ddl_schema_plans_the_parsed_schema(windowed):
    pipeline = windowed.process(_summarise, "user string, n long")
    expected = StructType([StructField("user", StringType()), StructField("n", LongType())])
    assert pipeline.outputSchema == expected
    assert pipeline.processFunction is _summarise
    assert planOf(pipeline)["function"] == {
        "kind": "process",
        "outputSchema": expected.jsonValue(),
    }


def test_process_with_struct_schema_keeps_it(windowed):
    schema = StructType([StructField("n", LongType())])
    pipeline = windowed.process(lambda key, window, pdf: pdf, schema)
    assert pipeline.outputSchema == schema
    assert planOf(pipeline)["function"]["outputSchema"] == schema.jsonValue()


def test_process_accepts_functions_with_varargs_or_defaults(windowed):
    windowed.process(lambda *args: None, "n long")
    windowed.process(lambda key, window, pdf, extra=1: None, "n long")


def test_aggregate_pipeline_holds_df_and_no_process_function(events, windowed):
    pipeline = windowed.aggregate(sw.agg.count())
    assert isinstance(pipeline, Pipeline)
    assert pipeline.df is events
    assert pipeline.processFunction is None
    assert pipeline.outputSchema is None


# ---------------------------------------------------------------------------------------------
# Builders are immutable; reprs read like the code


def test_builder_methods_return_new_objects_and_leave_the_original_unchanged(windowed):
    before = planOf(windowed.aggregate(sw.agg.count()))
    refined = [
        windowed.trigger(CountTrigger.of(3)),
        windowed.evictor(CountEvictor.of(3)),
        windowed.allowedLateness(1_000),
        windowed.sideOutputLateData("late"),
        windowed.accumulationMode("discarding"),
    ]
    for other in refined:
        assert isinstance(other, WindowedStream)
        assert other is not windowed
        assert planOf(other.aggregate(sw.agg.count())) != before
    assert planOf(windowed.aggregate(sw.agg.count())) == before


def test_one_base_stream_feeds_several_independent_pipelines(events):
    base = sw.stream(events, "ts")
    keyed = base.keyBy("user")
    a = keyed.window(TumblingEventTimeWindows.of(1_000)).aggregate(sw.agg.count())
    b = base.windowAll(GlobalWindows.create()).aggregate(sw.agg.count())
    assert planOf(a)["keys"] == ["user"]
    assert planOf(b)["keys"] == []
    assert keyed.keys == ("user",)


def test_builders_cannot_be_mutated(events, windowed):
    data = sw.stream(events, "ts")
    with pytest.raises(AttributeError):
        data.df = None  # read-only property
    with pytest.raises(AttributeError):
        windowed.extra = 1  # __slots__: no new attributes


def test_builder_types_along_the_chain(events):
    data = sw.stream(events, "ts")
    assert isinstance(data, DataStream)
    assert isinstance(data.keyBy("user"), KeyedStream)
    assert isinstance(data.windowAll(GlobalWindows.create()), WindowedStream)
    assert data.timestamp == "ts"
    assert data.watermark is None


def test_windowed_stream_repr_reads_like_builder_code(events):
    windowed = (
        sw.stream(events, "ts", watermark=WatermarkStrategy.forMonotonousTimestamps())
        .keyBy("user")
        .window(TumblingEventTimeWindows.of(60_000))
        .trigger(PurgingTrigger.of(CountTrigger.of(100)))
        .allowedLateness(1_000)
        .sideOutputLateData("late")
        .accumulationMode("discarding")
    )
    assert repr(windowed) == (
        f"stream({events!r}, 'ts', watermark=WatermarkStrategy.forMonotonousTimestamps())"
        ".keyBy('user').window(TumblingEventTimeWindows.of(60000))"
        ".trigger(PurgingTrigger.of(CountTrigger.of(100))).allowedLateness(1000)"
        ".sideOutputLateData('late').accumulationMode('discarding')"
    )


def test_keyed_and_data_stream_reprs(events):
    data = sw.stream(events, "ts", arrival="seq")
    assert repr(data) == f"stream({events!r}, 'ts', arrival='seq')"
    assert repr(data.keyBy("user", "device")) == f"stream({events!r}, 'ts', arrival='seq')" + (
        ".keyBy('user', 'device')"
    )


def test_pipeline_repr_shows_the_whole_builder_chain(events):
    pipeline = (
        sw.stream(events, "ts").windowAll(GlobalWindows.create()).aggregate(sw.agg.sum("amount"))
    )
    assert repr(pipeline) == (
        f"Pipeline(stream({events!r}, 'ts').windowAll(GlobalWindows.create())"
        ".aggregate(agg.sum('amount')))"
    )


def test_process_pipeline_repr_names_function_and_schema(windowed):
    assert repr(windowed.process(_summarise, "n long")).endswith(
        ".process(_summarise, 'struct<n:bigint>'))"
    )


# ---------------------------------------------------------------------------------------------
# stream(...)


def test_stream_rejects_a_non_dataframe():
    with pytest.raises(TypeError, match="df must be a pyspark.sql.DataFrame, got list"):
        sw.stream([1, 2], "ts")


def test_stream_rejects_a_missing_timestamp_column(events):
    with pytest.raises(ValueError, match=r"timestamp: 'time' is not a column.*available.*ts_ms"):
        sw.stream(events, "time")


def test_stream_suggests_the_column_that_differs_only_in_case(events):
    with pytest.raises(ValueError, match=r"timestamp: 'TS' .*did you mean 'ts'"):
        sw.stream(events, "TS")


@pytest.mark.parametrize("column", ["user", "qty", "day", "price"])
def test_stream_rejects_a_timestamp_column_of_another_type(events, column):
    with pytest.raises(TypeError, match=r"timestamp: .*TimestampType.*LongType"):
        sw.stream(events, column)


def test_stream_rejects_a_non_string_timestamp(events):
    with pytest.raises(TypeError, match="timestamp must be a column name"):
        sw.stream(events, 3)


def test_stream_rejects_a_watermark_that_is_not_a_strategy(events):
    with pytest.raises(TypeError, match="watermark must be a WatermarkStrategy"):
        sw.stream(events, "ts", watermark=5_000)


def test_punctuated_marker_column_must_exist(events):
    strategy = WatermarkStrategy.forPunctuated("marker")
    with pytest.raises(ValueError, match=r"markerColumn.*'marker' is not a column"):
        sw.stream(events, "ts", watermark=strategy)


def test_punctuated_marker_column_must_be_boolean(events):
    strategy = WatermarkStrategy.forPunctuated("user")
    with pytest.raises(TypeError, match=r"markerColumn.*'user' is string.*boolean"):
        sw.stream(events, "ts", watermark=strategy)


@pytest.mark.parametrize("parameter", ["arrival", "channel"])
def test_stream_rejects_an_unknown_replay_column(events, parameter):
    with pytest.raises(ValueError, match=rf"{parameter}: 'nope' is not a column.*available"):
        sw.stream(events, "ts", **{parameter: "nope"})


@pytest.mark.parametrize("parameter", ["arrival", "channel"])
def test_stream_rejects_a_non_string_replay_column(events, parameter):
    with pytest.raises(TypeError, match=f"{parameter} must be a column name"):
        sw.stream(events, "ts", **{parameter: 1})


def test_stream_rejects_arrival_on_a_streaming_dataframe(streamingEvents):
    with pytest.raises(ValueError, match="arrival is for replaying a bounded DataFrame"):
        sw.stream(streamingEvents, "timestamp", arrival="value")


# ---------------------------------------------------------------------------------------------
# keyBy(...)


def test_key_by_accepts_a_list(events):
    assert sw.stream(events, "ts").keyBy(["user", "device"]).keys == ("user", "device")


def test_key_by_rejects_no_columns(events):
    with pytest.raises(ValueError, match=r"keyBy\(columns\) needs at least one column.*windowAll"):
        sw.stream(events, "ts").keyBy()


def test_key_by_rejects_duplicate_columns(events):
    with pytest.raises(ValueError, match=r"keyBy\(columns\) names 'user' twice"):
        sw.stream(events, "ts").keyBy("user", "device", "user")


def test_key_by_rejects_an_unknown_column(events):
    with pytest.raises(ValueError, match=r"keyBy\(columns\): 'usr' is not a column.*available"):
        sw.stream(events, "ts").keyBy("usr")


def test_key_by_rejects_a_non_string_column(events):
    with pytest.raises(TypeError, match=r"keyBy\(columns\)\[1\] must be a column name"):
        sw.stream(events, "ts").keyBy("user", 2)


def test_key_by_rejects_a_key_named_like_an_output_column(events):
    with pytest.raises(ValueError, match=r"keyBy\(columns\): key column 'pane_index' collides"):
        sw.stream(events, "ts").keyBy("pane_index")


def test_key_by_rejects_a_map_column(events):
    with pytest.raises(TypeError, match=r"keyBy\(columns\): column 'tags' is map"):
        sw.stream(events, "ts").keyBy("tags")


# ---------------------------------------------------------------------------------------------
# window(...)


@pytest.mark.parametrize("bad", [60_000, "tumbling", CountTrigger.of(3)], ids=repr)
def test_window_rejects_what_is_not_an_assigner(keyed, bad):
    with pytest.raises(TypeError, match="assigner must be a sparkwin window assigner"):
        keyed.window(bad)


def test_window_all_rejects_what_is_not_an_assigner(events):
    with pytest.raises(TypeError, match="assigner must be a sparkwin window assigner"):
        sw.stream(events, "ts").windowAll(None)


def test_dynamic_gap_column_must_exist(keyed):
    with pytest.raises(
        ValueError, match=r"EventTimeSessionWindows.withDynamicGap\(column\): 'gap' is not"
    ):
        keyed.window(EventTimeSessionWindows.withDynamicGap("gap"))


@pytest.mark.parametrize("column", ["gap_d", "user", "ts"])
def test_dynamic_gap_column_must_be_integral(keyed, column):
    with pytest.raises(TypeError, match=r"withDynamicGap\(column\): column .* integral"):
        keyed.window(ProcessingTimeSessionWindows.withDynamicGap(column))


@pytest.mark.parametrize(
    "assigner",
    [
        TumblingEventTimeWindows.of(1_000),
        SlidingEventTimeWindows.of(1_000, 500),
        EventTimeSessionWindows.withGap(1_000),
        StormWindows.of(Count(3)),
    ],
    ids=repr,
)
def test_event_time_window_on_a_streaming_dataframe_needs_a_watermark(streamingEvents, assigner):
    keyed = sw.stream(streamingEvents, "timestamp").keyBy("value")
    with pytest.raises(ValueError, match=r"watermark: .*event-time.*watermark=WatermarkStrategy"):
        keyed.window(assigner)


def test_event_time_window_all_on_a_streaming_dataframe_needs_a_watermark(streamingEvents):
    data = sw.stream(streamingEvents, "timestamp")
    with pytest.raises(ValueError, match="watermark"):
        data.windowAll(TumblingEventTimeWindows.of(1_000))


def test_streaming_event_time_window_rejects_no_watermarks_strategy(streamingEvents):
    data = sw.stream(streamingEvents, "timestamp", watermark=WatermarkStrategy.noWatermarks())
    with pytest.raises(ValueError, match="needs a watermark strategy"):
        data.keyBy("value").window(TumblingEventTimeWindows.of(1_000))


def test_streaming_event_time_window_with_watermark_is_accepted(streamingEvents):
    data = sw.stream(streamingEvents, "timestamp", watermark=BOUNDED_5S)
    plan = planOf(
        data.keyBy("value").window(TumblingEventTimeWindows.of(1_000)).aggregate(sw.agg.count())
    )
    assert plan["watermark"]["kind"] == "boundedOutOfOrderness"


@pytest.mark.parametrize(
    "assigner",
    [
        TumblingProcessingTimeWindows.of(1_000),
        ProcessingTimeSessionWindows.withGap(1_000),
        GlobalWindows.create(),
    ],
    ids=repr,
)
def test_processing_time_window_on_a_streaming_dataframe_needs_no_watermark(
    streamingEvents, assigner
):
    data = sw.stream(streamingEvents, "timestamp")
    assert (
        planOf(data.keyBy("value").window(assigner).aggregate(sw.agg.count()))["watermark"] is None
    )


def test_storm_window_rejects_an_explicit_no_watermarks_strategy(events):
    data = sw.stream(events, "ts", watermark=WatermarkStrategy.noWatermarks())
    with pytest.raises(ValueError, match=r"watermark: .*noWatermarks.*forStormLag"):
        data.keyBy("user").window(StormWindows.of(Count(3)))


# ---------------------------------------------------------------------------------------------
# trigger(...), evictor(...)


@pytest.mark.parametrize("bad", [3, "count", CountEvictor.of(3)], ids=repr)
def test_trigger_rejects_what_is_not_a_trigger(windowed, bad):
    with pytest.raises(TypeError, match="trigger must be a sparkwin trigger"):
        windowed.trigger(bad)


@pytest.mark.parametrize("bad", [3, CountTrigger.of(3)], ids=repr)
def test_evictor_rejects_what_is_not_an_evictor(windowed, bad):
    with pytest.raises(TypeError, match="evictor must be a sparkwin evictor"):
        windowed.evictor(bad)


def test_session_window_rejects_a_delta_trigger_and_names_it(sessions):
    with pytest.raises(ValueError, match=r"trigger: DeltaTrigger.of\(5.0, 'price'\) cannot merge"):
        sessions.trigger(DeltaTrigger.of(5.0, "price"))


def test_session_window_rejects_a_processing_timeout_trigger(sessions):
    with pytest.raises(ValueError, match=r"trigger: ProcessingTimeoutTrigger.of\(.*cannot merge"):
        sessions.trigger(ProcessingTimeoutTrigger.of(CountTrigger.of(3), 1_000))


def test_session_window_names_the_unmergeable_trigger_inside_a_composite(sessions):
    composite = Repeatedly.forever(PurgingTrigger.of(DeltaTrigger.of(1.0, "price")))
    with pytest.raises(
        ValueError,
        match=r"trigger: DeltaTrigger.of\(1.0, 'price'\) \(inside Repeatedly.forever\(Purging",
    ):
        sessions.trigger(composite)


def test_processing_time_session_window_also_rejects_unmergeable_triggers(keyed):
    windowed = keyed.window(ProcessingTimeSessionWindows.withGap(1_000))
    with pytest.raises(ValueError, match="merging"):
        windowed.trigger(DeltaTrigger.of(1.0, "price"))


def test_session_window_accepts_mergeable_triggers(sessions):
    trigger = AfterWatermark.pastEndOfWindow().withEarlyFirings(AfterPane.elementCountAtLeast(2))
    assert planOf(sessions.trigger(trigger).aggregate(sw.agg.count()))["trigger"]["kind"] == (
        "afterWatermark"
    )


def test_non_session_window_accepts_unmergeable_triggers(windowed):
    windowed.trigger(DeltaTrigger.of(1.0, "price"))


def test_delta_trigger_column_must_exist(windowed):
    with pytest.raises(ValueError, match=r"DeltaTrigger.of columns: 'speed' is not a column"):
        windowed.trigger(DeltaTrigger.of(1.0, "speed"))


def test_delta_trigger_column_must_exist_when_nested(windowed):
    with pytest.raises(ValueError, match="DeltaTrigger.of columns: 'speed'"):
        windowed.trigger(PurgingTrigger.of(DeltaTrigger.of(1.0, "price", "speed")))


def test_delta_trigger_column_must_be_numeric(windowed):
    with pytest.raises(TypeError, match=r"DeltaTrigger.of columns: column 'user' is string"):
        windowed.trigger(DeltaTrigger.of(1.0, "user"))


def test_delta_evictor_column_must_exist(windowed):
    with pytest.raises(ValueError, match=r"DeltaEvictor.of columns: 'speed' is not a column"):
        windowed.evictor(DeltaEvictor.of(1.0, "speed"))


def test_delta_evictor_column_must_be_numeric(windowed):
    with pytest.raises(TypeError, match=r"DeltaEvictor.of columns: column 'ts' is timestamp"):
        windowed.evictor(DeltaEvictor.of(1.0, "ts"))


def test_delta_columns_accept_every_numeric_type(windowed):
    windowed.trigger(DeltaTrigger.of(1.0, "amount", "price", "qty", "dec"))


def test_storm_window_rejects_a_trigger(keyed):
    with pytest.raises(ValueError, match="trigger: Storm windows .* take no trigger"):
        keyed.window(StormWindows.of(Count(3))).trigger(CountTrigger.of(2))


def test_storm_window_rejects_an_evictor(keyed):
    with pytest.raises(ValueError, match="evictor: Storm windows .* take no evictor"):
        keyed.window(StormWindows.of(Count(3))).evictor(CountEvictor.of(2))


def test_storm_window_rejects_allowed_lateness(keyed):
    with pytest.raises(ValueError, match="lateness: Storm windows .*withLag"):
        keyed.window(StormWindows.of(Count(3))).allowedLateness(1_000)


def test_storm_window_accepts_zero_lateness_and_a_late_side_output(keyed):
    windowed = keyed.window(StormWindows.of(Count(3))).allowedLateness(0)
    assert (
        planOf(windowed.sideOutputLateData("late").aggregate(sw.agg.count()))["lateOutputTag"]
        == "late"
    )


# ---------------------------------------------------------------------------------------------
# allowedLateness, sideOutputLateData, accumulationMode


def test_allowed_lateness_rejects_negative_durations(windowed):
    with pytest.raises(ValueError, match="lateness must be a non-negative duration"):
        windowed.allowedLateness(timedelta(seconds=-1))


def test_allowed_lateness_rejects_floats(windowed):
    with pytest.raises(TypeError, match="lateness must be a duration"):
        windowed.allowedLateness(1.5)


def test_allowed_lateness_accepts_zero(windowed):
    plan = planOf(windowed.allowedLateness(0).aggregate(sw.agg.count()))
    assert plan["allowedLatenessMs"] == 0


def test_side_output_rejects_a_non_string_tag(windowed):
    with pytest.raises(TypeError, match="tag must be a str"):
        windowed.sideOutputLateData(1)


def test_side_output_rejects_an_empty_tag(windowed):
    with pytest.raises(ValueError, match="tag must be a non-empty name"):
        windowed.sideOutputLateData("")


def test_side_output_rejects_the_error_output_name(windowed):
    with pytest.raises(ValueError, match="tag 'errors' is the name of the error side output"):
        windowed.sideOutputLateData("errors")


@pytest.mark.parametrize("mode", ["Accumulating", "retracting", ""])
def test_accumulation_mode_rejects_other_names(windowed, mode):
    with pytest.raises(ValueError, match="mode must be 'accumulating' or 'discarding'"):
        windowed.accumulationMode(mode)


def test_accumulation_mode_rejects_non_strings(windowed):
    with pytest.raises(TypeError, match="mode must be 'accumulating' or 'discarding'"):
        windowed.accumulationMode(True)


# ---------------------------------------------------------------------------------------------
# aggregate(...)


def test_aggregate_needs_at_least_one_aggregate(windowed):
    with pytest.raises(ValueError, match=r"aggregate\(aggregates\) needs at least one"):
        windowed.aggregate()


@pytest.mark.parametrize("bad", ["amount", CountTrigger.of(3)], ids=repr)
def test_aggregate_rejects_what_is_not_an_aggregate(windowed, bad):
    with pytest.raises(TypeError, match=r"aggregates\[1\] must be an aggregate"):
        windowed.aggregate(sw.agg.count(), bad)


def test_aggregate_rejects_duplicate_aliases(windowed):
    with pytest.raises(ValueError, match="alias 'sum_amount' is used by more than one"):
        windowed.aggregate(sw.agg.sum("amount"), sw.agg.sum("amount"))


def test_aggregate_rejects_an_explicit_alias_equal_to_a_default_one(windowed):
    with pytest.raises(ValueError, match="alias 'count' is used by more than one"):
        windowed.aggregate(sw.agg.count(), sw.agg.count("user").alias("count"))


@pytest.mark.parametrize(
    "name",
    ["window_start", "window_end", "pane_timing", "pane_index", "pane_is_first", "pane_is_last"],
)
def test_aggregate_rejects_an_alias_named_like_an_output_column(windowed, name):
    with pytest.raises(ValueError, match=f"alias '{name}' of .* collides with the output column"):
        windowed.aggregate(sw.agg.count().alias(name))


def test_aggregate_rejects_an_alias_named_like_a_key(windowed):
    with pytest.raises(ValueError, match="alias 'user' of .* collides with the key column 'user'"):
        windowed.aggregate(sw.agg.first("device").alias("user"))


def test_aggregate_rejects_an_unknown_column(windowed):
    with pytest.raises(ValueError, match=r"agg.sum\(column\): 'amt' is not a column.*available"):
        windowed.aggregate(sw.agg.sum("amt"))


@pytest.mark.parametrize(
    ("aggregate", "words"),
    [
        (sw.agg.sum("user"), "needs a numeric column"),
        (sw.agg.avg("ts"), "needs a numeric column"),
        (sw.agg.sum("is_marker"), "needs a numeric column"),
        (sw.agg.min("arr"), "needs an orderable column"),
        (sw.agg.max("tags"), "needs an orderable column"),
    ],
    ids=repr,
)
def test_aggregate_rejects_a_column_of_the_wrong_type(windowed, aggregate, words):
    with pytest.raises(TypeError, match=rf"agg.{aggregate.fn}\(column\): column .* {words}"):
        windowed.aggregate(aggregate)


# ---------------------------------------------------------------------------------------------
# process(...)


def test_process_rejects_a_non_callable(windowed):
    with pytest.raises(TypeError, match=r"fn must be a callable fn\(key, window, pdf\)"):
        windowed.process("summarise", "n long")


@pytest.mark.parametrize(
    "fn",
    [lambda pdf: pdf, lambda key, window: None, lambda a, b, c, d: None],
    ids=["one argument", "two arguments", "four arguments"],
)
def test_process_rejects_a_function_that_cannot_take_three_arguments(windowed, fn):
    with pytest.raises(TypeError, match="fn must accept three positional arguments"):
        windowed.process(fn, "n long")


def test_process_rejects_an_unparseable_ddl_schema(windowed):
    with pytest.raises(ValueError, match="schema: could not parse 'n lon'"):
        windowed.process(_summarise, "n lon")


def test_process_rejects_a_ddl_string_of_a_single_type(windowed):
    with pytest.raises(ValueError, match="schema: 'int' is a single type"):
        windowed.process(_summarise, "int")


def test_process_rejects_an_empty_schema(windowed):
    with pytest.raises(ValueError, match="schema must have at least one column"):
        windowed.process(_summarise, StructType([]))


@pytest.mark.parametrize("bad", [None, LongType(), {"n": "long"}], ids=repr)
def test_process_rejects_a_schema_of_the_wrong_type(windowed, bad):
    with pytest.raises(TypeError, match="schema must be a pyspark StructType or a DDL string"):
        windowed.process(_summarise, bad)
