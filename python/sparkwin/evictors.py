"""Evictors: which elements of a fired window are dropped before (or after) the window function
runs. Flink's three built-ins, as immutable values that turn into the EVICTOR part of the plan.

An evictor makes the engine keep a window's elements instead of running aggregates; that is its
cost. Nothing here runs per element, calls Spark or reaches the JVM.

Example::

    from sparkwin import CountEvictor
    keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(2)).evictor(CountEvictor.of(5))
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from sparkwin._plan.columns import ColumnOrName, columnInput, columnInputs, shown
from sparkwin._plan.durations import toBool, toColumnNames, toCount, toMillis, toThreshold

__all__ = ["ConditionEvictor", "CountEvictor", "DeltaEvictor", "Evictor", "TimeEvictor"]


class Evictor(ABC):
    """Base class of the evictors; build them with their `of` factories."""

    @property
    def referencedColumns(self) -> frozenset[str]:
        """The input columns the evictor reads (only `DeltaEvictor` reads any).

        Example::

            DeltaEvictor.of(5.0, "x").referencedColumns  # frozenset({'x'})
        """
        return frozenset()

    @abstractmethod
    def jsonValue(self) -> dict[str, Any]:
        """The EVICTOR fragment of the plan, as a JSON-ready dict.

        Example::

            CountEvictor.of(3).jsonValue()
            # {'kind': 'count', 'maxCount': 3, 'doEvictAfter': False}
        """

    @abstractmethod
    def __repr__(self) -> str: ...


def _suffix(doEvictAfter: bool) -> str:
    return ", doEvictAfter=True" if doEvictAfter else ""


@dataclass(frozen=True, repr=False)
class CountEvictor(Evictor):
    """Keeps the `maxCount` latest elements of the window (by arrival), evicting the rest."""

    maxCount: int
    doEvictAfter: bool = False

    @staticmethod
    def of(maxCount: int, doEvictAfter: bool = False) -> CountEvictor:
        """Keep at most `maxCount` (>= 0) elements; with `doEvictAfter` the window function sees
        all of them and the eviction happens after it.

        Example::

            windowed.evictor(CountEvictor.of(100))
        """
        return CountEvictor(
            toCount(maxCount, "maxCount", allowZero=True), toBool(doEvictAfter, "doEvictAfter")
        )

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "count", "maxCount": self.maxCount, "doEvictAfter": self.doEvictAfter}

    def __repr__(self) -> str:
        return f"CountEvictor.of({self.maxCount}{_suffix(self.doEvictAfter)})"


@dataclass(frozen=True, repr=False)
class TimeEvictor(Evictor):
    """Keeps the elements whose timestamp is within `windowSizeMs` of the window's newest
    element, evicting older ones.
    """

    windowSizeMs: int
    doEvictAfter: bool = False

    @staticmethod
    def of(windowSize: Any, doEvictAfter: bool = False) -> TimeEvictor:
        """Keep the elements at most `windowSize` (``timedelta`` or int milliseconds, >= 0)
        older than the newest one.

        Example::

            windowed.evictor(TimeEvictor.of(timedelta(seconds=10)))
        """
        return TimeEvictor(
            toMillis(windowSize, "windowSize", allowZero=True),
            toBool(doEvictAfter, "doEvictAfter"),
        )

    def jsonValue(self) -> dict[str, Any]:
        return {
            "kind": "time",
            "windowSizeMs": self.windowSizeMs,
            "doEvictAfter": self.doEvictAfter,
        }

    def __repr__(self) -> str:
        return f"TimeEvictor.of({self.windowSizeMs}{_suffix(self.doEvictAfter)})"


@dataclass(frozen=True, repr=False)
class DeltaEvictor(Evictor):
    """Evicts the elements that are at least `threshold` away from the window's newest element
    (absolute difference of one numeric column, or Euclidean distance over several).
    """

    threshold: float
    columns: tuple[str, ...]
    doEvictAfter: bool = False

    # The Spark Columns among `columns`: (hidden column name, Column, what).
    computed: tuple[tuple[str, Any, str], ...] = field(default=(), compare=False)

    @staticmethod
    def of(threshold: float, *columns: ColumnOrName, doEvictAfter: bool = False) -> DeltaEvictor:
        """Evict elements at least `threshold` (>= 0) away, measured over the numeric
        `columns` (names or Spark Columns).

        Example::

            windowed.evictor(DeltaEvictor.of(5.0, "price"))
        """
        names, computed = columnInputs(columns, "DeltaEvictor.of(columns)")
        return DeltaEvictor(
            toThreshold(threshold, "threshold"),
            toColumnNames(names, "columns", "DeltaEvictor.of"),
            toBool(doEvictAfter, "doEvictAfter"),
            computed,
        )

    @property
    def referencedColumns(self) -> frozenset[str]:
        return frozenset(self.columns)

    def jsonValue(self) -> dict[str, Any]:
        return {
            "kind": "delta",
            "threshold": self.threshold,
            "columns": list(self.columns),
            "doEvictAfter": self.doEvictAfter,
        }

    def __repr__(self) -> str:
        args = ", ".join([repr(self.threshold), *(shown(c, self.computed) for c in self.columns)])
        return f"DeltaEvictor.of({args}{_suffix(self.doEvictAfter)})"


@dataclass(frozen=True, repr=False)
class ConditionEvictor(Evictor):
    """Evicts the elements that satisfy a condition: a boolean column, or a Spark Column that
    Spark computes for every element before the engine (no Python runs per event)."""

    column: str
    doEvictAfter: bool = False
    # The condition when it is a Spark Column: (hidden column name, Column, what), else empty.
    computed: tuple[tuple[str, Any, str], ...] = field(default=(), compare=False)

    @staticmethod
    def of(condition: ColumnOrName, doEvictAfter: bool = False) -> ConditionEvictor:
        """Evict the elements whose `condition` is true (false and null stay), before the
        window function runs or, with `doEvictAfter`, after it.

        Example::

            windowed.evictor(ConditionEvictor.of(F.col("status") == "test"))
        """
        column, computed = columnInput(
            condition, "ConditionEvictor.of(condition)", "F.col('status') == 'test'"
        )
        return ConditionEvictor(column, toBool(doEvictAfter, "doEvictAfter"), computed)

    @property
    def referencedColumns(self) -> frozenset[str]:
        return frozenset({self.column})

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "condition", "column": self.column, "doEvictAfter": self.doEvictAfter}

    def __repr__(self) -> str:
        condition = shown(self.column, self.computed)
        return f"ConditionEvictor.of({condition}{_suffix(self.doEvictAfter)})"
