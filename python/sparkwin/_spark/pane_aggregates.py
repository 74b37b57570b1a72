"""Pandas aggregates per fired pane (``sw.agg.pandas``), beside the JVM's aggregates.

The JVM keeps the windows' elements and, for each fired pane, emits its result row (the JVM's
aggregates) followed at once by the pane's elements (``"elements": true`` in the plan's
function). In the union output a result row and its element rows are adjacent, in one
partition, in that order; one ``mapInPandas`` pass reads them, calls each pandas aggregate once
per pane on the pane's elements (vectorised), and writes the result row with its values in the
user's order. The harness gets the same from the JVM as a result entry holding ``elements``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql.types import StructField, StructType

from sparkwin import _transport as transport
from sparkwin._plan.contract import KIND, PANE, RESULT
from sparkwin._spark.pane_rows import paneBounds
from sparkwin.agg import PandasAggregate

# The JVM aggregate a pipeline of pandas aggregates alone still needs (a result row per pane).
PANE_COUNT = "__sparkwin_pane_count"
_R, _E = "__sw_r_", "__sw_e_"  # the flat rows' result and element columns


@dataclass(frozen=True)
class PaneAggregates:
    """A pipeline's pandas aggregates, and every aggregate's alias in the user's order."""

    aggregates: tuple[PandasAggregate, ...]
    order: tuple[str, ...]

    @property
    def columns(self) -> list[str]:
        """The input columns the pandas aggregates read, each once."""
        return list(dict.fromkeys(c for a in self.aggregates for c in a.columns))

    def schema(self, jvmResult: StructType) -> StructType:
        """The main output's schema: the JVM's result schema with the pandas aggregates' fields
        among its aggregates, in the user's order (the hidden count left out)."""
        own = {a.outputAlias: StructField(a.outputAlias, a.returnType) for a in self.aggregates}
        jvmNames = [f.name for f in jvmResult.fields]
        aggregateNames = set(self.order) | {PANE_COUNT}
        first = min(i for i, n in enumerate(jvmNames) if n in aggregateNames)
        before = [f for f in jvmResult.fields[:first] if f.name not in aggregateNames]
        after = [f for f in jvmResult.fields[first:] if f.name not in aggregateNames]
        middle = [own[n] if n in own else jvmResult[n] for n in self.order]
        return StructType(before + middle + after)

    def calls(self) -> tuple[PaneCall, ...]:
        """What Spark's Python workers need of each aggregate (no Column, no session)."""
        return tuple(PaneCall(a.outputAlias, a.func, a.columns) for a in self.aggregates)

    def row(self, result: dict[str, Any], elements: pd.DataFrame, names: list[str]) -> dict:
        """One output row: the JVM's `result` with the pandas aggregates of `elements`."""
        return paneRow(self.calls(), result, elements, names)


@dataclass(frozen=True)
class PaneCall:
    """One pandas aggregate as the pane runner calls it: its alias, function and columns."""

    alias: str
    func: Any
    columns: tuple[str, ...]

    def compute(self, inputs: list[pd.Series]) -> Any:
        """The aggregate of one pane, a Series per column; null for a pane without elements
        (no call)."""
        return self.func(*inputs) if len(inputs[0]) else None


def paneRow(
    calls: tuple[PaneCall, ...], result: dict[str, Any], elements: pd.DataFrame, names: list[str]
) -> dict[str, Any]:
    """One output row: the JVM's `result` with each call's aggregate of `elements`."""
    values = {
        c.alias: c.compute([elements[n].reset_index(drop=True) for n in c.columns]) for c in calls
    }
    return {n: values[n] if n in values else result[n] for n in names}


def mainOutput(unioned: DataFrame, jvmResult: StructType, panes: PaneAggregates) -> DataFrame:
    """The main output of a pipeline with pandas aggregates, from the union output."""
    F = transport.of(unioned).functions()  # Columns of the DataFrame's kind: classic or Connect
    flat = unioned.where(F.col(KIND).isin(RESULT, PANE)).select(
        F.col(KIND),
        *[F.col(f"result.`{f.name}`").alias(_R + f.name) for f in jvmResult.fields],
        *[F.col(f"input.`{c}`").alias(_E + c) for c in panes.columns],
    )
    schema = panes.schema(jvmResult)
    run = runner(panes.calls(), panes.columns, [f.name for f in schema.fields])
    return flat.mapInPandas(run, schema=schema)


def runner(
    calls: tuple[PaneCall, ...], columns: list[str], names: list[str]
) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """The mapInPandas function: a result row starts a pane, the element rows after it are its
    elements; a pane may span Arrow batches, so the last one waits for the next batch. Panes are
    cut by position (no grouping), and each call gets Series over slices of the batch's columns:
    per pane, the cost is the user's function."""
    resultNames = [n for n in names if n not in {c.alias for c in calls}]

    def finished(batch: pd.DataFrame, starts: Any, ends: Any) -> pd.DataFrame:
        out = batch.iloc[starts][[_R + n for n in resultNames]]
        out.columns = resultNames
        out = out.reset_index(drop=True)
        arrays = {c: batch[_E + c].array for c in columns}
        for call in calls:
            inputs = [arrays[c] for c in call.columns]
            out[call.alias] = [
                call.compute([pd.Series(a[s + 1 : e], copy=False) for a in inputs])
                for s, e in zip(starts, ends, strict=True)
            ]
        return out[names]

    def resultRows(batch: pd.DataFrame) -> np.ndarray:
        starts = np.flatnonzero(batch[KIND].to_numpy() == RESULT)
        if len(starts) == 0 or starts[0] != 0:
            raise RuntimeError("sparkwin: a pane's elements came without its result row")
        return starts

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch, starts, ends in paneBounds(batches, resultRows):
            yield finished(batch, starts, ends)

    return run
