"""Your own trigger, window assigner, evictor and aggregate, written in Java or Scala against
the jar's ``sparkwin.api`` interfaces and named here by class: ``sw.jvm.trigger(...)``,
``sw.jvm.assigner(...)``, ``sw.jvm.evictor(...)``, ``sw.jvm.aggregate(...)``.

The values here only name a class and its params (a dict of names to strings, numbers and
booleans); whether the class exists, is of the right kind and takes those params is the JVM's
to say. The builder asks it (``checkPlan``) when the pipeline is built, so a bad name or param
fails there, before a query starts, with the JVM's message (``sparkwin.errors.PlanError``).
``addJar`` puts your jar on a running session. Nothing here runs per event.
docs/concepts/extending.md is the guide.

Example::

    import sparkwin as sw
    sw.jvm.addJar("extending.jar")
    pipeline = (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(1_000))
        .keyBy("user")
        .window(sw.jvm.assigner("com.example.sparkwin.ZonedDayWindows", {"zone": "Europe/Berlin"}))
        .trigger(sw.jvm.trigger("com.example.sparkwin.CountOrEndTrigger", {"n": 3}))
        .aggregate(sw.agg.count())
    )
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pyspark.sql import DataFrame, SparkSession

from sparkwin import _transport as transport
from sparkwin._plan.contract import PLAN_VERSION
from sparkwin._spark import runtime as _runtime
from sparkwin._transport.classic import activeSession
from sparkwin.agg import Aggregate
from sparkwin.assigners import WindowAssigner
from sparkwin.errors import JarNotFoundError
from sparkwin.evictors import Evictor
from sparkwin.triggers import Trigger

__all__ = [
    "JvmAggregate",
    "JvmAssigner",
    "JvmEvictor",
    "JvmTrigger",
    "addJar",
    "aggregate",
    "assigner",
    "evictor",
    "trigger",
]

# A Java binary name: package parts and the class, a nested class after '$'.
_CLASS_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")

Params = tuple[tuple[str, Any], ...]

# The function of a plan built only to have the JVM check a user's trigger or evictor.
PROBE_FUNCTION: dict[str, Any] = {
    "kind": "aggregate",
    "aggregates": [{"fn": "count", "alias": "__sw_probe"}],
}


def _className(value: object, factory: str) -> str:
    if not isinstance(value, str):
        raise TypeError(
            f"{factory}: className must be the class's full name (str), e.g. "
            f"'com.acme.MyTrigger', got {type(value).__name__} {value!r}"
        )
    if not _CLASS_NAME.fullmatch(value):
        raise ValueError(
            f"{factory}: className {value!r} is not a Java class name; write it with its package, "
            "e.g. 'com.acme.MyTrigger' (a nested class as 'com.acme.Outer$Inner')"
        )
    return value


def _params(value: object, factory: str) -> Params:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{factory}: params must be a dict of names to strings, numbers or booleans, e.g. "
            f"{{'n': 3}}, got {type(value).__name__} {value!r}"
        )
    out = []
    for name, v in value.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"{factory}: params names must be non-empty strings, got {name!r}")
        finite = not isinstance(v, float) or v == v and v not in (float("inf"), float("-inf"))
        if not isinstance(v, str | int | float | bool) or not finite:
            raise TypeError(
                f"{factory}: params[{name!r}] must be a string, a number or a boolean, got "
                f"{type(v).__name__} {v!r}"
            )
        out.append((name, v))
    return tuple(out)


class _ByClass:
    """What a trigger, an assigner and an evictor named by class share: their plan fragment and
    their repr, the call that made them.
    """

    className: str
    params: Params
    _factory: ClassVar[str]

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "jvm", "className": self.className, "params": dict(self.params)}

    def __repr__(self) -> str:
        params = f", {dict(self.params)!r}" if self.params else ""
        return f"jvm.{self._factory}({self.className!r}{params})"


@dataclass(frozen=True, repr=False)
class JvmTrigger(_ByClass, Trigger):
    """A trigger of your own (``sparkwin.api.Trigger``), by class name and params."""

    className: str
    params: Params = ()
    _factory: ClassVar[str] = "trigger"

    @property
    def canMerge(self) -> bool:
        """Whether it can run on session windows is the class's to say: the JVM refuses it there
        when the pipeline is built if it cannot.

        Example::

            sw.jvm.trigger("com.acme.MyTrigger").canMerge  # True: the JVM decides
        """
        return True


@dataclass(frozen=True, repr=False)
class JvmAssigner(_ByClass, WindowAssigner):
    """A window assigner of your own (``sparkwin.api.WindowAssigner``), by class name and
    params. Whether it works in event time is the class's to say: ``window()`` asks the JVM.
    """

    className: str
    params: Params = ()
    # The class's answer, once window() or windowAll() asked the JVM.
    eventTime: bool | None = None
    _factory: ClassVar[str] = "assigner"

    @property
    def isEventTime(self) -> bool:
        """The class's ``isEventTime()``, known once the assigner went through ``window()``.

        Example::

            windowed.assigner.isEventTime  # True
        """
        if self.eventTime is None:
            raise ValueError(
                f"{self!r}: whether it works in event time is known once the JVM was asked; "
                "pass it to keyBy(...).window() or windowAll() first"
            )
        return self.eventTime


@dataclass(frozen=True, repr=False)
class JvmEvictor(_ByClass, Evictor):
    """An evictor of your own (``sparkwin.api.Evictor``), by class name and params."""

    className: str
    params: Params = ()
    _factory: ClassVar[str] = "evictor"


@dataclass(frozen=True, repr=False)
class JvmAggregate(Aggregate):
    """An aggregate of your own (``sparkwin.api.Aggregate``) over `columns`, by class name and
    params; its result type is the class's ``resultType()``.
    """

    className: str = ""
    columns: tuple[str, ...] = ()
    params: Params = ()

    @property
    def defaultAlias(self) -> str:
        """The class's simple name in snake case, then the columns: ``weighted_mean_price_qty``.

        Example::

            sw.jvm.aggregate("com.acme.WeightedMean", ["price", "qty"]).defaultAlias
        """
        return _defaultAlias(self.className, self.columns)

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        where = () if self.where is None else (("filter", self.where),)
        return tuple((f"columns[{i}]", c) for i, c in enumerate(self.columns)) + where

    def acceptsType(self, dataType: Any, param: str = "column") -> bool:
        """Any type but for a filter (boolean): the class checks its columns' types when the
        JVM builds it."""
        return param != "filter" or super().acceptsType(dataType, param)

    def jsonValue(self) -> dict[str, Any]:
        return {
            "fn": "jvm",
            "className": self.className,
            "columns": list(self.columns),
            "params": dict(self.params),
            **({} if self.where is None else {"filter": self.where}),
            "alias": self.outputAlias,
        }

    def __repr__(self) -> str:
        args = [repr(self.className), repr(list(self.columns))]
        if self.params:
            args.append(repr(dict(self.params)))
        if self.where is not None:
            args.append(f"filter={self._shown(self.where)}")
        text = f"jvm.aggregate({', '.join(args)})"
        if self.outputAlias != self.defaultAlias:
            text += f".alias({self.outputAlias!r})"
        return text


def _defaultAlias(className: str, columns: tuple[str, ...]) -> str:
    simple = re.split(r"[.$]", className)[-1]
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", simple).lower()
    return "_".join([snake, *columns])


def trigger(className: str, params: Mapping[str, Any] | None = None) -> JvmTrigger:
    """Your trigger class (implementing ``sparkwin.api.Trigger``), built with `params`.

    Example::

        windowed.trigger(sw.jvm.trigger("com.example.sparkwin.CountOrEndTrigger", {"n": 3}))
    """
    return JvmTrigger(_className(className, "jvm.trigger"), _params(params, "jvm.trigger"))


def assigner(className: str, params: Mapping[str, Any] | None = None) -> JvmAssigner:
    """Your window assigner class (implementing ``sparkwin.api.WindowAssigner``), built with
    `params`.

    Example::

        keyed.window(sw.jvm.assigner("com.example.sparkwin.ZonedDayWindows",
                                     {"zone": "Europe/Berlin"}))
    """
    return JvmAssigner(_className(className, "jvm.assigner"), _params(params, "jvm.assigner"))


def evictor(className: str, params: Mapping[str, Any] | None = None) -> JvmEvictor:
    """Your evictor class (implementing ``sparkwin.api.Evictor``), built with `params`.

    Example::

        windowed.evictor(sw.jvm.evictor("com.example.sparkwin.KeepLargestEvictor",
                                        {"column": "amount", "k": 2}))
    """
    return JvmEvictor(_className(className, "jvm.evictor"), _params(params, "jvm.evictor"))


def aggregate(
    className: str,
    columns: str | Sequence[str] = (),
    params: Mapping[str, Any] | None = None,
) -> JvmAggregate:
    """Your aggregate class (implementing ``sparkwin.api.Aggregate``) over `columns` (a column
    name or a list of them, handed to the class in this order), built with `params`.

    Example::

        windowed.aggregate(
            sw.jvm.aggregate("com.example.sparkwin.WeightedMean", ["price", "qty"]).alias("vwap"))
    """
    name = _className(className, "jvm.aggregate")
    names = (columns,) if isinstance(columns, str) else columns
    if not isinstance(names, Sequence) or not all(isinstance(c, str) and c for c in names):
        raise TypeError(
            "jvm.aggregate: columns must be a column name or a list of them, e.g. "
            f"['price', 'qty'], got {columns!r}"
        )
    cols = tuple(names)
    return JvmAggregate(
        "jvm",
        None,
        _defaultAlias(name, cols),
        className=name,
        columns=cols,
        params=_params(params, "jvm.aggregate"),
    )


# ---------------------------------------------------------------------------------------------
# Asking the JVM


def namesClasses(fragment: Any) -> bool:
    """Whether a plan (or part of one) names a class of the user's (a ``jvm`` kind).

    Example::

        namesClasses(pipeline.plan)  # True
    """
    if isinstance(fragment, dict):
        if fragment.get("kind") == "jvm" or fragment.get("fn") == "jvm":
            return True
        return any(namesClasses(v) for v in fragment.values())
    if isinstance(fragment, list):
        return any(namesClasses(v) for v in fragment)
    return False


def checkPlan(df: DataFrame, plan: dict[str, Any]) -> dict[str, Any] | None:
    """Has the JVM decode `plan` if it names a class of the user's: the JVM loads and builds
    each one, and raises ``PlanError`` naming the class, the param and the fix. Returns the
    JVM's description of the plan (None when there was nothing to ask).

    Example::

        checkPlan(df, plan)
    """
    if not namesClasses(plan):
        return None
    return _runtime.describe(df.sparkSession, json.dumps(plan))


def resolvedAssigner(df: DataFrame, timestamp: str | None, chosen: JvmAssigner) -> JvmAssigner:
    """`chosen` with the class's own answer to whether it works in event time, from the JVM
    (which builds it from its params, or raises ``PlanError``).

    Example::

        resolvedAssigner(df, "ts", sw.jvm.assigner("com.acme.Weekly")).isEventTime
    """
    probe = {
        "planVersion": PLAN_VERSION,
        "inputSchema": df.schema.jsonValue(),
        "timestamp": timestamp,
        "keys": [],
        "assigner": chosen.jsonValue(),
        "allowedLatenessMs": 0,
        "accumulationMode": "accumulating",
        "function": PROBE_FUNCTION,
    }
    described = checkPlan(df, probe)
    assert described is not None
    return replace(chosen, eventTime=bool(described["assigner"]["eventTime"]))


def addJar(path: str | os.PathLike[str], spark: SparkSession | None = None) -> None:
    """Puts a jar of your extensions on a running session: the driver loads its classes at once
    and the executors fetch it before their next task (``SparkContext.addJar``). A session
    started with the jar in ``spark.jars`` (or ``--jars``) needs no call.

    Example::

        sw.jvm.addJar("target/my-triggers.jar")
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be the jar's path (str), got {type(path).__name__} {path!r}")
    jar = os.path.abspath(os.fspath(path))
    if not os.path.isfile(jar):
        raise ValueError(f"path: no file {jar}; build the jar first, or check the path")
    if not transport.of(activeSession(spark)).addJar(jar):
        raise JarNotFoundError(
            f"this session's driver cannot take {jar} at run time (its class loader is not "
            "Spark's); start the session with the jar in spark.jars, e.g. "
            f"sparkwin.session(**{{'spark.jars': {jar!r}}})"
        )
