"""The one contract between the Python package and the jar (``contract.json``), and the
package's own shape: no module imports itself back through others."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import sparkwin as sw
from sparkwin._plan import contract as _contract
from sparkwin._plan.contract import PlanSchemaError, validatePlan
from sparkwin._spark import runtime as _runtime
from sparkwin._transport import classic as _py4j
from sparkwin.errors import PlanError

PACKAGE = Path(sw.__file__).resolve().parent


def test_the_jar_carries_the_packages_contract(spark) -> None:
    jar = json.loads(str(_py4j.entryPoint(spark).contract()))
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
        with _py4j.translated():
            _py4j.entryPoint(spark).describe(json.dumps(plan), False)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.update(channels=["0"]), "channels: declares the values of the channel column"),
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
        with _py4j.translated():
            _py4j.entryPoint(spark).describe(json.dumps(plan), False)


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


# ---------------------------------------------------------------------------------------------
# The Spark Connect message: one definition (contract.json's connect), read by both sides.

PROTO = PACKAGE.parents[1] / "jvm/src/main/protobuf/sparkwin_connect.proto"
_PROTO_TYPES = {"string": "string", "bool": "bool", "spark.connect.Relation": "relation"}


def test_the_proto_file_for_readers_is_the_contracts_message() -> None:
    text = PROTO.read_text()
    package = re.search(r"^package ([\w.]+);", text, re.M)
    message = re.search(r"^message (\w+) \{(.*?)^\}", text, re.M | re.S)
    assert package is not None and message is not None
    connect = _contract.CONTRACT["connect"]
    assert connect["typeUrl"] == f"type.googleapis.com/{package.group(1)}.{message.group(1)}"
    fields = {
        name: {"number": int(number), "type": _PROTO_TYPES[kind]}
        for kind, name, number in re.findall(r"^\s+([\w.]+) (\w+) = (\d+);", message.group(2), re.M)
    }
    assert fields == connect["fields"]
    for operation in connect["operations"]:
        assert f'"{operation}"' in message.group(2)


def test_python_writes_the_contracts_message_as_protobuf_would() -> None:
    """Every field of the contract, through protobuf's own encoder with the message built at run
    time from contract.json (a relation's wire format is its bytes')."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    from sparkwin._transport.connect import message as _connect_plan

    field = descriptor_pb2.FieldDescriptorProto
    types = {"string": field.TYPE_STRING, "relation": field.TYPE_BYTES, "bool": field.TYPE_BOOL}
    fileProto = descriptor_pb2.FileDescriptorProto(name="c.proto", package="c", syntax="proto3")
    message = fileProto.message_type.add(name="SparkwinRelation")
    for name, (number, kind) in _contract.CONNECT_FIELDS.items():
        message.field.add(name=name, number=number, type=types[kind], label=field.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fileProto)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("c.SparkwinRelation"))
    plan = json.dumps({"keys": ["ü" * 100]})
    arguments = json.dumps({"checkpoint": "/chk/ü", "batchId": 3})
    expected = cls(
        operation="validate",
        plan_json=plan,
        input=b"\x01\x02",
        streaming=True,
        arguments_json=arguments,
    )
    got = _connect_plan.encode(
        _connect_plan.VALIDATE, plan, b"\x01\x02", streaming=True, argumentsJson=arguments
    )
    assert got == expected.SerializeToString()
    assert _connect_plan.TYPE_URL == _contract.CONNECT_TYPE_URL
    assert {
        _connect_plan.WINDOWED,
        _connect_plan.DESCRIBE,
        _connect_plan.VERSION,
        _connect_plan.VALIDATE,
        _connect_plan.STATE_READ,
        _connect_plan.STATE_BATCH,
    } == set(_contract.CONNECT_OPERATIONS)


def test_the_harness_says_the_contracts_fates() -> None:
    from sparkwin import testing

    assert _contract.ELEMENT_FATES == ("accepted", "late", "dropped", "error")
    assert all(f'"{fate}"' in (testing.Step.__doc__ or "") for fate in _contract.ELEMENT_FATES)
