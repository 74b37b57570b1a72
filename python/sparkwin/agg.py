"""Declarative window aggregates, used as ``sw.agg.sum("amount")``.

Each function returns an immutable `Aggregate` value (function, input column, output alias)
that turns into one entry of the plan's aggregate FUNCTION; the JVM computes it incrementally.
This module only describes aggregates and their type rules; the columns are checked against
the input schema by `sparkwin.stream` when the plan is built. No Python runs per event.

Default aliases are ``count`` for `count()` and ``<fn>_<column>`` otherwise, with the function
in snake case: ``sum_amount``, ``count_user``, ``collect_list_x``, ``stddev_samp_x``,
``approx_count_distinct_user``, ``min_by_page`` (``minBy("page", "ts")``), ``max_by_all_bid``.

Every aggregate is mergeable: windows built from slices, merged sessions and Spark's map-side
pre-aggregation give what one pass over the window's elements gives (floating-point sums and
variances up to the last bits of a double; percentiles within their rank bound). The column
types each one takes are the contract's (``contract.json``), which the JVM applies too.

Example::

    import sparkwin as sw
    keyed.window(sw.TumblingEventTimeWindows.of(60_000)).aggregate(
        sw.agg.count(), sw.agg.sum("amount").alias("total"), sw.agg.max("amount"))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql.types import DataType

from sparkwin._plan.columns import (
    ColumnOrName,
    columnInput,
    expressionText,
    isColumn,
    label,
    shown,
)
from sparkwin._plan.contract import CONTRACT, numberRange

__all__ = [
    "Aggregate",
    "ColumnOrName",
    "PandasAggregate",
    "PaneCondition",
    "approxCountDistinct",
    "avg",
    "collectList",
    "collectSet",
    "count",
    "countIf",
    "first",
    "last",
    "max",
    "maxBy",
    "maxByAll",
    "min",
    "minBy",
    "minByAll",
    "pandas",
    "percentileApprox",
    "stddev",
    "stddevPop",
    "stddevSamp",
    "sum",
    "varPop",
    "varSamp",
    "variance",
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
    "stddev": "stddev",
    "stddevSamp": "stddev_samp",
    "stddevPop": "stddev_pop",
    "variance": "variance",
    "varSamp": "var_samp",
    "varPop": "var_pop",
    "countIf": "count_if",
    "minBy": "min_by",
    "maxBy": "max_by",
    "minByAll": "min_by_all",
    "maxByAll": "max_by_all",
    "approxCountDistinct": "approx_count_distinct",
    "percentileApprox": "percentile_approx",
}
# The column types each aggregate's column parameters take: the contract's, which the JVM's
# decoder applies to the same plans.
_INPUT_TYPES: dict[str, dict[str, Any]] = CONTRACT["plan"]["inputTypes"]
_AGGREGATE_INPUTS: dict[str, dict[str, str]] = CONTRACT["plan"]["aggregateInputs"]
_RSD_RANGE = numberRange("aggregate", "approxCountDistinct", "rsd")
_PERCENTAGE_RANGE = numberRange("aggregate", "percentileApprox", "percentages")
_INT_MAX = 2**31 - 1


@dataclass(frozen=True, repr=False)
class Aggregate:
    """One aggregate of a window: `fn` over `column` (None only for ``count()``), written to the
    output column `alias`, with the plan's further fields in `options` (``ord`` of the ``By``
    aggregates, ``rsd``, ``percentages``, ``array``, ``accuracy``). Build it with the functions
    of `sparkwin.agg`.
    """

    fn: str
    column: str | None
    outputAlias: str
    # Further plan fields, in plan order: ("ord", "ts"), ("rsd", 0.05), ...
    options: tuple[tuple[str, Any], ...] = ()
    # SQL's FILTER (WHERE ...): the boolean column whose true rows alone the aggregate takes.
    where: str | None = None
    # The Spark Columns among its inputs, as (hidden column name, expression, parameter): the
    # pipeline adds them to its input, so Spark computes them (generated code, no Python per
    # event).
    computed: tuple[tuple[str, Any, str], ...] = field(default=(), compare=False)

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

    def filter(self, condition: ColumnOrName | None) -> Aggregate:
        """A copy over the rows where `condition` (a boolean column's name or a Spark Column)
        is true, as SQL's ``FILTER (WHERE ...)``; false and null rows do not reach it. ``None``:
        this aggregate as it is. The functions of `sparkwin.agg` take it as ``filter=``.

        Example::

            sw.agg.sum("amount").filter(F.col("country") == "NL")  # sum_amount
        """
        if condition is None:
            return self
        if self.where is not None:
            raise ValueError(
                f"{self!r} has a filter already; combine the conditions in one, e.g. "
                "F.col('a') & F.col('b')"
            )
        name, computed = _input(self.fn, "filter", condition, "filter=")
        return replace(self, where=name, computed=self.computed + computed)

    @property
    def defaultAlias(self) -> str:
        """The alias the aggregate gets without `alias()`: ``count`` or ``<fn>_<column>``.

        Example::

            sw.agg.collectList("x").defaultAlias  # 'collect_list_x'
        """
        return _defaultAlias(self.fn, None if self.column is None else label(self.column))

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """The (parameter, column name) pairs the aggregate reads: ``column``, and ``ord`` for
        `minBy` / `maxBy` / `minByAll` / `maxByAll`.

        Example::

            sw.agg.minBy("page", "ts").inputs  # (('column', 'page'), ('ord', 'ts'))
        """
        pairs: list[tuple[str, str]] = []
        if self.column is not None:
            pairs.append(("column", self.column))
        pairs.extend((k, v) for k, v in self.options if k == "ord")
        if self.where is not None:
            pairs.append(("filter", self.where))
        return tuple(pairs)

    def describeInput(self, column: str) -> str:
        """How errors name one of its input columns: the name, or a computed one's expression.

        Example::

            sw.agg.sum(F.col("price") * F.col("qty")).describeInput(...)  # '(price * qty)'
        """
        for name, expression, _ in self.computed:
            if name == column:
                return expressionText(expression)
        return repr(column)

    def acceptsType(self, dataType: DataType, param: str = "column") -> bool:
        """Whether the aggregate's parameter `param` can take a column of `dataType`: sum, avg,
        the variances and percentileApprox need numbers, min, max and the ``ord`` of the ``By``
        aggregates an orderable type (numeric, string, timestamp, date, boolean), countIf a
        boolean, approxCountDistinct an atomic type; the others anything.

        Example::

            sw.agg.sum("name").acceptsType(StringType())  # False
        """
        category = "boolean" if param == "filter" else _AGGREGATE_INPUTS.get(self.fn, {}).get(param)
        if category is None:
            return True
        return dataType.typeName() in _INPUT_TYPES[category]["types"]

    @property
    def typeRequirement(self) -> str:
        """The types the aggregate's ``column`` accepts, in words, for error messages.

        Example::

            sw.agg.avg("x").typeRequirement  # 'a numeric column (byte, short, ...)'
        """
        return self.typeRequirementOf("column")

    def typeRequirementOf(self, param: str) -> str:
        """The types the aggregate's parameter `param` accepts, in words.

        Example::

            sw.agg.maxBy("page", "ts").typeRequirementOf("ord")  # 'an orderable column (...)'
        """
        category = "boolean" if param == "filter" else _AGGREGATE_INPUTS.get(self.fn, {}).get(param)
        return "a column of any type" if category is None else _INPUT_TYPES[category]["words"]

    def typeFix(self, param: str) -> str:
        """How to give `param` a column it takes, as ``"; ..."`` for an error message (or "").

        Example::

            sw.agg.countIf("x").typeFix("column")  # "; add the condition as a column first, ..."
        """
        if param == "filter":
            return "; give a condition, e.g. F.col('amount') > 100"
        category = _AGGREGATE_INPUTS.get(self.fn, {}).get(param)
        fix = None if category is None else _INPUT_TYPES[category].get("fix")
        return f"; {fix}" if fix else ""

    def jsonValue(self) -> dict[str, Any]:
        """This aggregate's entry in the plan's FUNCTION.

        Example::

            sw.agg.sum("amount").jsonValue()
            # {'fn': 'sum', 'column': 'amount', 'alias': 'sum_amount'}
        """
        options = {k: list(v) if isinstance(v, tuple) else v for k, v in self.options}
        where = {} if self.where is None else {"filter": self.where}
        return {"fn": self.fn, "column": self.column, **options, **where, "alias": self.outputAlias}

    def __repr__(self) -> str:
        args = [] if self.column is None else [self._shown(self.column)]
        for name, value in self.options:
            if name == "ord":
                args.append(self._shown(value))
            elif name == "percentages":
                args.append(repr(list(value) if dict(self.options)["array"] else value[0]))
            elif (
                (name == "rsd" and value != 0.05)
                or (name == "accuracy" and value != 10000)
                or name == "limit"
            ):
                args.append(f"{name}={value!r}")
        if self.where is not None:
            args.append(f"filter={self._shown(self.where)}")
        text = f"agg.{self.fn}({', '.join(args)})"
        if self.outputAlias != self.defaultAlias:
            text += f".alias({self.outputAlias!r})"
        return text

    def _shown(self, column: str) -> str:
        return shown(column, self.computed)

    # A comparison with a number is a pane condition, for AggregateTrigger.of.
    def __ge__(self, threshold: object) -> PaneCondition:  # type: ignore[override]
        return PaneCondition.of(self, ">=", threshold)

    def __gt__(self, threshold: object) -> PaneCondition:  # type: ignore[override]
        return PaneCondition.of(self, ">", threshold)

    def __le__(self, threshold: object) -> PaneCondition:  # type: ignore[override]
        return PaneCondition.of(self, "<=", threshold)

    def __lt__(self, threshold: object) -> PaneCondition:  # type: ignore[override]
        return PaneCondition.of(self, "<", threshold)


# The aggregates a trigger can keep running (AggregateTrigger): the contract's.
_RUNNING = CONTRACT["plan"]["sections"]["trigger"]["kinds"]["aggregate"]["fn"].split("|")


@dataclass(frozen=True, repr=False)
class PaneCondition:
    """A comparison of a running aggregate with a number, ``sw.agg.sum("amount") >= 1000``:
    what `sparkwin.AggregateTrigger` fires on. Write it with ``>=``, ``>``, ``<=`` or ``<``."""

    aggregate: Aggregate
    op: str
    threshold: float

    @staticmethod
    def of(aggregate: Aggregate, op: str, threshold: object) -> PaneCondition:
        if aggregate.fn not in _RUNNING or aggregate.options:
            raise TypeError(
                f"{aggregate!r} {op} ...: a trigger keeps only "
                f"{', '.join(f'agg.{f}' for f in _RUNNING)} running; compare one of those"
            )
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise TypeError(
                f"{aggregate!r} {op} {threshold!r}: compare the aggregate with a number, e.g. "
                f"{aggregate!r} {op} 1000"
            )
        if not math.isfinite(threshold):
            raise ValueError(f"{aggregate!r} {op} {threshold!r}: the number must be finite")
        return PaneCondition(aggregate, op, float(threshold))

    def __repr__(self) -> str:
        return f"{self.aggregate!r} {self.op} {self.threshold:g}"


def _input(
    fn: str, param: str, value: object, signature: str
) -> tuple[str, tuple[tuple[str, Any, str], ...]]:
    """An input column's name, and the expression Spark computes it from when it is a Column."""
    if isColumn(value):
        return columnInput(value, f"agg.{fn}({param})", "")
    return _columnName(fn, param, value, signature), ()


def _defaultAlias(fn: str, column: str | None) -> str:
    return _SNAKE[fn] if column is None else f"{_SNAKE[fn]}_{column}"


def _columnName(fn: str, param: str, value: object, signature: str = "column") -> str:
    if not isinstance(value, str):
        raise TypeError(
            f"agg.{fn}({signature}): {param} must be a column name (str) or a Spark Column, "
            f"got {type(value).__name__} {value!r}"
        )
    if not value:
        raise ValueError(f"agg.{fn}({signature}): {param} must be a non-empty column name")
    return value


def _make(
    fn: str,
    column: object,
    *,
    optional: bool = False,
    options: tuple[tuple[str, Any], ...] = (),
    signature: str = "column",
    computed: tuple[tuple[str, Any, str], ...] = (),
) -> Aggregate:
    if column is None and optional:
        return Aggregate(fn, None, _defaultAlias(fn, None), computed=computed)
    name, own = _input(fn, "column", column, signature)
    return Aggregate(fn, name, _defaultAlias(fn, label(name)), options, computed=own + computed)


def _number(fn: str, param: str, value: object, bounds: tuple[float, float], fix: str) -> float:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"agg.{fn}: {param} must be a number, got {type(value).__name__} {value!r}")
    if not (math.isfinite(value) and low <= value <= high):
        raise ValueError(f"agg.{fn}: {param} must be from {low} to {high}, got {value!r}; {fix}")
    return float(value)


def count(column: ColumnOrName | None = None, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The number of rows in the window, or with `column` the number of non-null values.

    Example::

        windowed.aggregate(sw.agg.count(), sw.agg.count("user"))  # count, count_user
    """
    return _make("count", column, optional=True).filter(filter)


def sum(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
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
    return _make("sum", column).filter(filter)


def avg(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The mean of a numeric column, as a double.

    Example::

        windowed.aggregate(sw.agg.avg("amount"))  # avg_amount
    """
    return _make("avg", column).filter(filter)


def min(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The smallest value of an orderable column (numeric, string, timestamp, date, boolean).

    Example::

        windowed.aggregate(sw.agg.min("price"))  # min_price
    """
    return _make("min", column).filter(filter)


def max(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The largest value of an orderable column (numeric, string, timestamp, date, boolean).

    Example::

        windowed.aggregate(sw.agg.max("price"))  # max_price
    """
    return _make("max", column).filter(filter)


def first(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The value of the column in the window's element with the earliest event time.

    Example::

        windowed.aggregate(sw.agg.first("price"))  # first_price
    """
    return _make("first", column).filter(filter)


def last(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The value of the column in the window's element with the latest event time.

    Example::

        windowed.aggregate(sw.agg.last("price"))  # last_price
    """
    return _make("last", column).filter(filter)


def collectList(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The non-null values of the column in the window, in arrival order, as an array.

    Example::

        windowed.aggregate(sw.agg.collectList("page"))  # collect_list_page
    """
    return _make("collectList", column).filter(filter)


def collectSet(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The distinct non-null values of the column in the window, as an array.

    Example::

        windowed.aggregate(sw.agg.collectSet("page"))  # collect_set_page
    """
    return _make("collectSet", column).filter(filter)


def stddev(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The sample standard deviation of a numeric column, as a double (Spark's ``stddev``, the
    same as `stddevSamp`): null for a window of fewer than two non-null values, as Spark 4's.

    Computed from (count, mean, M2) updated as Welford's algorithm and merged as Chan et al.'s
    parallel formula, Spark's own, so sliced, merged and pre-aggregated windows agree with one
    pass to a double's last bits.

    Example::

        windowed.aggregate(sw.agg.stddev("amount"))  # stddev_amount
    """
    return _make("stddev", column).filter(filter)


def stddevSamp(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The sample standard deviation of a numeric column (Spark's ``stddev_samp``): null for
    fewer than two non-null values.

    Example::

        windowed.aggregate(sw.agg.stddevSamp("amount"))  # stddev_samp_amount
    """
    return _make("stddevSamp", column).filter(filter)


def stddevPop(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The population standard deviation of a numeric column (Spark's ``stddev_pop``): 0.0 for
    one value, null for none.

    Example::

        windowed.aggregate(sw.agg.stddevPop("amount"))  # stddev_pop_amount
    """
    return _make("stddevPop", column).filter(filter)


def variance(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The sample variance of a numeric column (Spark's ``variance``, the same as `varSamp`):
    null for fewer than two non-null values.

    Example::

        windowed.aggregate(sw.agg.variance("amount"))  # variance_amount
    """
    return _make("variance", column).filter(filter)


def varSamp(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The sample variance of a numeric column (Spark's ``var_samp``): null for fewer than two
    non-null values.

    Example::

        windowed.aggregate(sw.agg.varSamp("amount"))  # var_samp_amount
    """
    return _make("varSamp", column).filter(filter)


def varPop(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The population variance of a numeric column (Spark's ``var_pop``): 0.0 for one value,
    null for none.

    Example::

        windowed.aggregate(sw.agg.varPop("amount"))  # var_pop_amount
    """
    return _make("varPop", column).filter(filter)


def countIf(column: ColumnOrName, *, filter: ColumnOrName | None = None) -> Aggregate:
    """The number of rows whose boolean column is true (Spark's ``count_if``); null and false
    do not count.

    Example::

        windowed.aggregate(sw.agg.countIf("is_error"))  # count_if_is_error
    """
    return _make("countIf", column).filter(filter)


def _by(fn: str, column: ColumnOrName, ord: ColumnOrName) -> Aggregate:
    signature = "column, ord"
    name, computed = _input(fn, "ord", ord, signature)
    return _make(fn, column, options=(("ord", name),), signature=signature, computed=computed)


def minBy(
    column: ColumnOrName, ord: ColumnOrName, *, filter: ColumnOrName | None = None
) -> Aggregate:
    """The value of `column` in the row with the smallest `ord` (Spark's ``min_by``). Rows with a
    null `ord` are skipped; the value may be null. `ord` must be orderable (numeric, string,
    timestamp, date, boolean).

    Ties: among rows with the same smallest `ord`, the smallest value of `column` (null first)
    wins, so the answer does not depend on arrival order or how partials merged (Spark returns
    any one of them). For a `column` of a type that does not order (array, map, struct) it is
    the first one seen, and such a pipeline is not pre-aggregated.

    Example::

        windowed.aggregate(sw.agg.minBy("page", "ts"))  # min_by_page: the first page visited
    """
    return _by("minBy", column, ord).filter(filter)


def maxBy(
    column: ColumnOrName, ord: ColumnOrName, *, filter: ColumnOrName | None = None
) -> Aggregate:
    """The value of `column` in the row with the largest `ord` (Spark's ``max_by``); rows with a
    null `ord` are skipped. Ties as in `minBy`: the smallest value of `column` wins.

    Example::

        windowed.aggregate(sw.agg.maxBy("price", "ts"))  # max_by_price: the latest price
    """
    return _by("maxBy", column, ord).filter(filter)


def _byAll(fn: str, column: ColumnOrName, ord: ColumnOrName, limit: int | None) -> Aggregate:
    signature = "column, ord, limit=None"
    name, computed = _input(fn, "ord", ord, signature)
    options: tuple[tuple[str, Any], ...] = (("ord", name),)
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(
                f"agg.{fn}({signature}): limit must be an int or None, got "
                f"{type(limit).__name__} {limit!r}"
            )
        if limit <= 0:
            raise ValueError(
                f"agg.{fn}({signature}): limit must be at least 1, got {limit}; leave it out "
                "(None) to keep every tied value"
            )
        options += (("limit", limit),)
    return _make(fn, column, options=options, signature=signature, computed=computed)


def minByAll(
    column: ColumnOrName,
    ord: ColumnOrName,
    limit: int | None = None,
    *,
    filter: ColumnOrName | None = None,
) -> Aggregate:
    """Every value of `column` in the rows with the smallest `ord`, ties all kept, as an array
    (empty for a window without such rows): what a join back to the window's smallest `ord`
    gives, without the join. Rows where `column` or `ord` is null are skipped. `ord` must be
    orderable (numeric, string, timestamp, date, boolean).

    The tied values come sorted (Spark's order: numbers, strings, times, and structs and arrays
    of them field by field), so the answer does not depend on arrival order and the pipeline is
    pre-aggregated before the shuffle; a `column` holding a map comes in arrival order, and is
    not. Every tied value is kept in the window's state, unless `limit` bounds them: then the
    window keeps and gives at most `limit` values, the first in that order (for maps, the first
    to arrive). Give a `limit` when `ord` can tie often (a flag, a coarse bucket).

    Example::

        windowed.aggregate(sw.agg.minByAll("user", "ts"))  # min_by_all_user: the first visitors
        windowed.aggregate(sw.agg.minByAll("user", "ts", limit=10))  # at most ten of them
    """
    return _byAll("minByAll", column, ord, limit).filter(filter)


def maxByAll(
    column: ColumnOrName,
    ord: ColumnOrName,
    limit: int | None = None,
    *,
    filter: ColumnOrName | None = None,
) -> Aggregate:
    """Every value of `column` in the rows with the largest `ord`, ties all kept (or at most
    `limit` of them), as an array; as `minByAll` otherwise. With a struct `column` it gives whole
    rows: Nexmark's q7 (the bids at each window's highest price) is one aggregate.

    Example::

        bids = df.select("ts", "price", F.struct("auction", "bidder", "price").alias("bid"))
        windowed.aggregate(sw.agg.maxByAll("bid", "price"))  # max_by_all_bid
    """
    return _byAll("maxByAll", column, ord, limit).filter(filter)


def approxCountDistinct(
    column: ColumnOrName, rsd: float = 0.05, *, filter: ColumnOrName | None = None
) -> Aggregate:
    """The approximate number of distinct non-null values (Spark's ``approx_count_distinct``):
    HyperLogLog++ with `rsd` the largest relative standard deviation allowed, Spark's precision
    for it (``p = ceil(2 * log2(1.106 / rsd))``, 2^p registers) and Spark's hash of the value
    (xxHash64, seed 42). Where Spark uses linear counting (small counts) or the raw estimate
    (counts above 5 * 2^p), the answer is Spark's exactly; in between, where Spark subtracts a
    bias from the HLL++ paper's tables, sparkwin uses Ertl's improved estimator, within the
    sketch's error of Spark's. `rsd` runs from 0.0022 (p = 18) to 0.39 (p = 4); the column must
    be atomic (numeric, string, boolean, date, timestamp, binary). 0 for a window of nulls.

    Example::

        windowed.aggregate(sw.agg.approxCountDistinct("user", rsd=0.01))
    """
    low, high = _RSD_RANGE
    value = _number(
        "approxCountDistinct",
        "rsd",
        rsd,
        _RSD_RANGE,
        f"rsd={low} keeps 2^18 registers a window, rsd={high} 2^4 (Spark's default is 0.05)",
    )
    return _make("approxCountDistinct", column, options=(("rsd", value),)).filter(filter)


def percentileApprox(
    column: ColumnOrName,
    percentage: float | list[float] | tuple[float, ...],
    accuracy: int = 10000,
    *,
    filter: ColumnOrName | None = None,
) -> Aggregate:
    """The approximate percentile of a numeric column (Spark's ``percentile_approx``): the
    smallest value such that about `percentage` of the values are at most it, in the column's
    type. Its rank is within ``count / accuracy`` of the exact one's (Spark's documented
    bound), whatever slices, sessions or partials merged into the window; with fewer than
    `accuracy` values it is exact, and then Spark's too. A list of percentages gives an array.

    `percentage` must be in [0, 1]; `accuracy` a positive int (memory grows with it).

    Example::

        windowed.aggregate(sw.agg.percentileApprox("latency", 0.99))  # percentile_approx_latency
        windowed.aggregate(sw.agg.percentileApprox("latency", [0.5, 0.9, 0.99], accuracy=1000))
    """
    fn = "percentileApprox"
    fix = "give a fraction, e.g. 0.99 for the 99th percentile"
    if isinstance(percentage, list | tuple):
        if not percentage:
            raise ValueError(f"agg.{fn}: percentage must not be an empty list; {fix}")
        values = tuple(_number(fn, "percentage", p, _PERCENTAGE_RANGE, fix) for p in percentage)
        array = True
    else:
        values = (_number(fn, "percentage", percentage, _PERCENTAGE_RANGE, fix),)
        array = False
    if isinstance(accuracy, bool) or not isinstance(accuracy, int):
        raise TypeError(
            f"agg.{fn}: accuracy must be an int, got {type(accuracy).__name__} {accuracy!r}"
        )
    if not 0 < accuracy <= _INT_MAX:
        raise ValueError(
            f"agg.{fn}: accuracy must be from 1 to {_INT_MAX}, got {accuracy}; 1/accuracy is the "
            "relative rank error (Spark's default is 10000)"
        )
    options = (("percentages", values), ("array", array), ("accuracy", accuracy))
    return _make(fn, column, options=options).filter(filter)


# PySpark's eval type of a pandas_udf of the Series -> scalar kind (PythonEvalType).
_GROUPED_AGG_PANDAS_UDF = 202


@dataclass(frozen=True, repr=False)
class PandasAggregate:
    """A pandas aggregate of a window (``sw.agg.pandas(median, "price")``): a ``pandas_udf`` of
    the ``Series -> scalar`` kind, called once per fired pane with the pane's elements (one
    Series per column), vectorised; an empty pane gives null without a call. Python computes it,
    so a pipeline with one keeps its windows' elements, as a ``process()`` pipeline does."""

    # The pandas_udf's Python function, its return type and its name: the udf itself stays on
    # the driver (the pane runner ships only the function to Spark's Python workers).
    func: Any
    returnType: DataType
    name: str
    columns: tuple[str, ...]
    outputAlias: str
    computed: tuple[tuple[str, Any, str], ...] = field(default=(), compare=False)

    def alias(self, name: str) -> PandasAggregate:
        """A copy that writes its result to the output column `name`.

        Example::

            sw.agg.pandas(median, "price").alias("median_price")
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"alias name must be a non-empty str, got {name!r}")
        return replace(self, outputAlias=name)

    def __repr__(self) -> str:
        args = ", ".join([self.name, *(shown(c, self.computed) for c in self.columns)])
        text = f"agg.pandas({args})"
        default = _pandasAlias(self.name, self.columns)
        return text if self.outputAlias == default else f"{text}.alias({self.outputAlias!r})"


def pandas(function: Any, *columns: ColumnOrName) -> PandasAggregate:
    """A pandas aggregate per fired pane: `function` is a ``pandas_udf`` of the ``Series ->
    scalar`` kind (as ``groupBy().agg`` takes), called with one Series per column of `columns`
    (names or Spark Columns) holding the pane's elements. It runs beside the JVM's aggregates,
    once per pane, on classic and Spark Connect sessions and in the harness; the default alias is
    ``<function>_<column>``.

    Example::

        @pandas_udf("double")
        def median(v: pd.Series) -> float:
            return float(v.median())

        windowed.aggregate(sw.agg.count(), sw.agg.pandas(median, "price"))  # median_price
    """
    if getattr(function, "evalType", None) != _GROUPED_AGG_PANDAS_UDF or not hasattr(
        function, "func"
    ):
        raise TypeError(
            "agg.pandas(function): function must be a pandas_udf of the Series -> scalar kind, "
            "e.g. @pandas_udf('double') def median(v: pd.Series) -> float, got "
            f"{type(function).__name__} {function!r}"
        )
    if not columns:
        raise ValueError("agg.pandas(function, *columns) needs at least one column, e.g. 'price'")
    names: list[str] = []
    computed: list[tuple[str, Any, str]] = []
    for i, column in enumerate(columns):
        name, own = _input("pandas", f"columns[{i}]", column, "function, *columns")
        names.append(name)
        computed.extend(own)
    name = getattr(function, "__name__", "pandas")
    alias = _pandasAlias(name, tuple(names))
    returnType = function.returnType
    return PandasAggregate(function.func, returnType, name, tuple(names), alias, tuple(computed))


def _pandasAlias(name: str, columns: tuple[str, ...]) -> str:
    return "_".join([name, *(label(c) for c in columns)])
