"""Declarative window aggregates, used as ``sw.agg.sum("amount")``.

Each function returns an immutable `Aggregate` value (function, input column, output alias)
that turns into one entry of the plan's aggregate FUNCTION; the JVM computes it incrementally.
This module only describes aggregates and their type rules; the columns are checked against
the input schema by `sparkwin.stream` when the plan is built. No Python runs per event.

Default aliases are ``count`` for `count()` and ``<fn>_<column>`` otherwise, with the function
in snake case: ``sum_amount``, ``count_user``, ``collect_list_x``.

Example::

    import sparkwin as sw
    keyed.window(sw.TumblingEventTimeWindows.of(60_000)).aggregate(
        sw.agg.count(), sw.agg.sum("amount").alias("total"), sw.agg.max("amount"))
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pyspark.sql.types import (
    BooleanType,
    DataType,
    DateType,
    NumericType,
    StringType,
    TimestampNTZType,
    TimestampType,
)

__all__ = [
    "Aggregate",
    "avg",
    "collectList",
    "collectSet",
    "count",
    "first",
    "last",
    "max",
    "min",
    "sum",
]

# Plan name -> snake-case prefix of the default alias.
_SNAKE = {
    "count": "count",
    "sum": "sum",
    "avg": "avg",
    "min": "min",
    "max": "max",
    "first": "first",
    "last": "last",
    "collectList": "collect_list",
    "collectSet": "collect_set",
}
_NUMERIC_FNS = frozenset({"sum", "avg"})
_ORDERABLE_FNS = frozenset({"min", "max"})
_ORDERABLE_TYPES = (NumericType, StringType, TimestampType, TimestampNTZType, DateType, BooleanType)


@dataclass(frozen=True, repr=False)
class Aggregate:
    """One aggregate of a window: `fn` over `column` (None only for ``count()``), written to the
    output column `alias`. Build it with the functions of `sparkwin.agg`.
    """

    fn: str
    column: str | None
    outputAlias: str

    def alias(self, name: str) -> Aggregate:
        """A copy that writes its result to the output column `name`.

        Example::

            sw.agg.sum("amount").alias("total")
        """
        if not isinstance(name, str):
            raise TypeError(f"alias name must be a str, got {type(name).__name__} {name!r}")
        if not name:
            raise ValueError("alias name must be a non-empty column name")
        return replace(self, outputAlias=name)

    @property
    def defaultAlias(self) -> str:
        """The alias the aggregate gets without `alias()`: ``count`` or ``<fn>_<column>``.

        Example::

            sw.agg.collectList("x").defaultAlias  # 'collect_list_x'
        """
        return _defaultAlias(self.fn, self.column)

    def acceptsType(self, dataType: DataType) -> bool:
        """Whether the aggregate can take a column of `dataType`: sum and avg need numbers,
        min and max an orderable type (numeric, string, timestamp, date, boolean), the others
        anything.

        Example::

            sw.agg.sum("name").acceptsType(StringType())  # False
        """
        if self.fn in _NUMERIC_FNS:
            return isinstance(dataType, NumericType)
        if self.fn in _ORDERABLE_FNS:
            return isinstance(dataType, _ORDERABLE_TYPES)
        return True

    @property
    def typeRequirement(self) -> str:
        """The types the aggregate accepts, in words, for error messages.

        Example::

            sw.agg.avg("x").typeRequirement  # 'a numeric column (byte, short, ...)'
        """
        if self.fn in _NUMERIC_FNS:
            return "a numeric column (byte, short, int, long, float, double or decimal)"
        if self.fn in _ORDERABLE_FNS:
            return "an orderable column (numeric, string, timestamp, date or boolean)"
        return "a column of any type"

    def jsonValue(self) -> dict[str, Any]:
        """This aggregate's entry in the plan's FUNCTION.

        Example::

            sw.agg.sum("amount").jsonValue()
            # {'fn': 'sum', 'column': 'amount', 'alias': 'sum_amount'}
        """
        return {"fn": self.fn, "column": self.column, "alias": self.outputAlias}

    def __repr__(self) -> str:
        arg = "" if self.column is None else repr(self.column)
        text = f"agg.{self.fn}({arg})"
        if self.outputAlias != self.defaultAlias:
            text += f".alias({self.outputAlias!r})"
        return text


def _defaultAlias(fn: str, column: str | None) -> str:
    return _SNAKE[fn] if column is None else f"{_SNAKE[fn]}_{column}"


def _make(fn: str, column: object, *, optional: bool = False) -> Aggregate:
    if column is None and optional:
        return Aggregate(fn, None, _defaultAlias(fn, None))
    if not isinstance(column, str):
        raise TypeError(
            f"agg.{fn}(column): column must be a column name (str), got "
            f"{type(column).__name__} {column!r}"
        )
    if not column:
        raise ValueError(f"agg.{fn}(column): column must be a non-empty column name")
    return Aggregate(fn, column, _defaultAlias(fn, column))


def count(column: str | None = None) -> Aggregate:
    """The number of rows in the window, or with `column` the number of non-null values.

    Example::

        windowed.aggregate(sw.agg.count(), sw.agg.count("user"))  # count, count_user
    """
    return _make("count", column, optional=True)


def sum(column: str) -> Aggregate:
    """The sum of a numeric column: long for integral input, double for float/double, decimal
    for decimal (Spark's result types).

    Overflow follows Spark's ``spark.sql.ansi.enabled`` when the pipeline is built: with ANSI
    (Spark 4's default), where Spark fails the query, a window whose exact sum leaves the
    result type gets a null sum and a row on the ``errors`` output naming the window; without
    it, a long sum wraps around as Spark's does and a decimal one is null. A long sum is exact
    whenever its exact total fits, in whatever order the values came.

    Example::

        windowed.aggregate(sw.agg.sum("amount"))  # sum_amount
    """
    return _make("sum", column)


def avg(column: str) -> Aggregate:
    """The mean of a numeric column, as a double.

    Example::

        windowed.aggregate(sw.agg.avg("amount"))  # avg_amount
    """
    return _make("avg", column)


def min(column: str) -> Aggregate:
    """The smallest value of an orderable column (numeric, string, timestamp, date, boolean).

    Example::

        windowed.aggregate(sw.agg.min("price"))  # min_price
    """
    return _make("min", column)


def max(column: str) -> Aggregate:
    """The largest value of an orderable column (numeric, string, timestamp, date, boolean).

    Example::

        windowed.aggregate(sw.agg.max("price"))  # max_price
    """
    return _make("max", column)


def first(column: str) -> Aggregate:
    """The value of the column in the window's element with the earliest event time.

    Example::

        windowed.aggregate(sw.agg.first("price"))  # first_price
    """
    return _make("first", column)


def last(column: str) -> Aggregate:
    """The value of the column in the window's element with the latest event time.

    Example::

        windowed.aggregate(sw.agg.last("price"))  # last_price
    """
    return _make("last", column)


def collectList(column: str) -> Aggregate:
    """The non-null values of the column in the window, in arrival order, as an array.

    Example::

        windowed.aggregate(sw.agg.collectList("page"))  # collect_list_page
    """
    return _make("collectList", column)


def collectSet(column: str) -> Aggregate:
    """The distinct non-null values of the column in the window, as an array.

    Example::

        windowed.aggregate(sw.agg.collectSet("page"))  # collect_set_page
    """
    return _make("collectSet", column)
