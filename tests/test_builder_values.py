"""The builder's values on their own: durations, watermark strategies, assigners, triggers,
evictors and aggregates. Their JSON, reprs, equality, immutability and argument checks; no
DataFrame needed.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

import sparkwin as sw
from sparkwin import (
    AfterAll,
    AfterEach,
    AfterFirst,
    AfterPane,
    AfterProcessingTime,
    AfterWatermark,
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    Count,
    CountEvictor,
    CountTrigger,
    DeltaEvictor,
    DeltaTrigger,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindows,
    NeverTrigger,
    ProcessingTimeoutTrigger,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Repeatedly,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    StormWindows,
    TimeEvictor,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WatermarkStrategy,
)
from sparkwin._plan.durations import toMillis

# ---------------------------------------------------------------------------------------------
# Durations


@pytest.mark.parametrize(
    ("value", "millis"),
    [
        (timedelta(seconds=5), 5000),
        (timedelta(minutes=1, milliseconds=1), 60001),
        (250, 250),
        (timedelta(days=1), 86_400_000),
    ],
    ids=repr,
)
def test_to_millis_converts_timedeltas_and_int_milliseconds(value, millis):
    assert toMillis(value, "size") == millis


def test_to_millis_rejects_zero_with_the_documented_message():
    with pytest.raises(ValueError) as info:
        toMillis(0, "size")
    assert str(info.value) == (
        "size must be a positive duration (datetime.timedelta or int milliseconds), got 0"
    )


def test_to_millis_rejects_sub_millisecond_remainders():
    with pytest.raises(ValueError, match="size must be a whole number of milliseconds"):
        toMillis(timedelta(microseconds=1500), "size")


@pytest.mark.parametrize("value", [True, 1.5, 1000.0, "1s", None], ids=repr)
def test_to_millis_rejects_bools_floats_and_other_types(value):
    with pytest.raises(TypeError, match=r"gap must be a duration \(datetime.timedelta or int"):
        toMillis(value, "gap")


def test_to_millis_rejects_negative_timedeltas():
    with pytest.raises(ValueError, match=r"slide must be a positive duration .*-1000 ms"):
        toMillis(timedelta(seconds=-1), "slide")


def test_to_millis_allows_zero_and_negatives_only_when_asked():
    assert toMillis(0, "lateness", allowZero=True) == 0
    assert toMillis(-5, "offset", allowNegative=True) == -5
    with pytest.raises(ValueError, match="lateness must be a non-negative duration"):
        toMillis(-1, "lateness", allowZero=True)


def test_to_millis_rejects_values_beyond_64_bits():
    with pytest.raises(ValueError, match="size is too large"):
        toMillis(2**63, "size")


# ---------------------------------------------------------------------------------------------
# Watermark strategies


@pytest.mark.parametrize(
    ("strategy", "expected", "text"),
    [
        (
            WatermarkStrategy.forBoundedOutOfOrderness(timedelta(seconds=5)),
            {
                "kind": "boundedOutOfOrderness",
                "boundMs": 5000,
                "idleTimeoutMs": None,
                "intervalMs": 200,
            },
            "WatermarkStrategy.forBoundedOutOfOrderness(5000)",
        ),
        (
            WatermarkStrategy.forMonotonousTimestamps(),
            {
                "kind": "boundedOutOfOrderness",
                "boundMs": 0,
                "idleTimeoutMs": None,
                "intervalMs": 200,
            },
            "WatermarkStrategy.forMonotonousTimestamps()",
        ),
        (
            WatermarkStrategy.forPunctuated("is_marker"),
            {
                "kind": "punctuated",
                "markerColumn": "is_marker",
                "boundMs": 0,
                "idleTimeoutMs": None,
                "intervalMs": 200,
            },
            "WatermarkStrategy.forPunctuated('is_marker')",
        ),
        (
            WatermarkStrategy.forPunctuated("m", maxOutOfOrderness=10).withIdleness(5),
            {
                "kind": "punctuated",
                "markerColumn": "m",
                "boundMs": 10,
                "idleTimeoutMs": 5,
                "intervalMs": 200,
            },
            "WatermarkStrategy.forPunctuated('m', maxOutOfOrderness=10).withIdleness(5)",
        ),
        (
            WatermarkStrategy.forStormLag(timedelta(seconds=5)),
            {"kind": "stormLag", "lagMs": 5000, "idleTimeoutMs": None, "intervalMs": 1000},
            "WatermarkStrategy.forStormLag(5000)",
        ),
        (
            WatermarkStrategy.forBoundedOutOfOrderness(1)
            .withIdleness(timedelta(minutes=1))
            .withAutoWatermarkInterval(50),
            {
                "kind": "boundedOutOfOrderness",
                "boundMs": 1,
                "idleTimeoutMs": 60000,
                "intervalMs": 50,
            },
            "WatermarkStrategy.forBoundedOutOfOrderness(1).withIdleness(60000)"
            ".withAutoWatermarkInterval(50)",
        ),
        (
            WatermarkStrategy.forStormLag(0).withAutoWatermarkInterval(200),
            {"kind": "stormLag", "lagMs": 0, "idleTimeoutMs": None, "intervalMs": 200},
            "WatermarkStrategy.forStormLag(0).withAutoWatermarkInterval(200)",
        ),
        (WatermarkStrategy.noWatermarks(), None, "WatermarkStrategy.noWatermarks()"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_each_watermark_strategy_serialises_and_prints_like_its_code(strategy, expected, text):
    assert strategy.jsonValue() == expected
    assert repr(strategy) == text


def test_watermark_strategies_are_values():
    assert WatermarkStrategy.forBoundedOutOfOrderness(0) == (
        WatermarkStrategy.forMonotonousTimestamps()
    )
    assert WatermarkStrategy.forStormLag(5) != WatermarkStrategy.forBoundedOutOfOrderness(5)
    base = WatermarkStrategy.forBoundedOutOfOrderness(5)
    idle = base.withIdleness(10)
    assert base.idleTimeoutMs is None and idle.idleTimeoutMs == 10
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.boundMs = 7


def test_bounded_watermark_rejects_a_negative_bound():
    with pytest.raises(ValueError, match="maxOutOfOrderness must be a non-negative duration"):
        WatermarkStrategy.forBoundedOutOfOrderness(-1)


def test_storm_lag_watermark_rejects_a_negative_lag():
    with pytest.raises(ValueError, match="lag must be a non-negative duration"):
        WatermarkStrategy.forStormLag(timedelta(seconds=-1))


@pytest.mark.parametrize("method", ["withIdleness", "withAutoWatermarkInterval"])
def test_watermark_refinements_reject_zero(method):
    strategy = WatermarkStrategy.forMonotonousTimestamps()
    name = "timeout" if method == "withIdleness" else "interval"
    with pytest.raises(ValueError, match=f"{name} must be a positive duration"):
        getattr(strategy, method)(0)


@pytest.mark.parametrize("method", ["withIdleness", "withAutoWatermarkInterval"])
def test_no_watermarks_rejects_refinements(method):
    with pytest.raises(ValueError, match=rf"{method}\(\) does not apply to .*noWatermarks"):
        getattr(WatermarkStrategy.noWatermarks(), method)(1_000)


def test_punctuated_watermark_rejects_a_non_string_marker():
    with pytest.raises(TypeError, match="markerColumn must be the name"):
        WatermarkStrategy.forPunctuated(None)


def test_punctuated_watermark_rejects_an_empty_marker():
    with pytest.raises(ValueError, match="markerColumn must be a non-empty"):
        WatermarkStrategy.forPunctuated("")


# ---------------------------------------------------------------------------------------------
# Assigners


@pytest.mark.parametrize(
    ("assigner", "text", "eventTime", "merging", "default"),
    [
        (
            TumblingEventTimeWindows.of(timedelta(minutes=1)),
            "TumblingEventTimeWindows.of(60000)",
            True,
            False,
            EventTimeTrigger.create(),
        ),
        (
            TumblingProcessingTimeWindows.of(1_000, offset=-10),
            "TumblingProcessingTimeWindows.of(1000, offset=-10)",
            False,
            False,
            ProcessingTimeTrigger.create(),
        ),
        (
            SlidingEventTimeWindows.of(10_000, 1_000),
            "SlidingEventTimeWindows.of(10000, 1000)",
            True,
            False,
            EventTimeTrigger.create(),
        ),
        (
            SlidingProcessingTimeWindows.of(10_000, 3_000, offset=1),
            "SlidingProcessingTimeWindows.of(10000, 3000, offset=1)",
            False,
            False,
            ProcessingTimeTrigger.create(),
        ),
        (
            EventTimeSessionWindows.withGap(30_000),
            "EventTimeSessionWindows.withGap(30000)",
            True,
            True,
            EventTimeTrigger.create(),
        ),
        (
            EventTimeSessionWindows.withDynamicGap("gap_ms"),
            "EventTimeSessionWindows.withDynamicGap('gap_ms')",
            True,
            True,
            EventTimeTrigger.create(),
        ),
        (
            ProcessingTimeSessionWindows.withGap(5),
            "ProcessingTimeSessionWindows.withGap(5)",
            False,
            True,
            ProcessingTimeTrigger.create(),
        ),
        (GlobalWindows.create(), "GlobalWindows.create()", False, False, NeverTrigger.create()),
        (
            StormWindows.of(Count(3), 10_000).withLag(5),
            "StormWindows.of(Count(3), 10000).withLag(5)",
            True,
            False,
            EventTimeTrigger.create(),
        ),
        (StormWindows.of(60_000), "StormWindows.of(60000)", True, False, EventTimeTrigger.create()),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_each_assigner_knows_its_time_merging_default_trigger_and_repr(
    assigner, text, eventTime, merging, default
):
    assert repr(assigner) == text
    assert assigner.isEventTime is eventTime
    assert assigner.isMerging is merging
    assert assigner.defaultTrigger == default


def test_assigners_are_values():
    assert TumblingEventTimeWindows.of(timedelta(seconds=1)) == TumblingEventTimeWindows.of(1_000)
    assert TumblingEventTimeWindows.of(1_000) != TumblingProcessingTimeWindows.of(1_000)
    assert hash(SlidingEventTimeWindows.of(2, 1)) == hash(SlidingEventTimeWindows.of(2, 1))
    storm = StormWindows.of(Count(3))
    assert storm.withLag(5) != storm and storm.lagMs == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        storm.lagMs = 5


def test_dynamic_gap_assigner_references_its_column():
    assert EventTimeSessionWindows.withDynamicGap("g").referencedColumns == frozenset({"g"})
    assert EventTimeSessionWindows.withGap(1).referencedColumns == frozenset()


@pytest.mark.parametrize("size", [0, -1, timedelta(0)], ids=repr)
def test_tumbling_rejects_non_positive_size(size):
    with pytest.raises(ValueError, match="size must be a positive duration"):
        TumblingEventTimeWindows.of(size)


def test_tumbling_rejects_float_size():
    with pytest.raises(TypeError, match="size must be a duration"):
        TumblingProcessingTimeWindows.of(1.5)


@pytest.mark.parametrize("offset", [1_000, -1_000, 1_500], ids=repr)
def test_tumbling_rejects_offset_not_smaller_than_size(offset):
    with pytest.raises(ValueError, match=r"offset must be smaller than size.*\|offset\| < size"):
        TumblingEventTimeWindows.of(1_000, offset=offset)


def test_tumbling_accepts_negative_offset_smaller_than_size():
    assert TumblingEventTimeWindows.of(1_000, -999).offsetMs == -999


def test_sliding_rejects_zero_slide():
    with pytest.raises(ValueError, match="slide must be a positive duration"):
        SlidingEventTimeWindows.of(1_000, 0)


def test_sliding_rejects_negative_size():
    with pytest.raises(ValueError, match="size must be a positive duration"):
        SlidingProcessingTimeWindows.of(-1_000, 100)


@pytest.mark.parametrize("offset", [100, -100, 250], ids=repr)
def test_sliding_rejects_offset_not_smaller_than_slide(offset):
    with pytest.raises(ValueError, match=r"offset must be smaller than slide"):
        SlidingEventTimeWindows.of(1_000, 100, offset)


def test_sliding_accepts_size_that_is_not_a_multiple_of_slide():
    assert SlidingEventTimeWindows.of(1_000, 300).jsonValue()["slideMs"] == 300


@pytest.mark.parametrize("factory", [EventTimeSessionWindows, ProcessingTimeSessionWindows])
@pytest.mark.parametrize("gap", [0, -5], ids=repr)
def test_session_rejects_non_positive_gap(factory, gap):
    with pytest.raises(ValueError, match="gap must be a positive duration"):
        factory.withGap(gap)


def test_dynamic_gap_rejects_a_non_string_column():
    with pytest.raises(TypeError, match="column must be the name"):
        EventTimeSessionWindows.withDynamicGap(5)


def test_dynamic_gap_rejects_an_empty_column():
    with pytest.raises(ValueError, match="column must be a non-empty"):
        ProcessingTimeSessionWindows.withDynamicGap("")


@pytest.mark.parametrize("n", [0, -3], ids=repr)
def test_count_rejects_non_positive_n(n):
    with pytest.raises(ValueError, match=r"Count\(n\) needs a positive n"):
        Count(n)


@pytest.mark.parametrize("n", [True, 2.0, "3"], ids=repr)
def test_count_rejects_non_integers(n):
    with pytest.raises(TypeError, match=r"Count\(n\) needs an int n"):
        Count(n)


@pytest.mark.parametrize("parameter", ["length", "slide"])
def test_storm_rejects_length_or_slide_of_the_wrong_type(parameter):
    args = {"length": Count(3), "slide": Count(1)}
    args[parameter] = 2.5
    with pytest.raises(TypeError, match=f"{parameter} must be Count\\(n\\) .* or a duration"):
        StormWindows.of(**args)


@pytest.mark.parametrize("parameter", ["length", "slide"])
def test_storm_rejects_non_positive_durations(parameter):
    args = {"length": 1_000, "slide": 500}
    args[parameter] = 0
    with pytest.raises(ValueError, match=f"{parameter} must be a positive duration"):
        StormWindows.of(**args)


def test_storm_rejects_a_negative_lag():
    with pytest.raises(ValueError, match="lag must be a non-negative duration"):
        StormWindows.of(Count(3)).withLag(-1)


# ---------------------------------------------------------------------------------------------
# Triggers

EARLY_TWO = AfterWatermark.pastEndOfWindow().withEarlyFirings(AfterPane.elementCountAtLeast(2))


@pytest.mark.parametrize(
    ("trigger", "expected", "text"),
    [
        (EventTimeTrigger.create(), {"kind": "eventTime"}, "EventTimeTrigger.create()"),
        (
            ProcessingTimeTrigger.create(),
            {"kind": "processingTime"},
            "ProcessingTimeTrigger.create()",
        ),
        (NeverTrigger.create(), {"kind": "never"}, "NeverTrigger.create()"),
        (CountTrigger.of(100), {"kind": "count", "count": 100}, "CountTrigger.of(100)"),
        (
            ContinuousEventTimeTrigger.of(timedelta(seconds=1)),
            {"kind": "continuousEventTime", "intervalMs": 1000},
            "ContinuousEventTimeTrigger.of(1000)",
        ),
        (
            ContinuousProcessingTimeTrigger.of(1_000),
            {"kind": "continuousProcessingTime", "intervalMs": 1000},
            "ContinuousProcessingTimeTrigger.of(1000)",
        ),
        (
            DeltaTrigger.of(5, "x"),
            {"kind": "delta", "threshold": 5.0, "columns": ["x"]},
            "DeltaTrigger.of(5.0, 'x')",
        ),
        (
            DeltaTrigger.of(0.5, "x", "y"),
            {"kind": "delta", "threshold": 0.5, "columns": ["x", "y"]},
            "DeltaTrigger.of(0.5, 'x', 'y')",
        ),
        (
            PurgingTrigger.of(CountTrigger.of(100)),
            {"kind": "purging", "nested": {"kind": "count", "count": 100}},
            "PurgingTrigger.of(CountTrigger.of(100))",
        ),
        (
            ProcessingTimeoutTrigger.of(CountTrigger.of(3), timedelta(seconds=1)),
            {
                "kind": "processingTimeout",
                "nested": {"kind": "count", "count": 3},
                "timeoutMs": 1000,
                "resetTimerOnNewRecord": False,
                "shouldClearOnTimeout": True,
            },
            "ProcessingTimeoutTrigger.of(CountTrigger.of(3), 1000)",
        ),
        (
            ProcessingTimeoutTrigger.of(EventTimeTrigger.create(), 10, True, False),
            {
                "kind": "processingTimeout",
                "nested": {"kind": "eventTime"},
                "timeoutMs": 10,
                "resetTimerOnNewRecord": True,
                "shouldClearOnTimeout": False,
            },
            "ProcessingTimeoutTrigger.of(EventTimeTrigger.create(), 10, "
            "resetTimerOnNewRecord=True, shouldClearOnTimeout=False)",
        ),
        (
            AfterWatermark.pastEndOfWindow(),
            {"kind": "afterWatermark", "early": None, "late": None},
            "AfterWatermark.pastEndOfWindow()",
        ),
        (
            EARLY_TWO,
            {"kind": "afterWatermark", "early": {"kind": "afterPane", "count": 2}, "late": None},
            "AfterWatermark.pastEndOfWindow().withEarlyFirings(AfterPane.elementCountAtLeast(2))",
        ),
        (
            AfterWatermark.pastEndOfWindow()
            .withLateFirings(CountTrigger.of(1))
            .withEarlyFirings(AfterProcessingTime.pastFirstElementInPane().plusDelayOf(500)),
            {
                "kind": "afterWatermark",
                "early": {"kind": "afterProcessingTime", "delayMs": 500},
                "late": {"kind": "count", "count": 1},
            },
            "AfterWatermark.pastEndOfWindow().withEarlyFirings(AfterProcessingTime"
            ".pastFirstElementInPane().plusDelayOf(500)).withLateFirings(CountTrigger.of(1))",
        ),
        (
            AfterProcessingTime.pastFirstElementInPane(),
            {"kind": "afterProcessingTime", "delayMs": 0},
            "AfterProcessingTime.pastFirstElementInPane()",
        ),
        (
            AfterProcessingTime.pastFirstElementInPane().plusDelayOf(timedelta(seconds=1)),
            {"kind": "afterProcessingTime", "delayMs": 1000},
            "AfterProcessingTime.pastFirstElementInPane().plusDelayOf(1000)",
        ),
        (
            AfterPane.elementCountAtLeast(2),
            {"kind": "afterPane", "count": 2},
            "AfterPane.elementCountAtLeast(2)",
        ),
        (
            Repeatedly.forever(AfterPane.elementCountAtLeast(2)),
            {"kind": "repeatedly", "nested": {"kind": "afterPane", "count": 2}},
            "Repeatedly.forever(AfterPane.elementCountAtLeast(2))",
        ),
        (
            AfterEach.inOrder(AfterPane.elementCountAtLeast(2), AfterWatermark.pastEndOfWindow()),
            {
                "kind": "afterEach",
                "triggers": [
                    {"kind": "afterPane", "count": 2},
                    {"kind": "afterWatermark", "early": None, "late": None},
                ],
            },
            "AfterEach.inOrder(AfterPane.elementCountAtLeast(2), AfterWatermark.pastEndOfWindow())",
        ),
        (
            AfterFirst.of(CountTrigger.of(9), ProcessingTimeTrigger.create()),
            {
                "kind": "afterFirst",
                "triggers": [{"kind": "count", "count": 9}, {"kind": "processingTime"}],
            },
            "AfterFirst.of(CountTrigger.of(9), ProcessingTimeTrigger.create())",
        ),
        (
            AfterAll.of(
                AfterPane.elementCountAtLeast(1),
                AfterPane.elementCountAtLeast(3),
                NeverTrigger.create(),
            ),
            {
                "kind": "afterAll",
                "triggers": [
                    {"kind": "afterPane", "count": 1},
                    {"kind": "afterPane", "count": 3},
                    {"kind": "never"},
                ],
            },
            "AfterAll.of(AfterPane.elementCountAtLeast(1), AfterPane.elementCountAtLeast(3), "
            "NeverTrigger.create())",
        ),
        (
            Repeatedly.forever(AfterPane.elementCountAtLeast(10)).orFinally(
                AfterWatermark.pastEndOfWindow()
            ),
            {
                "kind": "orFinally",
                "main": {"kind": "repeatedly", "nested": {"kind": "afterPane", "count": 10}},
                "until": {"kind": "afterWatermark", "early": None, "late": None},
            },
            "Repeatedly.forever(AfterPane.elementCountAtLeast(10))"
            ".orFinally(AfterWatermark.pastEndOfWindow())",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_each_trigger_serialises_and_prints_like_its_code(trigger, expected, text):
    assert trigger.jsonValue() == expected
    assert repr(trigger) == text


@pytest.mark.parametrize(
    ("trigger", "canMerge"),
    [
        (EventTimeTrigger.create(), True),
        (ProcessingTimeTrigger.create(), True),
        (NeverTrigger.create(), True),
        (CountTrigger.of(2), True),
        (ContinuousEventTimeTrigger.of(1), True),
        (ContinuousProcessingTimeTrigger.of(1), True),
        (DeltaTrigger.of(1.0, "x"), False),
        (PurgingTrigger.of(CountTrigger.of(2)), True),
        (PurgingTrigger.of(DeltaTrigger.of(1.0, "x")), False),
        (ProcessingTimeoutTrigger.of(CountTrigger.of(2), 1), False),
        (AfterWatermark.pastEndOfWindow(), True),
        (EARLY_TWO, True),
        (AfterWatermark.pastEndOfWindow().withLateFirings(DeltaTrigger.of(1.0, "x")), False),
        (AfterProcessingTime.pastFirstElementInPane(), True),
        (AfterPane.elementCountAtLeast(1), True),
        (Repeatedly.forever(CountTrigger.of(2)), True),
        (Repeatedly.forever(DeltaTrigger.of(1.0, "x")), False),
        (AfterEach.inOrder(CountTrigger.of(1), CountTrigger.of(2)), True),
        (AfterFirst.of(CountTrigger.of(1), DeltaTrigger.of(1.0, "x")), False),
        (
            AfterAll.of(CountTrigger.of(1), ProcessingTimeoutTrigger.of(CountTrigger.of(1), 5)),
            False,
        ),
        (CountTrigger.of(1).orFinally(EventTimeTrigger.create()), True),
        (CountTrigger.of(1).orFinally(DeltaTrigger.of(1.0, "x")), False),
    ],
    ids=repr,
)
def test_can_merge_follows_flink_and_beam(trigger, canMerge):
    assert trigger.canMerge is canMerge


def test_triggers_report_the_columns_they_reference():
    trigger = AfterFirst.of(
        DeltaTrigger.of(1.0, "x", "y"), PurgingTrigger.of(DeltaTrigger.of(1.0, "z"))
    ).orFinally(CountTrigger.of(3))
    assert trigger.referencedColumns == frozenset({"x", "y", "z"})
    assert CountTrigger.of(3).referencedColumns == frozenset()


def test_triggers_are_values():
    assert CountTrigger.of(3) == CountTrigger.of(3)
    assert CountTrigger.of(3) != AfterPane.elementCountAtLeast(3)
    assert EventTimeTrigger.create() == EventTimeTrigger.create()
    assert PurgingTrigger.of(CountTrigger.of(3)) != PurgingTrigger.of(CountTrigger.of(4))
    assert {EARLY_TWO, EARLY_TWO, CountTrigger.of(1)} == {CountTrigger.of(1), EARLY_TWO}
    assert ContinuousEventTimeTrigger.of(timedelta(seconds=1)) == ContinuousEventTimeTrigger.of(
        1_000
    )


def test_trigger_refinements_return_new_triggers():
    base = AfterWatermark.pastEndOfWindow()
    early = base.withEarlyFirings(CountTrigger.of(1))
    assert base.early is None and early.early == CountTrigger.of(1)
    delayed = AfterProcessingTime.pastFirstElementInPane()
    assert delayed.plusDelayOf(5).delayMs == 5 and delayed.delayMs == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        early.late = CountTrigger.of(1)


def test_plus_delay_of_adds_up_as_in_beam():
    trigger = AfterProcessingTime.pastFirstElementInPane().plusDelayOf(100).plusDelayOf(50)
    assert trigger.jsonValue() == {"kind": "afterProcessingTime", "delayMs": 150}


def test_plus_delay_of_rejects_negative_delays():
    with pytest.raises(ValueError, match="delay must be a non-negative duration"):
        AfterProcessingTime.pastFirstElementInPane().plusDelayOf(-1)


@pytest.mark.parametrize(
    "factory", [CountTrigger.of, AfterPane.elementCountAtLeast], ids=lambda f: f.__qualname__
)
@pytest.mark.parametrize("count", [0, -1], ids=repr)
def test_count_triggers_reject_non_positive_counts(factory, count):
    with pytest.raises(ValueError, match="count must be a positive int"):
        factory(count)


@pytest.mark.parametrize(
    "factory", [CountTrigger.of, AfterPane.elementCountAtLeast], ids=lambda f: f.__qualname__
)
@pytest.mark.parametrize("count", [True, 2.0], ids=repr)
def test_count_triggers_reject_non_integers(factory, count):
    with pytest.raises(TypeError, match="count must be an int"):
        factory(count)


@pytest.mark.parametrize(
    "factory",
    [ContinuousEventTimeTrigger.of, ContinuousProcessingTimeTrigger.of],
    ids=lambda f: f.__qualname__,
)
def test_continuous_triggers_reject_zero_interval(factory):
    with pytest.raises(ValueError, match="interval must be a positive duration"):
        factory(0)


def test_delta_trigger_needs_a_column():
    with pytest.raises(ValueError, match=r"DeltaTrigger.of needs at least one column in columns"):
        DeltaTrigger.of(1.0)


def test_delta_trigger_rejects_duplicate_columns():
    with pytest.raises(ValueError, match="columns names 'x' twice"):
        DeltaTrigger.of(1.0, "x", "x")


def test_delta_trigger_rejects_a_list_of_columns():
    with pytest.raises(TypeError, match=r"DeltaTrigger.of takes its columns as separate arguments"):
        DeltaTrigger.of(1.0, ["x", "y"])


def test_delta_trigger_rejects_a_non_string_column():
    with pytest.raises(TypeError, match=r"columns\[1\] must be a column name"):
        DeltaTrigger.of(1.0, "x", 3)


@pytest.mark.parametrize("threshold", [-1.0, float("nan"), float("inf")], ids=repr)
def test_delta_trigger_rejects_negative_or_non_finite_thresholds(threshold):
    with pytest.raises(ValueError, match="threshold must"):
        DeltaTrigger.of(threshold, "x")


@pytest.mark.parametrize("threshold", ["x", True, None], ids=repr)
def test_delta_trigger_rejects_non_numeric_thresholds(threshold):
    with pytest.raises(TypeError, match="threshold must be a number"):
        DeltaTrigger.of(threshold, "x")


@pytest.mark.parametrize(
    "factory", [PurgingTrigger.of, Repeatedly.forever], ids=lambda f: f.__qualname__
)
def test_wrapping_triggers_reject_a_non_trigger(factory):
    with pytest.raises(TypeError, match="trigger must be a sparkwin trigger"):
        factory(CountEvictor.of(3))


def test_processing_timeout_trigger_rejects_zero_timeout():
    with pytest.raises(ValueError, match="timeout must be a positive duration"):
        ProcessingTimeoutTrigger.of(CountTrigger.of(3), 0)


@pytest.mark.parametrize("flag", ["resetTimerOnNewRecord", "shouldClearOnTimeout"])
def test_processing_timeout_trigger_rejects_non_bool_flags(flag):
    with pytest.raises(TypeError, match=f"{flag} must be a bool"):
        ProcessingTimeoutTrigger.of(CountTrigger.of(3), 10, **{flag: 1})


@pytest.mark.parametrize("method", ["withEarlyFirings", "withLateFirings"])
def test_after_watermark_firings_reject_a_non_trigger(method):
    with pytest.raises(TypeError, match="trigger must be a sparkwin trigger"):
        getattr(AfterWatermark.pastEndOfWindow(), method)(2)


def test_or_finally_rejects_a_non_trigger():
    with pytest.raises(TypeError, match="until must be a sparkwin trigger"):
        CountTrigger.of(2).orFinally("watermark")


@pytest.mark.parametrize(
    ("factory", "name"),
    [
        (AfterEach.inOrder, "AfterEach.inOrder"),
        (AfterFirst.of, "AfterFirst.of"),
        (AfterAll.of, "AfterAll.of"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_beam_composites_need_at_least_two_triggers(factory, name):
    with pytest.raises(ValueError, match=f"{name} needs at least two triggers, got 1"):
        factory(CountTrigger.of(1))
    with pytest.raises(ValueError, match=f"{name} needs at least two triggers, got 0"):
        factory()


def test_beam_composites_reject_a_list_of_triggers():
    with pytest.raises(TypeError, match="takes its triggers as separate arguments"):
        AfterFirst.of([CountTrigger.of(1), CountTrigger.of(2)])


def test_beam_composites_name_the_bad_trigger():
    with pytest.raises(TypeError, match=r"triggers\[1\] must be a sparkwin trigger"):
        AfterEach.inOrder(CountTrigger.of(1), "count")


def test_after_all_rejects_more_than_62_triggers():
    with pytest.raises(ValueError, match="AfterAll.of takes at most 62 triggers, got 63"):
        AfterAll.of(*[CountTrigger.of(i + 1) for i in range(63)])


# ---------------------------------------------------------------------------------------------
# Evictors


@pytest.mark.parametrize(
    ("evictor", "expected", "text"),
    [
        (
            CountEvictor.of(3),
            {"kind": "count", "maxCount": 3, "doEvictAfter": False},
            "CountEvictor.of(3)",
        ),
        (
            CountEvictor.of(0, doEvictAfter=True),
            {"kind": "count", "maxCount": 0, "doEvictAfter": True},
            "CountEvictor.of(0, doEvictAfter=True)",
        ),
        (
            TimeEvictor.of(timedelta(seconds=1)),
            {"kind": "time", "windowSizeMs": 1000, "doEvictAfter": False},
            "TimeEvictor.of(1000)",
        ),
        (
            TimeEvictor.of(0, True),
            {"kind": "time", "windowSizeMs": 0, "doEvictAfter": True},
            "TimeEvictor.of(0, doEvictAfter=True)",
        ),
        (
            DeltaEvictor.of(5, "x"),
            {"kind": "delta", "threshold": 5.0, "columns": ["x"], "doEvictAfter": False},
            "DeltaEvictor.of(5.0, 'x')",
        ),
        (
            DeltaEvictor.of(0.5, "x", "y", doEvictAfter=True),
            {"kind": "delta", "threshold": 0.5, "columns": ["x", "y"], "doEvictAfter": True},
            "DeltaEvictor.of(0.5, 'x', 'y', doEvictAfter=True)",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_each_evictor_serialises_and_prints_like_its_code(evictor, expected, text):
    assert evictor.jsonValue() == expected
    assert repr(evictor) == text


def test_evictors_are_values():
    assert CountEvictor.of(3) == CountEvictor.of(3)
    assert CountEvictor.of(3) != CountEvictor.of(3, doEvictAfter=True)
    assert DeltaEvictor.of(1, "x").referencedColumns == frozenset({"x"})
    assert TimeEvictor.of(5).referencedColumns == frozenset()
    with pytest.raises(dataclasses.FrozenInstanceError):
        CountEvictor.of(3).maxCount = 4


def test_count_evictor_rejects_a_negative_max_count():
    with pytest.raises(ValueError, match="maxCount must be a non-negative int"):
        CountEvictor.of(-1)


def test_time_evictor_rejects_a_negative_window_size():
    with pytest.raises(ValueError, match="windowSize must be a non-negative duration"):
        TimeEvictor.of(-1)


@pytest.mark.parametrize(
    "make",
    [
        lambda: CountEvictor.of(3, 1),
        lambda: TimeEvictor.of(3, "yes"),
        lambda: DeltaEvictor.of(1.0, "x", doEvictAfter=None),
    ],
)
def test_evictors_reject_non_bool_do_evict_after(make):
    with pytest.raises(TypeError, match="doEvictAfter must be a bool"):
        make()


def test_delta_evictor_needs_a_column():
    with pytest.raises(ValueError, match=r"DeltaEvictor.of needs at least one column in columns"):
        DeltaEvictor.of(1.0)


def test_delta_evictor_rejects_a_negative_threshold():
    with pytest.raises(ValueError, match="threshold must not be negative"):
        DeltaEvictor.of(-0.5, "x")


# ---------------------------------------------------------------------------------------------
# Aggregates


@pytest.mark.parametrize(
    ("aggregate", "alias", "text"),
    [
        (sw.agg.count(), "count", "agg.count()"),
        (sw.agg.count("user"), "count_user", "agg.count('user')"),
        (sw.agg.sum("amount"), "sum_amount", "agg.sum('amount')"),
        (sw.agg.avg("amount"), "avg_amount", "agg.avg('amount')"),
        (sw.agg.min("x"), "min_x", "agg.min('x')"),
        (sw.agg.max("x"), "max_x", "agg.max('x')"),
        (sw.agg.first("x"), "first_x", "agg.first('x')"),
        (sw.agg.last("x"), "last_x", "agg.last('x')"),
        (sw.agg.collectList("x"), "collect_list_x", "agg.collectList('x')"),
        (sw.agg.collectSet("x"), "collect_set_x", "agg.collectSet('x')"),
        (sw.agg.sum("amount").alias("total"), "total", "agg.sum('amount').alias('total')"),
        (sw.agg.count().alias("n"), "n", "agg.count().alias('n')"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_each_aggregate_has_its_default_alias_and_repr(aggregate, alias, text):
    assert aggregate.outputAlias == alias
    assert aggregate.jsonValue()["alias"] == alias
    assert repr(aggregate) == text


def test_aggregates_are_values():
    total = sw.agg.sum("amount").alias("total")
    assert total == sw.agg.sum("amount").alias("total")
    assert total != sw.agg.sum("amount")
    plain = sw.agg.sum("amount")
    plain.alias("other")
    assert plain.outputAlias == "sum_amount"
    with pytest.raises(dataclasses.FrozenInstanceError):
        plain.column = "x"


@pytest.mark.parametrize(
    "make",
    [
        sw.agg.sum,
        sw.agg.avg,
        sw.agg.min,
        sw.agg.max,
        sw.agg.first,
        sw.agg.last,
        sw.agg.collectList,
        sw.agg.collectSet,
        sw.agg.count,
        sw.agg.stddev,
        sw.agg.stddevSamp,
        sw.agg.stddevPop,
        sw.agg.variance,
        sw.agg.varSamp,
        sw.agg.varPop,
        sw.agg.countIf,
        sw.agg.approxCountDistinct,
    ],
    ids=lambda f: f.__name__,
)
def test_aggregate_functions_reject_a_non_string_column(make):
    with pytest.raises(TypeError, match=rf"agg.{make.__name__}\(column\): column must be"):
        make(3)


def test_aggregate_functions_reject_an_empty_column():
    with pytest.raises(ValueError, match=r"agg.sum\(column\): column must be a non-empty"):
        sw.agg.sum("")


def test_column_is_required_except_for_count():
    with pytest.raises(TypeError, match=r"agg.max\(column\)"):
        sw.agg.max(None)


def test_alias_rejects_a_non_string():
    with pytest.raises(TypeError, match="alias name must be a str"):
        sw.agg.count().alias(1)


def test_alias_rejects_an_empty_name():
    with pytest.raises(ValueError, match="alias name must be a non-empty"):
        sw.agg.count().alias("")


def test_package_exports_the_builder_api():
    for name in [
        "stream",
        "WatermarkStrategy",
        "Count",
        "Pipeline",
        "agg",
        "StormWindows",
        "AfterWatermark",
        "DeltaEvictor",
        "ProcessingTimeoutTrigger",
        "session",
    ]:
        assert name in sw.__all__ and hasattr(sw, name)
    assert sw.agg.sum("a") == sw.agg.Aggregate("sum", "a", "sum_a")
