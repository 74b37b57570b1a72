"""Driving real streaming queries deterministically, and replaying them in the harness.

A `StreamScript` is a list of micro-batches (lists of row dicts). Each becomes one JSON file
with a strictly increasing modification time, read with maxFilesPerTrigger=1, so batch k
reads exactly file k. The watermark Spark used for every batch (data and no-data) is read
back from the query's progress, so the harness can be fed the same watermarks and rows in
the same order.
"""

from __future__ import annotations

import ast
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pyspark
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType, TimestampType

import sparkwin as sw
from sparkwin._spark import runtime as _runtime
from sparkwin.testing import WindowHarness

Batch = list[dict[str, Any]]


@contextmanager
def onOperator(spark: SparkSession, operator: str) -> Iterator[None]:
    """New checkpoints' key groups on Spark's ``operator`` (``spark.sparkwin.operator``) inside
    the block: for what one operator's state alone has (Spark 4's map state, its files)."""
    spark.conf.set("spark.sparkwin.operator", operator)
    try:
        yield
    finally:
        spark.conf.unset("spark.sparkwin.operator")


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
    checkpoint: Path | None = None
    # Each committed batch's outputs by tag: a batch a stop interrupted runs again after a
    # restart under the same id, and the rerun replaces it (an idempotent sink's view).
    byBatch: dict[int, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)

    @staticmethod
    def resumed(first: StreamResult, second: StreamResult) -> StreamResult:
        """One result for a query stopped after `first` and restarted from its checkpoint."""
        merged = StreamResult(checkpoint=second.checkpoint)
        merged.byBatch = {**first.byBatch, **second.byBatch}
        progress = {p["batchId"]: p for p in first.progress + second.progress}
        merged.progress = [progress[b] for b in sorted(progress)]
        merged._settle()
        return merged

    def _settle(self) -> None:
        self.outputs = {}
        for batchId in sorted(self.byBatch):
            for tag, rows in self.byBatch[batchId].items():
                self.outputs.setdefault(tag, []).extend(rows)
        self.rowsByBatch = {
            p["batchId"]: dataRows(p) or (SPARK35 and readData(p)) for p in self.progress
        }

    def batchTimes(self) -> dict[int, int]:
        """Every batch's timestamp (Spark's batch time, ms) from the checkpoint's offset log."""
        assert self.checkpoint is not None
        times = {}
        for path in (self.checkpoint / "offsets").iterdir():
            if path.name.isdigit():
                meta = json.loads(path.read_text().splitlines()[1])
                times[int(path.name)] = int(meta["batchTimestampMs"])
        return times

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


CLOCK_SOURCE = "sparkwin-clock"


def dataRows(progress: Any) -> int:
    """A micro-batch's input rows from its data sources: not sparkwin's clock, whose ticks wake
    pipelines that act as processing time passes (a dict, or Connect's progress object)."""

    def field(o: Any, name: str) -> Any:
        return o[name] if isinstance(o, dict) else getattr(o, name)

    sources = field(progress, "sources")
    return sum(
        int(field(s, "numInputRows") or 0)
        for s in sources
        if field(s, "description") != CLOCK_SOURCE
    )


# Only PySpark 3.5 loses a batch's input counts (below); on 4.x a Kafka source's first batch
# moves its offsets from none to the topic's start without reading a row.
SPARK35 = pyspark.__version__.startswith("3.")


def readData(progress: Any) -> int:
    """1 if a data source (not the clock) moved its offsets in the batch, else 0: PySpark 3.5
    reports 0 input rows for every source of a batch whose executed plan lost a leaf (the
    clock's empty relation, in a batch where it did not tick), but the offsets still move."""
    return int(
        any(
            s["description"] != CLOCK_SOURCE and s["startOffset"] != s["endOffset"]
            for s in progress["sources"]
        )
    )


def runStream(
    spark: SparkSession,
    workdir: Path,
    schema: str,
    build: Callable[[DataFrame], sw.Pipeline],
    batches: list[Batch],
    *,
    checkpoint: Path | None = None,
    startFile: int = 0,
    trigger: dict[str, Any] | None = None,
    linger: float = 0.0,
) -> StreamResult:
    """Runs the pipeline over `batches` (appended to `workdir/source`) until all are processed,
    then `linger` seconds more (no-data micro-batches of an interval `trigger` run then)."""
    source = workdir / "source"
    writeBatches(source, batches, start=startFile)
    sdf = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(source))
    last = startFile + len(batches) - 1

    def feed(query: StreamingQuery) -> None:
        if trigger is None:
            query.processAllAvailable()
        else:
            awaitProgress(query, lambda offset: offset == {"logOffset": last})

    return runQuery(
        build(sdf), checkpoint or (workdir / "checkpoint"), feed, trigger=trigger, linger=linger
    )


def awaitProgress(
    query: StreamingQuery, reached: Callable[[Any], bool], timeout: float = 120.0
) -> None:
    """Waits until the last micro-batch's source end offset (parsed JSON) is `reached`: the
    input was read by a query on an interval trigger (whose no-data batches the test wants)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        failure = query.exception()
        if failure is not None:
            raise failure
        progress = query.lastProgress
        if progress is not None and progress["sources"]:
            if reached(_offset(progress["sources"][0]["endOffset"])):
                return
        time.sleep(0.05)
    raise AssertionError(f"the query did not reach its input's end within {timeout} s")


def _offset(end: Any) -> Any:
    """A source's end offset as a value: PySpark 4.1 on gives JSON text (or the parsed value),
    4.0 the text of a Python dict."""
    if not isinstance(end, str):
        return end
    try:
        return json.loads(end)
    except json.JSONDecodeError:
        return ast.literal_eval(end)


def runQuery(
    pipeline: sw.Pipeline,
    checkpoint: Path,
    feed: Callable[[StreamingQuery], None],
    *,
    trigger: dict[str, Any] | None = None,
    linger: float = 0.0,
) -> StreamResult:
    """Starts the pipeline's query (every output collected per micro-batch), calls `feed(query)`
    (which delivers the input and waits for it), waits `linger` seconds more and stops."""
    split = _runtime.splitOutputs(
        pipeline.planJson(),
        pipeline.processFunction,
        pipeline.outputSchema,
        pipeline.lateOutputTag,
        pipeline.paneAggregates,
    )
    result = StreamResult()

    def perBatch(batch: DataFrame, batchId: int) -> None:
        batch.persist()
        outputs = {}
        for tag, out in split(batch).items():
            rows = [r.asDict(recursive=True) for r in plainTimestamps(out).collect()]
            for r in rows:
                r["_batch"] = batchId
            outputs[tag] = rows
        result.byBatch[batchId] = outputs
        batch.unpersist()

    writer = (
        _runtime.observed(pipeline._union())
        .writeStream.foreachBatch(perBatch)
        .option("checkpointLocation", str(checkpoint))
    )
    query = (writer.trigger(**trigger) if trigger else writer).start()
    try:
        feed(query)
        time.sleep(linger)
    finally:
        query.stop()
    result.checkpoint = checkpoint
    committed = {dict(p)["batchId"]: dict(p) for p in query.recentProgress}
    result.progress = [committed[b] for b in sorted(committed)]
    result._settle()
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


def channelHarness(
    pipeline: sw.Pipeline,
    result: StreamResult,
    batches: list[Batch],
    channel: str,
    generated: Callable[[int], int],
    idleTimeout: int | None = None,
) -> WindowHarness:
    """A harness fed what a stream with per-channel watermarks saw (``channelHarnessOf``), from
    a run's progress: each micro-batch's time and the file it read."""
    times = result.batchTimes()
    files = iter(batches)
    schedule = [
        Scheduled(
            p["batchId"],
            times[p["batchId"]],
            0,
            next(files) if result.rowsByBatch[p["batchId"]] > 0 else [],
        )
        for p in result.progress
    ]
    return channelHarnessOf(pipeline, schedule, channel, generated, idleTimeout)


@dataclass
class Scheduled:
    """One micro-batch as a checkpoint records it: its id, time, Spark's watermark and rows."""

    batchId: int
    time: int
    watermark: int
    rows: Batch


def scheduleOf(checkpoint: Path, batches: list[Batch]) -> list[Scheduled]:
    """Every committed micro-batch of a file-source query over ``batches`` (one file a batch,
    named ``batch-<n>.json`` as ``writeBatches`` names them), from its checkpoint: the offset
    log's times, watermarks and the file source's offset (its own log's entry), and that log's
    record of which files each entry added."""
    committed = sorted(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit())
    out = []
    read = -1  # the file source's log entries a batch read: after the last batch's, up to its own
    for b in committed:
        lines = (checkpoint / "offsets" / str(b)).read_text().splitlines()
        meta = json.loads(lines[1])
        upTo = json.loads(lines[2])["logOffset"] if len(lines) > 2 and lines[2] != "-" else read
        rows: Batch = []
        for entry in range(read + 1, upTo + 1):
            for line in (checkpoint / "sources" / "0" / str(entry)).read_text().splitlines()[1:]:
                name = Path(json.loads(line)["path"]).name
                rows = rows + batches[int(name.removeprefix("batch-").removesuffix(".json"))]
        read = max(read, upTo)
        out.append(
            Scheduled(b, int(meta["batchTimestampMs"]), int(meta.get("batchWatermarkMs", 0)), rows)
        )
    return out


def harnessOf(
    pipeline: sw.Pipeline, schedule: list[Scheduled], processingTime: bool
) -> WindowHarness:
    """A harness fed each micro-batch as Spark ran it: processing time at the batch's time (with
    ``processingTime``), Spark's watermark, then its rows."""
    h = WindowHarness(pipeline)
    for s in schedule:
        if processingTime:
            h.setProcessingTime(s.time)
        if s.watermark > 0:
            h.processWatermark(s.watermark)
        if s.rows:
            h.processElements(s.rows)
    return h


def channelHarnessOf(
    pipeline: sw.Pipeline,
    schedule: list[Scheduled],
    channel: str,
    generated: Callable[[int], int],
    idleTimeout: int | None = None,
) -> WindowHarness:
    """A harness fed what a stream with per-channel watermarks saw, by the contract of
    docs/DESIGN.md ("Channels on a live stream"): each micro-batch's rows on their channels,
    then at the batch's time the channels idle for `idleTimeout` go idle (by deadline, then id),
    the channels that delivered are active, and each emits `generated(largest time so far)` (in
    id order). Channels that have not delivered yet are idle, except those the pipeline declares
    (``channels=``): they turn active at the first batch with data, before its idleness, with
    their last data at its time.
    """
    declared = pipeline.plan["channels"] or []
    seen = {str(r[channel]) for s in schedule for r in s.rows if r.get(channel) is not None}
    ids = sorted(seen | set(declared))
    index = {c: i for i, c in enumerate(ids)}
    h = WindowHarness(pipeline, channels=len(ids))
    for i in range(len(ids)):
        h.markIdle(i)
    maxSeen: dict[str, int] = {}
    lastData: dict[str, int] = {}
    idle = set(ids)
    joined = False
    for s in schedule:
        now = s.time
        delivered: dict[str, int] = {}
        for row in s.rows:
            if row.get(channel) is None or row.get(pipeline.plan["timestamp"]) is None:
                h.processElement(row)  # to errors, as on Spark
                continue
            c = str(row[channel])
            h.processElement(row, index[c])
            ts = millis(row[pipeline.plan["timestamp"]])
            delivered[c] = max(delivered.get(c, ts), ts)
        if delivered and declared and not joined:
            joined = True
            for c in declared:
                if c not in lastData:
                    lastData[c] = now
                    h.markActive(index[c])
                    idle.discard(c)
        if idleTimeout is not None:
            due = [
                c
                for c in ids
                if c not in idle and c in lastData and lastData[c] <= now - idleTimeout
            ]
            for c in sorted(due, key=lambda c: (lastData[c], c)):
                h.markIdle(index[c])
                idle.add(c)
        for c in sorted(delivered):
            maxSeen[c] = max(maxSeen.get(c, delivered[c]), delivered[c])
            lastData[c] = now
            if c in idle:
                h.markActive(index[c])
                idle.discard(c)
        for c in sorted(delivered):
            h.processWatermark(generated(maxSeen[c]), index[c])
    return h


# The script the classic and Spark Connect suites both run (test_spark_streaming, test_connect):
# out of order, late within the allowed lateness and beyond it, a null timestamp. Watermarks
# (bound 2 s) after each batch: 1999, 9999, 18999, 32999, 32999, 97999.
SCHEMA = "user string, amount long, ts long"
BOUND = 2000


def row(user: str, amount: int, ts: int | None) -> dict:
    return {"user": user, "amount": amount, "ts": ts}


SCRIPT = [
    [row("a", 1, 1000), row("b", 2, 2000), row("a", 3, 4000)],
    [row("a", 4, 12000), row("b", 5, 9000), row("a", 99, None)],
    [row("a", 6, 3000), row("b", 7, 21000), row("c", 8, 15000)],  # a@3000: within lateness
    [row("a", 9, 8000), row("a", 10, 35000)],  # a@8000: beyond lateness
    [row("b", 11, 11000), row("c", 12, 2000)],  # both beyond lateness
    [row("z", 0, 100000)],  # moves the watermark past every window above
]


def scripted(df: DataFrame) -> sw.DataStream:
    """The script's rows as a sparkwin stream: event time `ts`, a bound of `BOUND`."""
    return sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND))


def tumbling(df: DataFrame) -> sw.Pipeline:
    return (
        scripted(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .allowedLateness(5_000)
        .sideOutputLateData("late")
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )
