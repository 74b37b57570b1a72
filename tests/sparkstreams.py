"""Driving real streaming queries deterministically, and replaying them in the harness.

A `StreamScript` is a list of micro-batches (lists of row dicts). Each becomes one JSON file
with a strictly increasing modification time, read with maxFilesPerTrigger=1, so batch k
reads exactly file k. The watermark Spark used for every batch (data and no-data) is read
back from the query's progress, so the harness can be fed the same watermarks and rows in
the same order.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812
from pyspark.sql.types import StructType, TimestampType

import sparkwin as sw
from sparkwin import _runtime
from sparkwin.testing import WindowHarness

Batch = list[dict[str, Any]]


def millis(value: Any) -> int:
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    return int(value)


def writeBatches(source: Path, batches: list[Batch], start: int = 0) -> None:
    """Files named and timestamped in order, so the file source reads them in order."""
    source.mkdir(parents=True, exist_ok=True)
    base = time.time() - 10_000
    for i, rows in enumerate(batches, start=start):
        path = source / f"batch-{i:05d}.json"
        with open(path, "w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
        os.utime(path, (base + i, base + i))


def plainTimestamps(df: DataFrame) -> DataFrame:
    """Timestamp columns as epoch milliseconds (as the harness reports them)."""
    cols = [
        F.unix_millis(F.col(f"`{f.name}`")).alias(f.name)
        if isinstance(f.dataType, TimestampType)
        else F.col(f"`{f.name}`")
        for f in df.schema.fields
    ]
    return df.select(*cols)


@dataclass
class StreamResult:
    """What one run produced, per output tag, plus the batch log used for harness replay."""

    outputs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    progress: list[dict[str, Any]] = field(default_factory=list)
    rowsByBatch: dict[int, int] = field(default_factory=dict)

    def watermarks(self) -> list[tuple[int, int]]:
        """(batchId, watermark ms) for every batch, data or not, in order."""
        out = []
        for p in self.progress:
            wm = p["eventTime"].get("watermark")
            ms = (
                int(datetime.fromisoformat(wm.replace("Z", "+00:00")).timestamp() * 1000)
                if wm
                else 0
            )
            out.append((p["batchId"], ms))
        return out


def runStream(
    spark: SparkSession,
    workdir: Path,
    schema: str,
    build: Callable[[DataFrame], sw.Pipeline],
    batches: list[Batch],
    *,
    checkpoint: Path | None = None,
    startFile: int = 0,
) -> StreamResult:
    """Runs the pipeline over `batches` (appended to `workdir/source`) until all are processed."""
    source = workdir / "source"
    writeBatches(source, batches, start=startFile)
    sdf = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(source))
    pipeline = build(sdf)
    split = _runtime.splitOutputs(
        pipeline.planJson(), pipeline.processFunction, pipeline.outputSchema, pipeline.lateOutputTag
    )
    result = StreamResult()

    def perBatch(batch: DataFrame, batchId: int) -> None:
        batch.persist()
        for tag, out in split(batch).items():
            rows = [r.asDict(recursive=True) for r in plainTimestamps(out).collect()]
            for r in rows:
                r["_batch"] = batchId
            result.outputs.setdefault(tag, []).extend(rows)
        batch.unpersist()

    cp = checkpoint or (workdir / "checkpoint")
    query = (
        _runtime.observed(pipeline._union())
        .writeStream.foreachBatch(perBatch)
        .option("checkpointLocation", str(cp))
        .start()
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    result.progress = [dict(p) for p in query.recentProgress]
    result.rowsByBatch = {p["batchId"]: p["numInputRows"] for p in result.progress}
    return result


def harnessFed(pipeline: sw.Pipeline, result: StreamResult, batches: list[Batch]) -> WindowHarness:
    """A harness fed the same watermarks and rows, batch by batch, as Spark saw them."""
    h = WindowHarness(pipeline)
    files = iter(batches)
    for batchId, wm in result.watermarks():
        if wm > 0:
            h.processWatermark(wm)
        if result.rowsByBatch[batchId] > 0:
            h.processElements(next(files))
    return h


def replayInHarness(
    pipeline: sw.Pipeline, result: StreamResult, batches: list[Batch]
) -> dict[str, list[dict[str, Any]]]:
    """The harness's outputs for what Spark saw (see `harnessFed`)."""
    h = harnessFed(pipeline, result, batches)
    out = {"main": h.extractOutput(), "errors": h.extractSideOutput("errors")}
    if pipeline.lateOutputTag:
        out[pipeline.lateOutputTag] = h.extractSideOutput(pipeline.lateOutputTag)
    return out


def canonical(rows: list[dict[str, Any]]) -> list[tuple[tuple[str, Any], ...]]:
    """Rows as sorted tuples, without the test's batch marker, for order-free comparison."""
    return sorted(
        tuple(sorted((k, _freeze(v)) for k, v in r.items() if k != "_batch")) for r in rows
    )


def _freeze(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


def schemaOf(ddl: str, spark: SparkSession) -> StructType:
    return spark.createDataFrame([], ddl).schema
