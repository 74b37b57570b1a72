"""The one contract between the Python package and the jar (``contract.json``), and the
package's own shape: no module imports itself back through others."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import sparkwin as sw
from sparkwin import _contract, _jvm, _runtime
from sparkwin._contract import PlanSchemaError, validatePlan
from sparkwin.errors import PlanError

PACKAGE = Path(sw.__file__).resolve().parent


def test_the_jar_carries_the_packages_contract(spark) -> None:
    jar = json.loads(str(_jvm.entryPoint(spark).contract()))
    assert jar == _contract.CONTRACT


def test_the_union_the_jar_builds_has_the_contracts_kinds_columns_and_counters(spark) -> None:
    df = spark.createDataFrame([], "user string, amount long, ts long")
    pipeline = (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10))
        .aggregate(sw.agg.sum("amount"))
    )
    union = _runtime.describe(spark, pipeline.planJson())["union"]
    assert union.fieldNames() == _contract.CONTRACT["output"]["unionColumns"]
    assert union["metrics"].dataType.fieldNames() == list(_contract.METRIC_NAMES)
    result = union["result"].dataType.fieldNames()
    assert result == ["user", *_contract.WINDOW_COLUMNS, "sum_amount", *_contract.PANE_COLUMNS]


def _plan(spark) -> dict:
    df = spark.createDataFrame([], "user string, amount long, ts long")
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("user")
        .window(sw.GlobalWindows.create())
        .trigger(sw.AfterAll.of(sw.AfterPane.elementCountAtLeast(2), sw.CountTrigger.of(3)))
        .aggregate(sw.agg.count())
        .plan
    )


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda p: p.update(surprise=1), "plan has fields the contract does not know"),
        (
            lambda p: p["trigger"]["triggers"][0].update(count=0),
            "plan.trigger(afterAll).triggers[0]",
        ),
        (
            lambda p: p["trigger"].update(triggers=p["trigger"]["triggers"][:1]),
            "triggers must have",
        ),
        (lambda p: p["assigner"].update(kind="hopping"), "plan.assigner.kind must be one of"),
        (lambda p: p.update(allowedLatenessMs=-1), "plan.allowedLatenessMs must be >=0"),
    ],
)
def test_a_plan_off_the_contract_is_refused_by_both_sides_naming_the_path(spark, change, path):
    plan = _plan(spark)
    validatePlan(plan)  # the builder's plan follows the contract
    change(plan)
    with pytest.raises(PlanSchemaError, match=re.escape(path)):
        validatePlan(plan)
    with pytest.raises(PlanError, match=re.escape(path)):
        with _jvm.translated():
            _jvm.entryPoint(spark).describe(json.dumps(plan), False)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.update(channels=["0"]), "channels are declared values of the channel column"),
        (
            lambda p: p.update(channel="user", channels=["a", "b", "a"]),
            "channels declared twice: a",
        ),
    ],
)
def test_declared_channels_the_jar_cannot_use_are_refused(spark, change, message):
    """The builder never writes these; another client's plan gets the jar's own check."""
    plan = _plan(spark)
    change(plan)
    validatePlan(plan)  # on the contract: the decoder is what refuses them
    with pytest.raises(PlanError, match=message):
        with _jvm.translated():
            _jvm.entryPoint(spark).describe(json.dumps(plan), False)


def test_afterall_takes_as_many_triggers_as_the_contract_allows() -> None:
    low, high = _contract.listLimit("trigger", "afterAll", "triggers")
    many = [sw.AfterPane.elementCountAtLeast(1)] * (high + 1)
    sw.AfterAll.of(*many[:high])
    with pytest.raises(ValueError, match=f"at most {high}"):
        sw.AfterAll.of(*many)
    assert low == 2


def _imports() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(("sparkwin", *parts)).removesuffix(".__init__")
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sparkwin"):
                if node.module == "sparkwin":
                    deps.update(f"sparkwin.{a.name}" for a in node.names)
                else:
                    deps.add(node.module)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("sparkwin"))
        graph[name] = deps - {name}
    return graph


def test_no_module_of_the_package_imports_itself_back() -> None:
    """Every import counts, in functions and under TYPE_CHECKING too; only the package's
    ``__init__`` (which re-exports the API) may import everything."""
    graph = _imports()
    graph["sparkwin"] = set()
    cycles = []
    for start in graph:
        seen, stack = set(), list(graph[start])
        while stack:
            module = stack.pop()
            if module == start:
                cycles.append(start)
                break
            if module not in seen:
                seen.add(module)
                stack.extend(graph.get(module, ()))
    assert cycles == []
