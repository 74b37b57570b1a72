"""The statistical aggregates against Spark's own functions on the same rows: stddev and
variance (sample and population), approx_count_distinct, percentile_approx, min_by/max_by and
count_if, in batch (tumbling, sliding and session windows) and on a stream pre-aggregated
before the shuffle; and their argument checks, in Python and in the jar.
"""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812
from sparkstreams import StreamResult, canonical, runStream

import sparkwin as sw
from sparkwin._plan.contract import PlanSchemaError, validatePlan
from sparkwin._transport import classic as _py4j
from sparkwin.errors import PlanError

DDL = "user string, amount long, price double, flag boolean, page string, seq long, ts timestamp"
BASE = datetime(2026, 1, 1, tzinfo=UTC)


def _rows(n: int = 3000, seed: int = 5) -> list[tuple]:
    """Three users over ten minutes; user c has one row in its first minute (a sample variance
    of one value); nulls in price, flag and page; seq is unique, so min_by/max_by have no ties.
    """
    rnd = random.Random(seed)
    rows: list[tuple] = [("c", 7, 1.5, True, "p0", -1, BASE + timedelta(seconds=1))]
    for i in range(n):
        user = rnd.choice("ab")
        price = None if rnd.random() < 0.05 else round(rnd.gauss(1e4, 250.0), 3)
        flag = None if rnd.random() < 0.1 else rnd.random() < 0.3
        page = None if rnd.random() < 0.05 else f"p{rnd.randrange(150)}"
        ts = BASE + timedelta(milliseconds=60_000 + rnd.randrange(540_000))  # event time is ms
        rows.append((user, rnd.randrange(-50, 500), price, flag, page, i, ts))
    return rows


# (sparkwin aggregate, Spark function and its arguments, how to compare)
AGGREGATES: list[tuple[sw.agg.Aggregate, tuple, str]] = [
    (sw.agg.stddev("price"), ("stddev", "price"), "close"),
    (sw.agg.stddevSamp("amount"), ("stddev_samp", "amount"), "close"),
    (sw.agg.stddevPop("price"), ("stddev_pop", "price"), "close"),
    (sw.agg.variance("amount"), ("variance", "amount"), "close"),
    (sw.agg.varSamp("price"), ("var_samp", "price"), "close"),
    (sw.agg.varPop("amount"), ("var_pop", "amount"), "close"),
    (sw.agg.countIf("flag"), ("count_if", "flag"), "equal"),
    (sw.agg.minBy("page", "seq"), ("min_by", "page", "seq"), "equal"),
    (sw.agg.maxBy("price", "seq"), ("max_by", "price", "seq"), "equal"),
    (sw.agg.approxCountDistinct("page"), ("approx_count_distinct", "page"), "equal"),
    (
        sw.agg.approxCountDistinct("amount", rsd=0.01),
        ("approx_count_distinct", "amount", 0.01),
        "equal",
    ),
    (sw.agg.percentileApprox("amount", 0.5), ("percentile_approx", "amount", 0.5), "equal"),
    (
        sw.agg.percentileApprox("price", [0.1, 0.5, 0.99], accuracy=5000),
        ("percentile_approx", "price", [0.1, 0.5, 0.99], 5000),
        "equal",
    ),
]


def _same(ours: Any, theirs: Any, how: str) -> bool:
    if ours is None or theirs is None:
        return ours is None and theirs is None
    if how == "close":
        return math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-9)
    return ours == theirs


def _compare(ours: dict, theirs: dict) -> None:
    assert ours.keys() == theirs.keys() and ours
    for key in ours:
        for (agg, _, how), mine, spark in zip(AGGREGATES, ours[key], theirs[key], strict=True):
            assert _same(mine, spark, how), f"{agg!r} in {key}: sparkwin {mine!r}, Spark {spark!r}"


def _sparkwin(pipeline: sw.Pipeline, key: str = "window_start") -> dict:
    return {
        (r["user"], r[key]): [r[a.outputAlias] for a, _, _ in AGGREGATES]
        for r in pipeline.toDF().collect()
    }


def _spark(call: tuple) -> Any:
    name, *args = call
    return getattr(F, name)(*args)


def _native(df: DataFrame, window: Any) -> dict:
    grouped = df.groupBy(window.alias("w"), "user").agg(
        *[_spark(c).alias(f"c{i}") for i, (_, c, _) in enumerate(AGGREGATES)]
    )
    return {
        (r["user"], r["w"]["start"]): [r[f"c{i}"] for i in range(len(AGGREGATES))]
        for r in grouped.collect()
    }


@pytest.fixture(scope="module")
def history(spark) -> DataFrame:
    return spark.createDataFrame(_rows(), DDL)


def _source(df: DataFrame) -> sw.DataStream:
    return sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(1_000))


def test_tumbling_windows_equal_sparks_own_functions(spark, history) -> None:
    pipeline = (
        _source(history)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(timedelta(minutes=1)))
        .aggregate(*[a for a, _, _ in AGGREGATES])
    )
    _compare(_sparkwin(pipeline), _native(history, F.window("ts", "1 minute")))


def test_sliding_windows_merged_from_slices_equal_sparks_own(spark, history) -> None:
    pipeline = (
        _source(history)
        .keyBy("user")
        .window(sw.SlidingEventTimeWindows.of(timedelta(minutes=3), timedelta(minutes=1)))
        .aggregate(*[a for a, _, _ in AGGREGATES])
    )
    assert pipeline.describe()["operator"].startswith("sliced")
    _compare(_sparkwin(pipeline), _native(history, F.window("ts", "3 minutes", "1 minute")))


def test_windows_of_many_slices_keep_a_running_total_equal_to_sparks_own(spark, history) -> None:
    # 30 slices a window: each key keeps its window's total between firings (two stacks here,
    # subtraction for the counts and long sums below), where 3 slices are merged per window.
    pipeline = (
        _source(history)
        .keyBy("user")
        .window(sw.SlidingEventTimeWindows.of(timedelta(minutes=5), timedelta(seconds=10)))
        .aggregate(*[a for a, _, _ in AGGREGATES])
    )
    assert pipeline.describe()["operator"].startswith("sliced")
    _compare(_sparkwin(pipeline), _native(history, F.window("ts", "5 minutes", "10 seconds")))
    sums = (
        _source(history)
        .keyBy("user")
        .window(sw.SlidingEventTimeWindows.of(timedelta(minutes=5), timedelta(seconds=10)))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"), sw.agg.countIf("flag"))
    )
    ours = {
        (r["user"], r["window_start"]): (r["count"], r["sum_amount"], r["count_if_flag"])
        for r in sums.toDF().collect()
    }
    grouped = history.groupBy(F.window("ts", "5 minutes", "10 seconds").alias("w"), "user").agg(
        F.count(F.lit(1)), F.sum("amount"), F.count_if("flag")
    )
    theirs = {(r["user"], r["w"]["start"]): tuple(r[2:]) for r in grouped.collect()}
    assert ours == theirs and ours


def test_merged_sessions_equal_sparks_session_windows(spark) -> None:
    rows = _rows(1200, seed=9)
    # Sparse users: sessions open, then merge when a row falls between them.
    df = spark.createDataFrame(rows, DDL)
    pipeline = (
        _source(df)
        .keyBy("user")
        .window(sw.EventTimeSessionWindows.withGap(timedelta(seconds=1)))
        .aggregate(*[a for a, _, _ in AGGREGATES])
    )
    assert pipeline.describe()["operator"].startswith("session")
    _compare(_sparkwin(pipeline), _native(df, F.session_window("ts", "1 second")))


def test_a_sample_of_one_is_null_with_and_without_ansi(spark) -> None:
    df = spark.createDataFrame([("a", 3, 2.0, True, "x", 1, BASE)], DDL)
    for ansi in ("true", "false"):
        spark.conf.set("spark.sql.ansi.enabled", ansi)
        try:
            pipeline = (
                _source(df)
                .keyBy("user")
                .window(sw.TumblingEventTimeWindows.of(60_000))
                .aggregate(
                    sw.agg.stddev("amount"), sw.agg.varSamp("amount"), sw.agg.varPop("amount")
                )
            )
            (ours,) = pipeline.toDF().collect()
            (theirs,) = df.agg(
                F.stddev("amount"), F.var_samp("amount"), F.var_pop("amount")
            ).collect()
        finally:
            spark.conf.unset("spark.sql.ansi.enabled")
        assert (
            (ours["stddev_amount"], ours["var_samp_amount"], ours["var_pop_amount"])
            == tuple(theirs)
            == (None, None, 0.0)
        )


TYPES_DDL = (
    "k string, i int, l long, d double, f float, s string, b boolean, day date, t timestamp, "
    "dec decimal(10,2), big decimal(30,4), bin binary, ts timestamp"
)


def _typed(n: int, seed: int) -> list[tuple]:
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        v = rnd.randrange(-(10**6), 10**6)
        out.append(
            (
                "k",
                v,
                v * 1_000_003,
                v / 7.0 if v % 5 else -0.0,
                float(v % 1000) / 3,
                f"value {v} é",
                v % 2 == 0,
                (BASE + timedelta(days=v % 4000)).date(),
                BASE + timedelta(microseconds=v * 997),
                None,
                None,
                str(v).encode(),
                BASE,
            )
        )
    return out


@pytest.mark.parametrize("distinct", [250, 1200, 9000])
def test_approx_count_distinct_hashes_every_type_as_spark(spark, distinct) -> None:
    """Equal to Spark's where Spark counts linearly (few values) or takes the raw estimate
    (beyond 5 * 2^p); in between within the sketch's error of Spark's."""
    from decimal import Decimal

    rows = [
        r[:9] + (Decimal(r[1]) / 100, Decimal(r[2]) / 10000) + r[11:] for r in _typed(distinct, 3)
    ]
    df = spark.createDataFrame(rows, TYPES_DDL)
    columns = ["i", "l", "d", "f", "s", "b", "day", "t", "dec", "big", "bin"]
    pipeline = (
        _source(df)
        .keyBy("k")
        .window(sw.TumblingEventTimeWindows.of(60_000))
        .aggregate(*[sw.agg.approxCountDistinct(c) for c in columns])
    )
    (ours,) = pipeline.toDF().collect()
    (theirs,) = df.agg(*[F.approx_count_distinct(c) for c in columns]).collect()
    exact = df.agg(*[F.count_distinct(c) for c in columns]).collect()[0]
    for i, c in enumerate(columns):
        mine = ours[f"approx_count_distinct_{c}"]
        print(f"{c}: {exact[i]} distinct, sparkwin {mine}, Spark {theirs[i]}")
        if exact[i] <= 300 or exact[i] >= 3500:  # p = 9: linear counting, or the raw estimate
            assert mine == theirs[i], (c, mine, theirs[i], exact[i])
        else:  # two standard deviations of rsd 0.05 from Spark's
            assert abs(mine - theirs[i]) <= 0.1 * exact[i], (c, mine, theirs[i], exact[i])


def test_percentiles_stay_within_the_rank_bound_on_large_windows(spark) -> None:
    rnd = random.Random(4)
    n = 20000
    rows = [("a", rnd.randrange(5000), 0.0, None, None, i, BASE) for i in range(n)]
    df = spark.createDataFrame(rows, DDL).repartition(4)
    pipeline = (
        _source(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(60_000))
        .aggregate(sw.agg.percentileApprox("amount", [0.01, 0.25, 0.5, 0.9, 0.999], accuracy=100))
    )
    (ours,) = pipeline.toDF().collect()
    values = sorted(r[1] for r in rows)
    for q, v in zip([0.01, 0.25, 0.5, 0.9, 0.999], ours["percentile_approx_amount"], strict=True):
        target = max(1, math.ceil(q * n))
        first = next(i for i, x in enumerate(values) if x >= v) + 1
        last = max(i for i, x in enumerate(values) if x <= v) + 1
        error = 0 if first <= target <= last else min(abs(target - first), abs(target - last))
        assert error <= n / 100, (q, v, error)


STREAM_DDL = "user string, amount long, price double, flag boolean, page string, seq long, ts long"


def _streamed(rows: list[tuple]) -> list[dict]:
    names = [c.split()[0] for c in STREAM_DDL.split(", ")]
    out = []
    for r in rows:
        d = dict(zip(names, r, strict=True))
        d["ts"] = int(r[6].timestamp() * 1000)
        out.append(d)
    return out


def test_a_preaggregated_stream_equals_sparks_batch_aggregation(spark, tmp_path: Path) -> None:
    rows = sorted(_rows(2000, seed=11), key=lambda r: r[6])
    events = _streamed(rows)
    batches = [events[i : i + 400] for i in range(0, len(events), 400)]
    batches.append(
        [
            {
                "user": "z",
                "amount": 0,
                "price": 0.0,
                "flag": None,
                "page": None,
                "seq": -2,
                "ts": int((BASE + timedelta(hours=1)).timestamp() * 1000),
            }
        ]
    )

    def build(df: DataFrame) -> sw.Pipeline:
        return (
            sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(60_000))
            .keyBy("user")
            .window(sw.TumblingEventTimeWindows.of(60_000))
            .aggregate(*[a for a, _, _ in AGGREGATES])
        )

    assert build(spark.createDataFrame([], STREAM_DDL)).describe()["operator"].startswith("sliced")
    result = runStream(spark, tmp_path, STREAM_DDL, build, batches)
    assert sum(p["observedMetrics"]["sparkwin"]["droppedLate"] for p in result.progress) == 0
    ours = {
        (r["user"], r["window_start"]): [r[a.outputAlias] for a, _, _ in AGGREGATES]
        for r in result.outputs["main"]
        if r["user"] != "z"
    }
    df = spark.createDataFrame(rows, DDL)
    window = F.window("ts", "1 minute")
    grouped = df.groupBy(window.alias("w"), "user").agg(
        *[_spark(c).alias(f"c{i}") for i, (_, c, _) in enumerate(AGGREGATES)]
    )
    theirs = {
        (r["user"], r["start"]): [r[f"c{i}"] for i in range(len(AGGREGATES))]
        for r in grouped.select("*", F.unix_millis("w.start").alias("start")).collect()
    }
    _compare(ours, theirs)


def test_a_restarted_stream_resumes_every_aggregates_state(spark, tmp_path: Path) -> None:
    """Windows open across the restart: their sketches, summaries and moments come back from
    the checkpoint's state and the results equal an uninterrupted run's, bit for bit."""
    events = _streamed(sorted(_rows(600, seed=13), key=lambda r: r[6]))
    batches = [events[i : i + 100] for i in range(0, len(events), 100)]
    batches.append([{**events[-1], "user": "z", "ts": events[-1]["ts"] + 3_600_000}])

    def build(df: DataFrame) -> sw.Pipeline:
        return (
            sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(60_000))
            .keyBy("user")
            .window(sw.TumblingEventTimeWindows.of(120_000))
            .allowedLateness(1_000)  # the general algorithm: windows' accumulators in state
            .aggregate(*[a for a, _, _ in AGGREGATES])
        )

    whole = runStream(spark, tmp_path / "whole", STREAM_DDL, build, batches)
    first = runStream(spark, tmp_path / "restarted", STREAM_DDL, build, batches[:3])
    second = runStream(spark, tmp_path / "restarted", STREAM_DDL, build, batches[3:], startFile=3)
    restarted = StreamResult.resumed(first, second)
    assert len(whole.outputs["main"]) > 5
    assert canonical(restarted.outputs["main"]) == canonical(whole.outputs["main"])


# ---------------------------------------------------------------------------------------------
# minByAll / maxByAll: every value at the extreme ord, ties kept, against Spark's own answer

TIES = [
    sw.agg.maxByAll("page", "flag"),  # a boolean ord: most of a window ties
    sw.agg.minByAll("entry", "amount"),  # a struct: whole rows
    sw.agg.maxByAll("entry", "amount"),
    sw.agg.maxByAll("page", "flag", limit=2).alias("two_pages"),  # the smallest two of the ties
]


def _withEntry(df: DataFrame) -> DataFrame:
    return df.withColumn("entry", F.struct("page", "amount"))


def _tiesBySpark(df: DataFrame, window: Any, millis: bool = False) -> dict:
    """Each window's values at the extreme ord, from Spark's collect_list and plain Python:
    rows with a null value or ord skipped, the values sorted (None first). Windows by (user,
    start), the start in epoch milliseconds with `millis`."""
    grouped = (
        _withEntry(df)
        .groupBy(window.alias("w"), "user")
        .agg(
            F.collect_list(F.struct("flag", "page")).alias("flags"),
            F.collect_list(F.struct("amount", "entry")).alias("amounts"),
        )
        .withColumn("start", F.unix_millis("w.start") if millis else F.col("w.start"))
    )

    def extreme(pairs: list, pick: Any) -> list:
        kept = [(o, v) for o, v in pairs if o is not None and v is not None]
        if not kept:
            return []
        best = pick(o for o, _ in kept)
        values = [v for o, v in kept if o == best]
        return sorted(
            values, key=lambda v: [(x is not None, x) for x in v] if isinstance(v, tuple) else v
        )

    out = {}
    for r in grouped.collect():
        amounts = [(a, tuple(e)) for a, e in r["amounts"]]
        pages = extreme([tuple(x) for x in r["flags"]], max)
        out[(r["user"], r["start"])] = [
            pages,
            extreme(amounts, min),
            extreme(amounts, max),
            pages[:2],
        ]
    return out


def _plain(v: Any) -> Any:
    """A struct value as a tuple, whether a Row or a stream output's dict."""
    if isinstance(v, dict):
        return tuple(v.values())
    return v if isinstance(v, str) else tuple(v)


def _tiesBySparkwin(rows: list) -> dict:
    return {
        (r["user"], r["window_start"]): [[_plain(v) for v in r[a.outputAlias]] for a in TIES]
        for r in rows
        if r["user"] != "z"
    }


@pytest.mark.parametrize(
    ("kind", "operator"), [("tumbling", "sliced"), ("sliding", "sliced"), ("sessions", "session")]
)
def test_maxByAll_and_minByAll_keep_every_tie_as_spark_finds_them(spark, kind, operator) -> None:
    df = spark.createDataFrame(_rows(1500, seed=21), DDL)
    assigner, window = {
        "tumbling": (sw.TumblingEventTimeWindows.of(60_000), F.window("ts", "1 minute")),
        "sliding": (
            sw.SlidingEventTimeWindows.of(timedelta(minutes=3), timedelta(minutes=1)),
            F.window("ts", "3 minutes", "1 minute"),
        ),
        "sessions": (
            sw.EventTimeSessionWindows.withGap(timedelta(seconds=1)),
            F.session_window("ts", "1 second"),
        ),
    }[kind]
    pipeline = _source(_withEntry(df)).keyBy("user").window(assigner).aggregate(*TIES)
    # Ties kept sorted are blind to order: the fast paths take them.
    assert pipeline.describe()["operator"].startswith(operator)
    ours, theirs = _tiesBySparkwin(pipeline.toDF().collect()), _tiesBySpark(df, window)
    assert ours == theirs and ours
    assert any(len(v[0]) > 1 for v in ours.values())  # ties were there to keep
    schema = pipeline.toDF().schema
    assert schema["max_by_all_entry"].dataType.simpleString() == (
        "array<struct<page:string,amount:bigint>>"
    )


@pytest.mark.parametrize(
    "kept",
    [
        pytest.param(False, id="pre-aggregated"),
        # Spark 3.5 keeps state its own way (one value per key group): every line runs this one.
        pytest.param(True, id="kept-between-batches", marks=pytest.mark.compat),
    ],
)
def test_a_stream_keeps_struct_values_in_state_across_micro_batches(spark, tmp_path, kept) -> None:
    """Structs in state: maxByAll's pre-aggregated partials, or (with collectList, which keeps
    the pipeline from being pre-aggregated) the values windows keep between micro-batches, as
    collectList and maxBy do: a struct used to fail the query when stored."""
    rows = sorted(_rows(900, seed=23), key=lambda r: r[6])
    events = _streamed(rows)
    batches = [events[i : i + 450] for i in range(0, len(events), 450)]
    batches.append([{**events[-1], "user": "z", "ts": events[-1]["ts"] + 3_600_000}])
    others = (sw.agg.collectList("entry"), sw.agg.maxBy("entry", "seq")) if kept else ()

    def build(df: DataFrame) -> sw.Pipeline:
        return (
            sw.stream(
                _withEntry(df),
                "ts",
                watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(60_000),
            )
            .keyBy("user")
            .window(sw.TumblingEventTimeWindows.of(120_000))
            .aggregate(*TIES, *others)
        )

    result = runStream(spark, tmp_path, STREAM_DDL, build, batches)
    df = spark.createDataFrame(rows, DDL)
    ours = _tiesBySparkwin(result.outputs["main"])
    assert ours == _tiesBySpark(df, F.window("ts", "2 minutes"), millis=True) and ours
    if kept:
        entries = {
            (r["user"], r["window_start"]): (
                len(r["collect_list_entry"]),
                _plain(r["max_by_entry"]),
            )
            for r in result.outputs["main"]
            if r["user"] != "z"
        }
        grouped = _withEntry(df).groupBy(F.window("ts", "2 minutes").alias("w"), "user")
        counted = grouped.agg(F.count("entry").alias("n"), F.max_by("entry", "seq").alias("m"))
        expected = {
            (r[0], r[1]): (r[2], tuple(r[3]))
            for r in counted.select("user", F.unix_millis("w.start"), "n", "m").collect()
        }
        assert entries == expected


# ---------------------------------------------------------------------------------------------
# The builder: names, plans, and arguments refused with the parameter and the fix


@pytest.mark.parametrize(
    ("aggregate", "alias", "text", "entry"),
    [
        (sw.agg.stddev("x"), "stddev_x", "agg.stddev('x')", {}),
        (sw.agg.stddevSamp("x"), "stddev_samp_x", "agg.stddevSamp('x')", {}),
        (sw.agg.stddevPop("x"), "stddev_pop_x", "agg.stddevPop('x')", {}),
        (sw.agg.variance("x"), "variance_x", "agg.variance('x')", {}),
        (sw.agg.varSamp("x"), "var_samp_x", "agg.varSamp('x')", {}),
        (sw.agg.varPop("x"), "var_pop_x", "agg.varPop('x')", {}),
        (sw.agg.countIf("ok"), "count_if_ok", "agg.countIf('ok')", {}),
        (sw.agg.minBy("x", "ts"), "min_by_x", "agg.minBy('x', 'ts')", {"ord": "ts"}),
        (sw.agg.maxBy("x", "ts"), "max_by_x", "agg.maxBy('x', 'ts')", {"ord": "ts"}),
        (sw.agg.minByAll("x", "ts"), "min_by_all_x", "agg.minByAll('x', 'ts')", {"ord": "ts"}),
        (sw.agg.maxByAll("x", "ts"), "max_by_all_x", "agg.maxByAll('x', 'ts')", {"ord": "ts"}),
        (
            sw.agg.minByAll("x", "ts", limit=3),
            "min_by_all_x",
            "agg.minByAll('x', 'ts', limit=3)",
            {"ord": "ts", "limit": 3},
        ),
        (
            sw.agg.approxCountDistinct("u"),
            "approx_count_distinct_u",
            "agg.approxCountDistinct('u')",
            {"rsd": 0.05},
        ),
        (
            sw.agg.approxCountDistinct("u", rsd=0.01),
            "approx_count_distinct_u",
            "agg.approxCountDistinct('u', rsd=0.01)",
            {"rsd": 0.01},
        ),
        (
            sw.agg.percentileApprox("x", 0.5),
            "percentile_approx_x",
            "agg.percentileApprox('x', 0.5)",
            {"percentages": [0.5], "array": False, "accuracy": 10000},
        ),
        (
            sw.agg.percentileApprox("x", [0, 1], accuracy=10),
            "percentile_approx_x",
            "agg.percentileApprox('x', [0.0, 1.0], accuracy=10)",
            {"percentages": [0.0, 1.0], "array": True, "accuracy": 10},
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_each_new_aggregate_has_its_alias_repr_and_plan_entry(aggregate, alias, text, entry):
    assert aggregate.outputAlias == alias
    assert repr(aggregate) == text
    assert aggregate.jsonValue() == {
        "fn": aggregate.fn,
        "column": aggregate.column,
        **entry,
        "alias": alias,
    }
    assert hash(aggregate) == hash(aggregate)


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (
            lambda: sw.agg.approxCountDistinct("u", rsd=0.5),
            ValueError,
            r"rsd must be from 0.0022 to 0.39, got 0.5; rsd=0.0022",
        ),
        (lambda: sw.agg.approxCountDistinct("u", rsd=0), ValueError, "rsd must be from"),
        (lambda: sw.agg.approxCountDistinct("u", rsd="0.1"), TypeError, "rsd must be a number"),
        (
            lambda: sw.agg.percentileApprox("x", 1.5),
            ValueError,
            r"percentage must be from 0.0 to 1.0, got 1.5; give a fraction",
        ),
        (lambda: sw.agg.percentileApprox("x", [0.5, -0.1]), ValueError, "percentage must be from"),
        (
            lambda: sw.agg.percentileApprox("x", []),
            ValueError,
            "percentage must not be an empty list",
        ),
        (
            lambda: sw.agg.percentileApprox("x", 0.5, accuracy=0),
            ValueError,
            "accuracy must be from 1",
        ),
        (
            lambda: sw.agg.percentileApprox("x", 0.5, accuracy=1.5),
            TypeError,
            "accuracy must be an int",
        ),
        (
            lambda: sw.agg.minBy("x", 3),
            TypeError,
            r"agg.minBy\(column, ord\): ord must be a column name",
        ),
        (lambda: sw.agg.maxBy(None, "ts"), TypeError, r"agg.maxBy\(column, ord\): column must be"),
        (
            lambda: sw.agg.maxByAll("x", None),
            TypeError,
            r"agg.maxByAll\(column, ord, limit=None\): ord must be a column name",
        ),
        (
            lambda: sw.agg.maxByAll("x", "ts", limit=0),
            ValueError,
            r"agg.maxByAll\(column, ord, limit=None\): limit must be at least 1, got 0; leave",
        ),
        (
            lambda: sw.agg.minByAll("x", "ts", limit=2.0),
            TypeError,
            r"agg.minByAll\(column, ord, limit=None\): limit must be an int or None, got float",
        ),
        (
            lambda: sw.agg.countIf(""),
            ValueError,
            r"agg.countIf\(column\): column must be a non-empty",
        ),
    ],
)
def test_bad_arguments_are_refused_naming_the_parameter(make, error, words) -> None:
    with pytest.raises(error, match=words):
        make()


@pytest.fixture(scope="module")
def windowed(spark):
    df = spark.createDataFrame([], DDL + ", tags array<string>")
    return _source(df).keyBy("user").window(sw.TumblingEventTimeWindows.of(60_000))


@pytest.mark.parametrize(
    ("aggregate", "words"),
    [
        (
            sw.agg.stddev("page"),
            r"agg.stddev\(column\): column 'page' is string, but agg.stddev needs a numeric "
            r"column .*; cast it",
        ),
        (sw.agg.varPop("flag"), "needs a numeric column"),
        (sw.agg.percentileApprox("ts", 0.5), "needs a numeric column"),
        (
            sw.agg.countIf("amount"),
            r"agg.countIf\(column\): column 'amount' is bigint, but agg.countIf needs a boolean "
            r"column; add the condition",
        ),
        (sw.agg.approxCountDistinct("tags"), "needs an atomic column"),
        (
            sw.agg.minBy("page", "tags"),
            r"agg.minBy\(ord\): ord 'tags' is array<string>, but agg.minBy needs an orderable "
            r"column .* for ord",
        ),
        (sw.agg.maxByAll("page", "tags"), r"agg.maxByAll\(ord\): ord 'tags' is array<string>"),
    ],
    ids=repr,
)
def test_a_column_of_the_wrong_type_is_refused_by_python_and_the_jar(
    spark, windowed, aggregate, words
):
    with pytest.raises(TypeError, match=words):
        windowed.aggregate(aggregate)
    # Another client's plan with the same aggregate: the jar applies the same contract rule.
    plan = windowed.aggregate(sw.agg.count()).plan
    plan["function"]["aggregates"] = [aggregate.jsonValue()]
    with pytest.raises(PlanError, match=f"aggregate {aggregate.outputAlias}: {aggregate.fn} needs"):
        with _py4j.translated():
            _py4j.entryPoint(spark).describe(json.dumps(plan), False)


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        (
            {"fn": "approxCountDistinct", "column": "page", "rsd": 0.5, "alias": "a"},
            "rsd must be a number from 0.0022 to 0.39",
        ),
        (
            {
                "fn": "percentileApprox",
                "column": "amount",
                "percentages": [1.5],
                "array": False,
                "accuracy": 100,
                "alias": "p",
            },
            "percentages[0] must be a number from 0",
        ),
        (
            {
                "fn": "percentileApprox",
                "column": "amount",
                "percentages": [0.5],
                "array": False,
                "accuracy": 0,
                "alias": "p",
            },
            "accuracy must be >0",
        ),
    ],
)
def test_out_of_range_arguments_are_refused_by_both_sides_of_the_contract(
    spark, windowed, entry, path
):
    plan = windowed.aggregate(sw.agg.count()).plan
    plan["function"]["aggregates"] = [entry]
    with pytest.raises(PlanSchemaError, match=path.replace("[", r"\[").replace("]", r"\]")):
        validatePlan(plan)
    with pytest.raises(PlanError, match=path.replace("[", r"\[").replace("]", r"\]")):
        with _py4j.translated():
            _py4j.entryPoint(spark).describe(json.dumps(plan), False)


def test_the_output_schema_has_sparks_result_types(windowed) -> None:
    pipeline = windowed.aggregate(
        sw.agg.stddev("amount"),
        sw.agg.countIf("flag"),
        sw.agg.minBy("page", "ts"),
        sw.agg.approxCountDistinct("page"),
        sw.agg.percentileApprox("amount", 0.5),
        sw.agg.percentileApprox("price", [0.5, 0.9]).alias("ps"),
    )
    fields = {f.name: f for f in pipeline.schemas()["main"].fields}
    assert fields["stddev_amount"].dataType.simpleString() == "double"
    assert fields["count_if_flag"].dataType.simpleString() == "bigint"
    assert not fields["count_if_flag"].nullable
    assert fields["min_by_page"].dataType.simpleString() == "string"
    assert fields["approx_count_distinct_page"].dataType.simpleString() == "bigint"
    assert fields["percentile_approx_amount"].dataType.simpleString() == "bigint"
    assert fields["ps"].dataType.simpleString() == "array<double>"


def test_spark_connect_clients_get_the_same_aggregates(spark, connectSpark) -> None:
    rows = _rows(300, seed=21)

    def results(session: Any) -> list:
        pipeline = (
            _source(session.createDataFrame(rows, DDL))
            .keyBy("user")
            .window(sw.TumblingEventTimeWindows.of(120_000))
            .aggregate(*[a for a, _, _ in AGGREGATES])
        )
        names = ["user", "window_start"] + [a.outputAlias for a, _, _ in AGGREGATES]
        return sorted(tuple(r) for r in pipeline.toDF().selectExpr(*names).collect())

    classic = results(spark)
    assert classic and results(connectSpark) == classic
