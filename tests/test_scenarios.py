"""The engine transcripts of tests/scenarios/*.json, through the Python harness.

The same files run in the JVM (``ScenarioSuite``) without Python: one place for the scenarios
both sides used to write out. Here each scenario's builder must still make its stored plan (so
the plan the JVM runs is the one the API builds), then its steps drive a ``WindowHarness``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import sparkwin as sw
from sparkwin.testing import WindowHarness

HERE = Path(__file__).resolve().parent / "scenarios"


def _scenarios() -> list[Any]:
    out = []
    for path in sorted(HERE.glob("*.json")):
        doc = json.loads(path.read_text())
        for scenario in doc["scenarios"]:
            out.append(pytest.param(doc["schema"], scenario, id=f"{path.stem}: {scenario['name']}"))
    return out


def build(spark, df, scenario: dict) -> sw.Pipeline:
    """The scenario's pipeline, built under its ANSI mode (``"ansi"``, default true)."""
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", str(scenario.get("ansi", True)).lower())
    try:
        return eval(scenario["builder"], {"sw": sw, "df": df})  # noqa: S307
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def _project(rows: list[dict], expected: list[dict]) -> list[dict]:
    """Each row cut down to the columns its expected counterpart names."""
    names = {k for e in expected for k in e}
    return [{k: v for k, v in r.items() if k in names} for r in rows]


def _unordered(rows: list[dict]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


@pytest.mark.parametrize(("schema", "scenario"), _scenarios())
def test_scenario(spark, schema: str, scenario: dict) -> None:
    df = spark.createDataFrame([], schema)
    pipeline = build(spark, df, scenario)
    assert json.loads(pipeline.planJson()) == scenario["plan"], (
        "the builder no longer makes the stored plan: run tests/scenarios/update_plans.py"
    )
    h = WindowHarness(pipeline, channels=scenario.get("channels", 1))
    for i, (kind, *args) in enumerate(scenario["steps"]):
        where = f"step {i} {kind}"
        if kind == "element":
            h.processElement(args[0], *args[1:])
        elif kind == "watermark":
            h.processWatermark(args[0], *args[1:])
        elif kind == "idle":
            h.markIdle(args[0])
        elif kind == "active":
            h.markActive(args[0])
        elif kind == "processingTime":
            h.setProcessingTime(args[0])
        elif kind == "endOfInput":
            h.endOfInput()
        elif kind in ("output", "outputInOrder"):
            got = _project(h.extractOutput(), args[0])
            if kind == "output":
                assert _unordered(got) == _unordered(args[0]), where
            else:
                assert got == args[0], where
        elif kind == "errors":
            got = _project(h.extractSideOutput("errors"), args[0])
            assert _unordered(got) == _unordered(args[0]), where
        elif kind == "late":
            assert _unordered(h.extractSideOutput("late")) == _unordered(args[0]), where
        elif kind == "state":
            assert h.numStateEntries() == args[0], where
        elif kind == "metrics":
            metrics = h.metrics()
            assert {k: metrics[k] for k in args[0]} == args[0], where
        elif kind == "dropped":
            assert h.numLateRecordsDropped() == args[0], where
        elif kind == "currentWatermark":
            assert h.currentWatermark() == args[0], where
        elif kind == "channels":
            assert _project(h.channelStatus(), args[0]) == args[0], where
        else:
            raise AssertionError(f"{where}: unknown step")
