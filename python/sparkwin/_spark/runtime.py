"""Running a built pipeline on Spark: the union of all outputs from the JVM, split into the
main output and the side outputs, plus observed metrics and Python process functions.

The JVM produces one DataFrame whose rows carry a kind (`__sw_kind`): window results, late
elements, bad records, pane elements for a Python process function, and counters. Everything
here is DataFrame plumbing; no window logic lives in Python.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql.types import StructType

from sparkwin import _transport as transport
from sparkwin._plan.contract import CHANNEL_METRICS as CHANNEL_FIELDS
from sparkwin._plan.contract import (
    ERROR,
    ERROR_COLUMN,
    ERRORS_TAG,
    EVENT_TIME_COLUMN,
    EVENT_TIME_METADATA,
    KIND,
    LATE,
    METRIC_NAMES,
    OBSERVE_NAME,
    OUTPUT_COLUMNS,
    PANE,
    PANE_SEQ,
    RESULT,
    ROW_COUNTERS,
    kindOf,
)
from sparkwin._spark import pane_aggregates as _panes
from sparkwin._spark.pane_aggregates import PaneAggregates
from sparkwin._spark.pane_rows import paneBounds
from sparkwin.outputs import Output

_PANE_PREFIX = "__sw_p_"


@dataclass(frozen=True)
class PaneWindow:
    """What a process function learns about the pane it is called for.

    ``start`` and ``end`` are None for global windows (``start`` also for Storm count windows);
    ``paneTiming`` is ``EARLY``, ``ON_TIME`` or ``LATE``.
    """

    start: datetime | None
    end: datetime | None
    paneTiming: str
    paneIndex: int
    paneIsFirst: bool
    paneIsLast: bool


def describe(
    spark: SparkSession,
    planJson: str,
    realTime: bool = False,
    checkpointLocation: str | None = None,
) -> dict[str, Any]:
    """The JVM's view of a plan: output schemas (StructType), the timer domains it uses, Spark's
    time mode (in real-time mode with ``realTime``), the algorithm, what its assigner is, and a
    stream's key groups (with ``checkpointLocation``, that checkpoint's)."""
    raw = json.loads(transport.of(spark).describe(planJson, realTime, checkpointLocation))
    out: dict[str, Any] = {
        k: StructType.fromJson(raw[k]) for k in ("result", "pane", "errors", "union")
    }
    out["timerDomains"] = raw["timerDomains"]
    out["timeMode"] = raw["timeMode"]
    out["mode"] = raw.get("mode", "microBatch")  # the Connect plugin's describe is micro-batch's
    out["ownWatermark"] = raw.get("ownWatermark", False)
    out["operator"] = raw["operator"]
    out["operatorOrigin"] = raw.get("operatorOrigin", "")  # why that operator (HostChoice)
    out["timers"] = raw["timers"]
    out["clock"] = raw["clock"]
    out["algorithm"] = raw["algorithm"]
    out["assigner"] = raw["assigner"]  # {"eventTime", "merging"}: what a user's assigner is
    out["keyGroups"] = raw.get("keyGroups")  # {"count", "origin"}; a jar without it: None
    return out


# The rules' answers: a plan (so far) and whether its input is a stream decide them, and the jar
# is this package's own version, so a builder that repeats a step need not ask again.
_refusals: dict[tuple[str, bool], dict[str, Any]] = {}


def verdict(spark: SparkSession, planJson: str, streaming: bool) -> dict[str, Any]:
    """The JVM's verdict on a plan so far (``PlanRules``, the one home of the rules on how a
    plan's pieces combine): ``{"message": ...}`` of the first rule it breaks, naming the plan's
    pieces as ``{/json/pointer}``s for the caller to write in its own words; or, accepted,
    ``{"defaults": {"watermark": ...}}``: what the JVM's decoder decides where the plan is silent.
    """
    key = (planJson, streaming)
    if key not in _refusals:
        found = json.loads(transport.of(spark).validate(planJson, streaming))
        if len(_refusals) > 512:  # a long-lived process that built many pipelines
            _refusals.clear()
        _refusals[key] = found if isinstance(found, dict) else {}
    return _refusals[key]


def union(
    df: DataFrame, planJson: str, realTime: bool = False, checkpointLocation: str | None = None
) -> DataFrame:
    """Every output of the pipeline in one DataFrame (streaming if `df` is), for a query in
    micro-batch mode or, with ``realTime``, Spark's real-time mode. A stream's
    ``checkpointLocation``, where known, keeps its number of key groups (a new one from now on);
    Spark Connect does not send it (the session's setting decides, as without one)."""
    return transport.of(df).windowed(df, planJson, realTime, checkpointLocation)


def admit(unioned: DataFrame, checkpointLocation: str) -> None:
    """Refuses a checkpoint the query of ``unioned`` cannot resume (another Spark line's runtime,
    a newer sparkwin's, a damaged one, another pipeline's, another time mode), before it starts,
    and records this release and the query's pipelines in an admitted one (``Admission``). A
    Spark Connect client sends no checkpoint to the plugin: the server's checks are Spark's and
    the state codecs' own there."""
    transport.of(unioned).admit(unioned, checkpointLocation)


def shared(unioned: DataFrame) -> DataFrame:
    """A bounded union kept for every output that reads it: the engine runs at the first read
    and the outputs filter what it kept (``persist(MEMORY_AND_DISK)``, on either transport)."""
    return unioned.persist(StorageLevel.MEMORY_AND_DISK)


def observed(unioned: DataFrame, name: str = OBSERVE_NAME) -> DataFrame:
    """Adds per-batch counters under `name` in StreamingQueryProgress.observedMetrics."""
    F = transport.of(unioned).functions()  # Columns of the DataFrame's kind: classic or Connect

    def kindCount(kind: int, alias: str) -> Column:
        return F.sum(F.when(F.col(KIND) == kind, 1).otherwise(0)).alias(alias)

    counters = [F.coalesce(F.sum(F.col(f"metrics.{m}")), F.lit(0)).alias(m) for m in METRIC_NAMES]
    # With channels every key group reports the same watermarks: any one of them will do.
    metrics = unioned.schema["metrics"].dataType
    valve = [
        F.max(F.col(f"metrics.{field}")).alias(field)
        for field in CHANNEL_FIELDS
        if isinstance(metrics, StructType) and field in metrics.fieldNames()
    ]
    return unioned.observe(
        name,
        *(kindCount(kind, counter) for counter, kind in ROW_COUNTERS.items()),
        *counters,
        *valve,
    )


def mainOutput(
    unioned: DataFrame,
    planJson: str,
    processFn: Callable[..., pd.DataFrame] | None,
    outputSchema: StructType | None,
    panes: PaneAggregates | None = None,
) -> DataFrame:
    """Window results: the aggregate rows (with the pandas aggregates of `panes`), or what the
    process function returns."""
    F = transport.of(unioned).functions()  # Columns of the DataFrame's kind: classic or Connect
    if processFn is None:
        if panes is None:
            results = unioned.where(F.col(KIND) == RESULT).select("result.*")
        else:
            jvmResult = unioned.schema["result"].dataType
            assert isinstance(jvmResult, StructType)
            results = _panes.mainOutput(unioned, jvmResult, panes)
        # window_time is the event time a downstream pipeline sees: marked, it inherits the
        # upstream watermark (Spark keeps no metadata of the union's nested fields).
        marked = {EVENT_TIME_METADATA: True}
        combiner = json.loads(planJson)["function"].get("timestampCombiner", "endOfWindow")
        return results.select(
            *[
                F.col(f"`{c}`").alias(c, metadata=marked)
                if c == EVENT_TIME_COLUMN and combiner == "endOfWindow"
                else F.col(f"`{c}`")
                for c in results.columns
            ]
        )
    assert outputSchema is not None
    plan = json.loads(planJson)
    inputNames = [f["name"] for f in plan["inputSchema"]["fields"]]
    keys = list(plan["keys"])
    # What the JVM tells a process function about its pane (OutputLayout.paneSchema).
    paneNames = [*keys, *OUTPUT_COLUMNS, PANE_SEQ]
    flat = unioned.where(F.col(KIND) == PANE).select(
        *[F.col(f"pane.`{n}`").alias(_PANE_PREFIX + n) for n in paneNames],
        *[F.col(f"input.`{n}`").alias(n) for n in inputNames],
    )
    run = paneRunner(processFn, keys, inputNames)
    return flat.mapInPandas(run, schema=outputSchema)


def paneRunner(
    processFn: Callable[..., pd.DataFrame], keys: list[str], inputNames: list[str]
) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """The mapInPandas function: rows of one pane are adjacent; it calls `processFn` once per
    pane, carrying a pane that spans Arrow batches over to the next batch. Panes are cut where
    the pane sequence changes (by position, no grouping), and a batch's results leave together.
    """
    seqCol = _PANE_PREFIX + PANE_SEQ

    def callPane(batch: pd.DataFrame, elements: pd.DataFrame, start: int, end: int) -> Any:
        first = batch.iloc[start]
        key = tuple(first[_PANE_PREFIX + k] for k in keys)
        window = PaneWindow(
            start=_toDatetime(first[_PANE_PREFIX + "window_start"]),
            end=_toDatetime(first[_PANE_PREFIX + "window_end"]),
            paneTiming=str(first[_PANE_PREFIX + "pane_timing"]),
            paneIndex=int(first[_PANE_PREFIX + "pane_index"]),
            paneIsFirst=bool(first[_PANE_PREFIX + "pane_is_first"]),
            paneIsLast=bool(first[_PANE_PREFIX + "pane_is_last"]),
        )
        result = processFn(key, window, elements.iloc[start:end].reset_index(drop=True))
        if not isinstance(result, pd.DataFrame):
            raise TypeError(
                f"the process function must return a pandas DataFrame, got {type(result).__name__}"
            )
        return result

    def panes(batch: pd.DataFrame, starts: Any, ends: Any) -> Iterator[pd.DataFrame]:
        elements = batch[inputNames]
        results = [callPane(batch, elements, s, e) for s, e in zip(starts, ends, strict=True)]
        results = [r for r in results if not r.empty]
        if results:
            yield results[0] if len(results) == 1 else pd.concat(results, ignore_index=True)

    def seqChanges(batch: pd.DataFrame) -> np.ndarray:
        seqs = batch[seqCol].to_numpy()
        return np.concatenate([[0], np.flatnonzero(seqs[1:] != seqs[:-1]) + 1])

    def run(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for batch, starts, ends in paneBounds(batches, seqChanges):
            yield from panes(batch, starts, ends)

    return run


def sideOutput(unioned: DataFrame, tag: str, lateTag: str | None) -> DataFrame:
    """Late elements (the pipeline's late tag) or bad records (``errors``)."""
    F = transport.of(unioned).functions()  # Columns of the DataFrame's kind: classic or Connect
    if tag == ERRORS_TAG:
        return unioned.where(F.col(KIND) == ERROR).select("input.*", ERROR_COLUMN)
    if lateTag is not None and tag == lateTag:
        return unioned.where(F.col(KIND) == LATE).select("input.*")
    available = [t for t in (lateTag, ERRORS_TAG) if t]
    raise ValueError(
        f"no side output named {tag!r}; this pipeline has {available}. "
        "Late data needs .sideOutputLateData(tag) on the windowed stream."
    )


def _toDatetime(value: Any) -> datetime | None:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    return value  # type: ignore[no-any-return]


OutputWriter = Callable[[str, DataFrame, int], None]


def startQuery(
    unioned: DataFrame,
    outputs: Callable[[DataFrame], dict[str, DataFrame]],
    *,
    isProcess: bool,
    checkpointLocation: str,
    targets: dict[str, Output],
    trigger: dict[str, Any] | None,
    queryName: str | None,
) -> Any:
    """One streaming query, one copy of state, every output: each micro-batch's union is split
    into its outputs, and each non-empty one is written to its target (``outputs.Output``),
    which replaces what a replayed batch wrote before.
    """

    def perBatch(batch: DataFrame, batchId: int) -> None:
        batch.persist()
        try:
            present = {r[0] for r in batch.select(KIND).distinct().collect()}
            for tag, out in outputs(batch).items():
                if kindOf(tag, isProcess) not in present:
                    continue
                if tag in targets:
                    targets[tag].write(out, batchId)
        finally:
            batch.unpersist()

    writer = observed(unioned).writeStream.foreachBatch(perBatch)
    writer = writer.option("checkpointLocation", checkpointLocation)
    if queryName:
        writer = writer.queryName(queryName)
    if trigger:
        writer = writer.trigger(**trigger)
    return transport.of(unioned).start(writer)


def splitOutputs(
    planJson: str,
    processFn: Callable[..., pd.DataFrame] | None,
    outputSchema: StructType | None,
    lateTag: str | None,
    panes: PaneAggregates | None = None,
) -> Callable[[DataFrame], dict[str, DataFrame]]:
    """A function from one union batch to every output: ``main``, the late tag, ``errors``."""

    def split(batch: DataFrame) -> dict[str, DataFrame]:
        out = {"main": mainOutput(batch, planJson, processFn, outputSchema, panes)}
        if lateTag is not None:
            out[lateTag] = sideOutput(batch, lateTag, lateTag)
        out[ERRORS_TAG] = sideOutput(batch, ERRORS_TAG, lateTag)
        return out

    return split
