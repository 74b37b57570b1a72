"""A bounded pipeline's outputs come from one run of the engine: ``toDF()``, the late side output
and ``errors`` filter one kept result, so a backfill's main and late outputs cost one pass over
the data, not one each; ``unpersist()`` releases it. The engine's passes are counted in the JVM
(``PythonEntryPoint.boundedKeysRun``: every key a pass runs through the engine adds one).
"""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import pytest

import sparkwin as sw
from sparkwin._transport import classic as _py4j

SCHEMA = "user string, amount long, ts long"
ROWS = [
    ("a", 1, 1_000),
    ("b", 2, 5_000),
    ("a", 3, 12_000),
    ("a", 4, 15_000),
    ("c", 9, None),  # no timestamp: to errors
    ("b", 5, 25_000),
]
KEYS = 3  # a, b and c each go through the engine once per pass
EXPECTED = [("a", 0, 1), ("a", 10_000, 7), ("b", 0, 2), ("b", 20_000, 5)]


def _pipeline(df) -> sw.Pipeline:
    """Sums per user and 10 s; a backfill that also keeps its late elements."""
    windows = sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forMonotonousTimestamps())
    tumbling = windows.keyBy("user").window(sw.TumblingEventTimeWindows.of(timedelta(seconds=10)))
    return tumbling.sideOutputLateData("late").aggregate(sw.agg.sum("amount").alias("total"))


def _keysRun(spark) -> int:
    return int(_py4j.entryPoint(spark).boundedKeysRun())


def _main(pipeline: sw.Pipeline) -> list[tuple[str, int, int]]:
    rows = pipeline.toDF().selectExpr("user", "unix_millis(window_start) AS s", "total").collect()
    return sorted((r["user"], r["s"], r["total"]) for r in rows)


@pytest.mark.compat
def test_main_late_and_error_outputs_of_a_bounded_pipeline_cost_one_engine_pass(
    spark, session
) -> None:
    pipeline = _pipeline(session.createDataFrame(ROWS, SCHEMA))
    before = _keysRun(spark)
    assert _main(pipeline) == EXPECTED
    assert pipeline.getSideOutput("late").collect() == []
    errors = pipeline.getSideOutput("errors").collect()
    assert [(r["user"], r["amount"]) for r in errors] == [("c", 9)]
    assert _main(pipeline) == EXPECTED  # read again: still the same run
    assert _keysRun(spark) - before == KEYS
    pipeline.unpersist()


@pytest.mark.compat
def test_unpersist_releases_the_result_and_the_next_read_runs_the_engine_again(spark) -> None:
    pipeline = _pipeline(spark.createDataFrame(ROWS, SCHEMA))
    before = _keysRun(spark)
    assert _main(pipeline) == EXPECTED
    assert pipeline.unpersist() is pipeline
    assert pipeline.unpersist() is pipeline  # nothing kept: a no-op
    assert _main(pipeline) == EXPECTED
    assert pipeline.getSideOutput("errors").count() == 1
    assert _keysRun(spark) - before == 2 * KEYS
    pipeline.unpersist()


def test_a_plan_changed_by_hand_is_run_again_not_read_from_the_old_result(spark) -> None:
    pipeline = _pipeline(spark.createDataFrame(ROWS, SCHEMA))
    assert _main(pipeline) == EXPECTED
    pipeline.plan = {**pipeline.plan, "assigner": {**pipeline.plan["assigner"], "sizeMs": 100_000}}
    assert _main(pipeline) == [("a", 0, 8), ("b", 0, 7)]
    pipeline.unpersist()


def test_a_process_pipeline_shares_the_run_with_its_side_outputs(spark) -> None:
    def count(key, window, pdf):
        return pd.DataFrame({"user": [key[0]], "n": [len(pdf)]})

    pipeline = (
        sw.stream(spark.createDataFrame(ROWS, SCHEMA), "ts")
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .process(count, "user string, n long")
    )
    before = _keysRun(spark)
    assert sorted(tuple(r) for r in pipeline.toDF().collect()) == [
        ("a", 1),
        ("a", 2),
        ("b", 1),
        ("b", 1),
    ]
    assert pipeline.getSideOutput("errors").count() == 1
    assert _keysRun(spark) - before == KEYS
    pipeline.unpersist()
