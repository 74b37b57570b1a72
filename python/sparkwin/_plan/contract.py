"""The Python side of the one contract with the jar: ``contract.json``, read from the package.

It defines the plan's schema, the kinds and columns of the rows the jar's union output holds,
and the counters it reports. The jar reads the same file from its resources; ``check`` (and a
test) compares the two. This module only reads and validates; it imports nothing of sparkwin.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

CONTRACT: dict[str, Any] = json.loads(
    resources.files("sparkwin").joinpath("contract.json").read_text(encoding="utf-8")
)

PLAN_VERSION: int = CONTRACT["plan"]["version"]

_OUTPUT = CONTRACT["output"]
KIND: str = _OUTPUT["kindColumn"]
ROW_KINDS: dict[str, int] = dict(_OUTPUT["kinds"])
RESULT, LATE, ERROR, PANE, METRICS = (
    ROW_KINDS[k] for k in ("result", "late", "error", "pane", "metrics")
)
WINDOW_COLUMNS: tuple[str, ...] = tuple(_OUTPUT["windowColumns"])
# A result's event time (its window's largest timestamp), marked with the metadata: a pipeline
# reading it inherits the upstream watermark.
EVENT_TIME_COLUMN: str = _OUTPUT["eventTimeColumn"]
EVENT_TIME_METADATA: str = _OUTPUT["eventTimeMetadata"]
PANE_COLUMNS: tuple[str, ...] = tuple(_OUTPUT["paneColumns"])
# Columns every aggregate pipeline's output has besides keys and aggregates (docs/plan.md).
OUTPUT_COLUMNS: tuple[str, ...] = WINDOW_COLUMNS + PANE_COLUMNS
PANE_SEQ: str = _OUTPUT["paneSeqColumn"]
FIRED_AT: str = _OUTPUT["firedAtColumn"]
ERROR_COLUMN: str = _OUTPUT["errorColumn"]
ERRORS_TAG: str = _OUTPUT["errorsTag"]


def kindOf(tag: str, process: bool = False) -> int:
    """The row kind of the union that holds an output: ``main`` (a ``process()`` pipeline's
    main output is made of its pane rows), ``errors``, or else the late tag."""
    if tag == "main":
        return PANE if process else RESULT
    return ERROR if tag == ERRORS_TAG else LATE


_METRICS = CONTRACT["metrics"]
OBSERVE_NAME: str = _METRICS["observeName"]
ROW_COUNTERS: dict[str, int] = {n: ROW_KINDS[k] for n, k in _METRICS["rowCounters"].items()}
METRIC_NAMES: tuple[str, ...] = tuple(_METRICS["engineCounters"])
# With channel=: the watermark and each channel's (id, watermark, idle), per micro-batch.
CHANNEL_METRICS: tuple[str, ...] = (
    _METRICS["channelFields"]["watermark"],
    _METRICS["channelFields"]["channels"],
)

# JVM exception classes and the names of the sparkwin.errors classes they become.
JVM_ERRORS: dict[str, str] = dict(CONTRACT["errors"])

# What the harness says became of an element, as the engine decided it.
ELEMENT_FATES: tuple[str, ...] = tuple(CONTRACT["harness"]["elementFates"])

# The Spark Connect message (_transport.connect.message writes it, the jar's plugin reads it):
# its type URL, each field's (number, type) and the operations a client may ask for.
_CONNECT = CONTRACT["connect"]
CONNECT_TYPE_URL: str = _CONNECT["typeUrl"]
CONNECT_FIELDS: dict[str, tuple[int, str]] = {
    name: (f["number"], f["type"]) for name, f in _CONNECT["fields"].items()
}
CONNECT_OPERATIONS: tuple[str, ...] = tuple(_CONNECT["operations"])


def listLimit(section: str, kind: str, field: str) -> tuple[int, int | None]:
    """The (min, max) number of items a list field of the plan takes (max None: no limit).

    Example::

        listLimit("trigger", "afterAll", "triggers")  # (2, 62)
    """
    spec = CONTRACT["plan"]["sections"][section]["kinds"][kind][field]
    match = _LIST.fullmatch(spec.rstrip("?"))
    if match is None:
        raise KeyError(f"{section}.{kind}.{field} is not a list")
    return _bounds(match.group(2))


def numberRange(section: str, kind: str, field: str) -> tuple[float, float]:
    """The (low, high) bounds, both included, of a number field of the plan (``double(lo..hi)``,
    or a list of them).

    Example::

        numberRange("aggregate", "percentileApprox", "percentages")  # (0.0, 1.0)
    """
    spec = CONTRACT["plan"]["sections"][section]["kinds"][kind][field].rstrip("?")
    listMatch = _LIST.fullmatch(spec)
    match = _RANGE.fullmatch(listMatch.group(1) if listMatch else spec)
    if match is None:
        raise KeyError(f"{section}.{kind}.{field} is not a number range")
    return float(match.group(1)), float(match.group(2))


# ---------------------------------------------------------------------------------------------
# Plan validation: the same schema the jar checks plans against.

_LIST = re.compile(r"(.+)\[(\d*(?:\.\.\d*)?)\]")
_RANGE = re.compile(r"double\((.+?)\.\.(.+)\)")


def _bounds(text: str) -> tuple[int, int | None]:
    if not text:
        return 0, None
    low, _, high = text.partition("..")
    if not _:
        return int(low), int(low)
    return int(low or 0), (int(high) if high else None)


class PlanSchemaError(ValueError):
    """A plan that does not follow the contract (a bug in the builder, not in the user's code)."""


def validatePlan(plan: dict[str, Any]) -> None:
    """Raises PlanSchemaError, naming the path, if `plan` does not follow the contract.

    Example::

        validatePlan(pipeline.plan)
    """
    _object(plan, CONTRACT["plan"]["root"], "plan")


def _object(value: Any, fields: dict[str, str], path: str, skip: str | None = None) -> None:
    if not isinstance(value, dict):
        raise PlanSchemaError(f"{path} must be an object, got {value!r}")
    unknown = sorted(set(value) - set(fields) - ({skip} if skip else set()))
    if unknown:
        raise PlanSchemaError(f"{path} has fields the contract does not know: {unknown}")
    for name, spec in fields.items():
        _value(value.get(name), spec, f"{path}.{name}")


def _value(value: Any, spec: str, path: str) -> None:
    if spec.endswith("?"):
        if value is None:
            return
        spec = spec[:-1]
    if value is None:
        raise PlanSchemaError(f"{path} is required")
    listMatch = _LIST.fullmatch(spec)
    if listMatch:
        if not isinstance(value, list):
            raise PlanSchemaError(f"{path} must be a list, got {value!r}")
        low, high = _bounds(listMatch.group(2))
        if len(value) < low or (high is not None and len(value) > high):
            raise PlanSchemaError(f"{path} must have {listMatch.group(2)} items, got {len(value)}")
        for i, item in enumerate(value):
            _value(item, listMatch.group(1), f"{path}[{i}]")
        return
    if spec.startswith("@"):
        _section(value, spec[1:], path)
    elif spec in ("int", "long", "long>=0", "long>0"):
        if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
            raise PlanSchemaError(f"{path} must be a long, got {value!r}")
        if (spec == "long>=0" and value < 0) or (spec == "long>0" and value <= 0):
            raise PlanSchemaError(f"{path} must be {spec[4:]}, got {value}")
    elif spec == "double":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise PlanSchemaError(f"{path} must be a number, got {value!r}")
    elif (rangeMatch := _RANGE.fullmatch(spec)) is not None:
        least, most = float(rangeMatch.group(1)), float(rangeMatch.group(2))
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not least <= value <= most
        ):
            raise PlanSchemaError(
                f"{path} must be a number from {least:g} to {most:g}, got {value!r}"
            )
    elif spec == "bool":
        if not isinstance(value, bool):
            raise PlanSchemaError(f"{path} must be true or false, got {value!r}")
    elif spec in ("string", "column"):
        if not isinstance(value, str) or not value:
            raise PlanSchemaError(f"{path} must be a non-empty string, got {value!r}")
    elif spec == "schema":
        if not isinstance(value, dict) or value.get("type") != "struct":
            raise PlanSchemaError(f"{path} must be a struct schema, got {value!r}")
    elif spec == "params":
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and k and isinstance(v, str | int | float | bool)
            for k, v in value.items()
        ):
            raise PlanSchemaError(
                f"{path} must map names to strings, numbers or booleans, got {value!r}"
            )
    elif "|" in spec:
        if value not in spec.split("|"):
            raise PlanSchemaError(f"{path} must be one of {spec.split('|')}, got {value!r}")
    else:  # pragma: no cover - a contract this module does not understand
        raise PlanSchemaError(f"{path}: unknown type {spec!r} in contract.json")


def _section(value: Any, name: str, path: str) -> None:
    section = CONTRACT["plan"]["sections"][name]
    if not isinstance(value, dict):
        raise PlanSchemaError(f"{path} must be an object, got {value!r}")
    tag = section["tag"]
    if tag == "onlyKey":
        if len(value) != 1 or next(iter(value)) not in section["kinds"]:
            raise PlanSchemaError(
                f"{path} must have one of {sorted(section['kinds'])}, got {value!r}"
            )
        kind = next(iter(value))
        _object(value, section["kinds"][kind], path)
        return
    kind = value.get(tag)
    if kind not in section["kinds"]:
        raise PlanSchemaError(
            f"{path}.{tag} must be one of {sorted(section['kinds'])}, got {kind!r}"
        )
    _object(value, section["kinds"][kind], f"{path}({kind})", skip=tag)
