"""The rules on how a plan's pieces combine live in the jar (``PlanRules``): the builder asks
them after every step, through Py4J or Spark Connect, and says their refusal at the step that
made it, naming the pieces as the user wrote them. Python keeps only checks of its own
arguments."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import sparkwin as sw
from sparkwin import _transport as transport
from sparkwin._plan.refusal import render as _render
from sparkwin._spark import runtime as _runtime
from sparkwin.errors import PlanError, translated

PACKAGE = Path(sw.__file__).resolve().parent
SCHEMA = "user string, amount long, price double, ts long"


@pytest.fixture(params=["classic", "connect"])
def session(request, spark):
    return spark if request.param == "classic" else request.getfixturevalue("connectSpark")


def _keyed(df):
    return sw.stream(df, "ts").keyBy("user")


def test_a_plan_past_a_limit_is_refused_at_the_step_with_the_limit(session) -> None:
    # docs/DESIGN.md, "Hostile input": the JVM's limits, asked by the builder on both transports.
    windowed = _keyed(session.createDataFrame([], SCHEMA)).window(
        sw.TumblingEventTimeWindows.of(1_000)
    )
    with pytest.raises(PlanError) as raised:
        windowed.aggregate(*[sw.agg.count().alias(f"n{i}") for i in range(1_001)])
    assert "1001 aggregates; a pipeline computes at most 1000" in str(raised.value)


def test_triggers_nested_past_the_limit_are_named_by_their_place_not_repeated(session) -> None:
    windowed = _keyed(session.createDataFrame([], SCHEMA)).window(
        sw.TumblingEventTimeWindows.of(1_000)
    )
    deep = sw.AfterPane.elementCountAtLeast(2)
    for _ in range(60):
        deep = sw.Repeatedly.forever(deep)
    with pytest.raises(PlanError) as raised:
        windowed.trigger(deep)
    assert str(raised.value) == (
        "trigger: triggers nest more than 32 deep (the one at /trigger"
        + "/nested" * 32
        + " is 33 deep); at most 32: flatten the tree (AfterEach, AfterFirst and AfterAll take "
        "lists)"
    )


def test_more_windows_per_element_than_the_jvm_takes_is_its_refusal(session) -> None:
    """The JVM's limit is its rule's: Python keeps only its own, lower default."""
    stream = _keyed(session.createDataFrame([], SCHEMA))
    wide = sw.SlidingEventTimeWindows.of(86_400_000, 1, maxWindowsPerElement=10**8)
    with pytest.raises(PlanError) as raised:
        stream.window(wide)
    assert str(raised.value) == (
        "window: SlidingEventTimeWindows.of(86400000, 1) gives 86400000 windows per element (its "
        "size, 86400000 ms, over its slide, 1 ms); an element is in at most 1000000 windows: use a "
        "larger slide or a smaller size"
    )
    atTheLimit = sw.SlidingEventTimeWindows.of(1_000_000, 1, maxWindowsPerElement=1_000_000)
    assert stream.window(atTheLimit) is not None


def test_a_refusal_names_the_pieces_as_the_builder_wrote_them(session) -> None:
    sessions = _keyed(session.createDataFrame([], SCHEMA)).window(
        sw.EventTimeSessionWindows.withGap(1_000)
    )
    composite = sw.Repeatedly.forever(
        sw.AfterFirst.of(sw.AfterPane.elementCountAtLeast(2), sw.DeltaTrigger.of(1.0, "price"))
    )
    with pytest.raises(PlanError) as raised:
        sessions.trigger(composite)
    assert str(raised.value) == (
        "trigger: DeltaTrigger.of(1.0, 'price') (inside Repeatedly.forever(AfterFirst.of("
        "AfterPane.elementCountAtLeast(2), DeltaTrigger.of(1.0, 'price')))) cannot merge its "
        "state, so it cannot be used with merging (session) windows such as "
        "EventTimeSessionWindows.withGap(1000); use a trigger that can merge (e.g. CountTrigger, "
        "EventTimeTrigger, ContinuousEventTimeTrigger or a Beam trigger) or a non-session assigner"
    )
    assert isinstance(raised.value, ValueError)


def test_refusals_come_at_the_step_that_made_them(session) -> None:
    df = session.createDataFrame([], SCHEMA)
    with pytest.raises(PlanError, match="take no trigger"):
        _keyed(df).window(sw.StormWindows.of(sw.Count(3))).trigger(sw.CountTrigger.of(2))
    arrivalOrder = sw.stream(df).keyBy("user").window(sw.StormWindows.of(sw.Count(3)))
    with pytest.raises(PlanError, match="a stream without a timestamp has no event time to"):
        arrivalOrder.withTimestampCombiner("LATEST")
    with pytest.raises(PlanError, match=r"alias 'user' of agg.sum\('amount'\).alias\('user'\)"):
        _keyed(df).window(sw.TumblingEventTimeWindows.of(10)).aggregate(
            sw.agg.sum("amount").alias("user")
        )
    with pytest.raises(PlanError, match=r"key column 'window_end' collides"):
        sw.stream(df.withColumnRenamed("user", "window_end"), "ts").keyBy("window_end")


def test_count_windows_on_a_stream_without_a_timestamp_are_refused_when_made(spark) -> None:
    """countWindow was not checked until the jar read the whole plan; now it is asked too."""
    with pytest.raises(PlanError, match=r"timestamp: GlobalWindows.create\(\) needs an event-time"):
        sw.stream(spark.createDataFrame([], SCHEMA)).keyBy("user").countWindow(3)


@pytest.mark.parametrize(
    "trigger",
    [
        sw.CountTrigger.of(3),
        sw.DeltaTrigger.of(1.0, "price"),
        sw.ProcessingTimeoutTrigger.of(sw.CountTrigger.of(3), 1_000),
        sw.PurgingTrigger.of(sw.ContinuousProcessingTimeTrigger.of(50)),
        sw.AfterWatermark.pastEndOfWindow().withLateFirings(sw.AfterPane.elementCountAtLeast(1)),
        sw.AfterAll.of(sw.NeverTrigger.create(), sw.AfterProcessingTime.pastFirstElementInPane()),
    ],
    ids=repr,
)
def test_the_jar_and_python_agree_on_which_triggers_merge(spark, trigger) -> None:
    """``Trigger.canMerge`` describes a trigger in Python; the rule that asks it is the jar's."""
    sessions = _keyed(spark.createDataFrame([], SCHEMA)).window(
        sw.EventTimeSessionWindows.withGap(1_000)
    )
    if trigger.canMerge:
        sessions.trigger(trigger)
    else:
        with pytest.raises(PlanError, match="cannot merge its state"):
            sessions.trigger(trigger)


def test_connect_and_classic_say_the_same(spark, connectSpark) -> None:
    def refusal(session) -> str:
        df = session.createDataFrame([], SCHEMA)
        with pytest.raises(PlanError) as raised:
            _keyed(df).window(sw.StormWindows.of(sw.Count(3))).allowedLateness(5)
        return str(raised.value)

    assert refusal(spark) == refusal(connectSpark)
    assert refusal(spark).startswith("lateness: Storm windows fire each window once")


def test_the_jar_is_asked_once_per_plan_so_far(spark, monkeypatch) -> None:
    asked: list[str] = []
    monkeypatch.setattr(_runtime, "_refusals", {})
    chosen = transport.of(spark)
    real = chosen.validate

    def counted(planJson: str, streaming: bool) -> str:
        asked.append(planJson)
        return real(planJson, streaming)

    monkeypatch.setattr(chosen, "validate", counted)
    df = spark.createDataFrame([], SCHEMA)
    for _ in range(2):
        _keyed(df).window(sw.TumblingEventTimeWindows.of(10)).aggregate(sw.agg.count())
    assert len(asked) == 4  # stream, keyBy, window, aggregate: each once


def test_render_writes_strings_in_quotes_and_unknown_pieces_as_json() -> None:
    plan = {"timestamp": "a/b", "keys": ["k"], "x": {"kind": "new"}, "n": [1, 2]}
    message = "{/timestamp} {/keys/0} {/x} {/n} {not a pointer}"
    assert _render(message, plan, []) == "'a/b' 'k' {\"kind\": \"new\"} [1, 2] {not a pointer}"
    assert _render("{/a~1b}", {"a/b": "escaped"}, []) == "'escaped'"


def test_the_jar_answers_a_plan_off_any_python_builder_with_its_own_words(spark) -> None:
    """A plan not from the builder: the jar renders the pieces as the plan's JSON."""
    with pytest.raises(PlanError, match=r'trigger: \{"kind":"delta"'):
        with translated():
            plan = (
                _keyed(spark.createDataFrame([], SCHEMA))
                .window(sw.EventTimeSessionWindows.withGap(5))
                .aggregate(sw.agg.count())
                .plan
            )
            plan["trigger"] = sw.DeltaTrigger.of(1.0, "price").jsonValue()
            transport.of(spark).describe(json.dumps(plan), False, None)


# The rules' own words: each lives in the jar only (PlanRules.scala), not in the package.
MOVED = [
    "cannot merge its state",
    "needs an event-time column, and this stream has none",
    "a lag is for event time",
    "declares the values of the channel column",
    "a stream without a timestamp has no event time",
    "arrival is for replaying a bounded DataFrame",
    "inherits the upstream watermark (as Flink",
    "generates a watermark per channel",
    "punctuated watermarks cannot be generated per channel",
    "is an event-time assigner and the DataFrame is streaming",
    "runs in event time and needs watermarks",
    "Storm's own policy, so they take no",
    "is for aggregate(): a process function",
    "collides with the key column",
    "is used by more than one aggregate",
    "collides with the output column",
    "is not event time downstream",
    "replay() needs",
]


def test_no_rule_on_combining_pieces_is_written_in_python() -> None:
    source = "\n".join(p.read_text() for p in PACKAGE.rglob("*.py"))
    flat = re.sub(r'"\s*\n\s*"', "", source)  # implicit concatenation across lines
    assert [words for words in MOVED if words in flat] == []
    jar = (PACKAGE.parents[1] / "jvm/src/main/scala/sparkwin/plan/PlanRules.scala").read_text()
    jarFlat = re.sub(r'"\s*\+\s*\n\s*s?"', "", jar)
    assert [words for words in MOVED if words not in jarFlat] == []
