"""Unit-testing pipelines without a streaming query: ``WindowHarness``.

The harness runs the same JVM engine Spark runs, in process, through the session's gateway:
elements, watermarks, idleness and processing time go in by hand, results come out as dicts.
It needs a SparkSession only for the JVM. Values: timestamps are epoch milliseconds (ints) on
the way out; ``datetime`` or ints on the way in. Dates are ``date``s, or days since 1970-01-01
(ints) in and where Python's ``date`` cannot hold them out. A value its column cannot hold (as
Spark's type would not) is refused, naming the column.

The harness also keeps a run log (``runLog()``): every call, what became of each element (as
the engine decided it, returned by the call), which panes fired when (from the engine's count)
and the watermarks after each call, for ``sparkwin.plot.timeline``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DateType,
    DecimalType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from sparkwin import _transport as transport
from sparkwin._spark.runtime import PaneWindow, describe
from sparkwin.errors import translated
from sparkwin.pipeline import Pipeline

__all__ = ["WindowHarness", "PaneWindow", "RunLog", "Step", "FiredPane"]

_MIN_LONG = -(2**63)
_MAX_LONG = 2**63 - 1
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _millis(value: int | dt.datetime, name: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int of epoch milliseconds or a datetime, got a bool")
    if isinstance(value, int):
        return value
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return (aware - _EPOCH) // dt.timedelta(milliseconds=1)
    raise TypeError(
        f"{name} must be an int of epoch milliseconds or a datetime, got {type(value).__name__}"
    )


def _toJson(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return _millis(value, "timestamp")
    if isinstance(value, dt.date):
        return (value - dt.date(1970, 1, 1)).days
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_toJson(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _toJson(v) for k, v in value.items()}
    return value


_EPOCH_DAY = dt.date(1970, 1, 1)
_DAYS = ((dt.date.min - _EPOCH_DAY).days, (dt.date.max - _EPOCH_DAY).days)


def _fromJson(value: Any, dataType: DataType) -> Any:
    if value is None:
        return None
    if isinstance(dataType, DateType):
        # Python's date holds years 1 to 9999; a date Spark holds beyond them stays its days.
        return _EPOCH_DAY + dt.timedelta(days=value) if _DAYS[0] <= value <= _DAYS[1] else value
    if isinstance(dataType, DecimalType):
        return decimal.Decimal(value)
    return value


_INT_RANGES = {
    "bigint": (-(2**63), 2**63 - 1),
    "int": (-(2**31), 2**31 - 1),
    "smallint": (-(2**15), 2**15 - 1),
    "tinyint": (-(2**7), 2**7 - 1),
}


# What Spark's types hold beyond the longs and ints above: a timestamp is a long of microseconds
# (so whole milliseconds within these), a date an int of days.
_TIMESTAMP_MS = (-((2**63) // 1000), (2**63 - 1) // 1000)
_DATE_DAYS = (-(2**31), 2**31 - 1)


def _checkValue(name: str, value: Any, dataType: DataType) -> None:
    """A row's value must be one the column's type can hold, as Spark would insist: the engine
    would otherwise read a wrapped or defaulted value and compute a wrong answer silently. Arrays
    and structs are checked value by value (``column[0]``, ``column.field``)."""
    if value is None:
        return
    kind = dataType.simpleString()
    if kind in _INT_RANGES:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"column {name!r} is {kind}: got {type(value).__name__} {value!r}")
        low, high = _INT_RANGES[kind]
        if not low <= value <= high:
            raise ValueError(f"column {name!r} is {kind}: {value} is outside [{low}, {high}]")
    elif kind in ("double", "float"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"column {name!r} is {kind}: got {type(value).__name__} {value!r}")
    elif kind == "string":
        if not isinstance(value, str):
            raise TypeError(f"column {name!r} is string: got {type(value).__name__} {value!r}")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise TypeError(f"column {name!r} is boolean: got {type(value).__name__} {value!r}")
    elif isinstance(dataType, TimestampType | TimestampNTZType):
        if isinstance(value, bool) or not isinstance(value, int | dt.datetime):
            raise TypeError(
                f"column {name!r} is a timestamp: give a datetime or epoch milliseconds, got "
                f"{type(value).__name__} {value!r}"
            )
        low, high = _TIMESTAMP_MS
        if isinstance(value, int) and not low <= value <= high:
            raise ValueError(
                f"column {name!r} is a timestamp: {value} ms is outside what Spark holds "
                f"([{low}, {high}] ms, a long of microseconds)"
            )
    elif isinstance(dataType, DateType):
        if isinstance(value, bool) or not isinstance(value, int | dt.date):
            raise TypeError(
                f"column {name!r} is a date: give a date or days since 1970-01-01, got "
                f"{type(value).__name__} {value!r}"
            )
        low, high = _DATE_DAYS
        if isinstance(value, int) and not low <= value <= high:
            raise ValueError(
                f"column {name!r} is a date: {value} days is outside what Spark holds "
                f"([{low}, {high}], an int of days)"
            )
    elif isinstance(dataType, DecimalType):
        _checkDecimal(name, value, dataType)
    elif isinstance(dataType, ArrayType):
        if not isinstance(value, list | tuple):
            raise TypeError(f"column {name!r} is {kind}: got {type(value).__name__} {value!r}")
        for i, item in enumerate(value):
            _checkValue(f"{name}[{i}]", item, dataType.elementType)
    elif isinstance(dataType, StructType):
        if not isinstance(value, Mapping):
            raise TypeError(f"column {name!r} is a struct: give a dict, got {type(value).__name__}")
        unknown = sorted(set(value) - set(dataType.fieldNames()))
        if unknown:
            raise ValueError(
                f"column {name!r} has no fields {unknown}; it has {dataType.fieldNames()}"
            )
        for f in dataType.fields:
            _checkValue(f"{name}.{f.name}", value.get(f.name), f.dataType)


def _checkDecimal(name: str, value: Any, dataType: DecimalType) -> None:
    """A decimal column takes a ``Decimal`` or an int that fits its precision once rounded to its
    scale (half up, as Spark rounds)."""
    kind = dataType.simpleString()
    if isinstance(value, bool) or not isinstance(value, int | decimal.Decimal):
        raise TypeError(
            f"column {name!r} is {kind}: give a Decimal or an int, got "
            f"{type(value).__name__} {value!r}"
        )
    number = decimal.Decimal(value)
    if not number.is_finite():
        raise ValueError(f"column {name!r} is {kind}: {value} is not a finite number")
    before = dataType.precision - dataType.scale  # digits before the point
    if number.adjusted() <= before:  # rounded only where it may fit: a bounded precision
        exact = decimal.Context(prec=dataType.precision + 2)
        step = decimal.Decimal(1).scaleb(-dataType.scale)
        number = number.quantize(step, decimal.ROUND_HALF_UP, exact)
    if number and number.adjusted() >= before:
        raise ValueError(
            f"column {name!r} is {kind}: {value} has more than {before} digits before the point"
        )


@dataclass(frozen=True, slots=True)
class Step:
    """One call of a harness run (see ``WindowHarness.runLog``).

    Attributes:
        kind: ``"element"``, ``"watermark"``, ``"idle"``, ``"active"``, ``"processingTime"`` or
            ``"endOfInput"``.
        channel: the input channel the call named (None for the others).
        value: the element's event time, the watermark or the processing time given (epoch ms;
            None when the element had no usable timestamp).
        key: the element's key values, in ``keyBy`` order (``()`` for ``windowAll``).
        fate: what became of the element, as the engine decided it: ``"accepted"`` (in a
            window), ``"late"`` (to the late side output), ``"dropped"`` (late, in no window or
            in a closed one, counted) or ``"error"`` (to the ``errors`` output: no usable
            timestamp, or a bad dynamic gap). None for other calls.
        panes: how many panes fired during the call.
        watermark: the engine's watermark after the call: the valve's output (None before the
            first), ``2**63 - 1`` (+infinity) from ``endOfInput()`` on.
        channelWatermarks: each channel's watermark after the call, with more than one channel.
    """

    kind: str
    channel: int | None
    value: int | None
    key: tuple[Any, ...] | None
    fate: str | None
    panes: int
    watermark: int | None
    channelWatermarks: tuple[int | None, ...] | None


@dataclass(frozen=True, slots=True)
class FiredPane:
    """A pane the engine fired, with the index of the ``Step`` that fired it.

    ``windowStart``/``windowEnd`` are epoch ms (None for global windows, and ``windowStart`` for
    Storm windows without a start).
    """

    step: int
    key: tuple[Any, ...]
    windowStart: int | None
    windowEnd: int | None
    timing: str
    index: int
    isLast: bool


@dataclass(frozen=True, slots=True)
class RunLog:
    """A harness run so far: its calls in order, and every pane fired, in firing order.

    Attributes:
        steps: every call, in order (a ``Step`` each).
        panes: every pane fired, in firing order (a ``FiredPane`` each).
        keyColumns: the pipeline's key columns (empty for ``windowAll``).
        timestampColumn: the event-time column; ``timestampIsTime`` whether it is a timestamp.
        channels: the number of input channels.

    Example::

        log = h.runLog()
        [s.kind for s in log.steps]          # ['element', 'element', 'watermark']
        [(p.step, p.timing) for p in log.panes]   # [(2, 'ON_TIME')]
    """

    steps: list[Step]
    panes: list[FiredPane]
    keyColumns: list[str]
    timestampColumn: str
    timestampIsTime: bool
    channels: int


class WindowHarness:
    """Drives a pipeline's engine by hand, as Flink's operator test harnesses do.

    ``channels`` input channels meet in a watermark valve; with ``generateWatermarks`` each
    channel runs the pipeline's WatermarkStrategy (elements feed it, ``setProcessingTime``
    emits its periodic watermark, punctuated strategies emit per element). With ``record``
    (the default) every call is kept in the run log (``runLog()``) that
    ``sparkwin.plot.timeline`` draws; it costs one small JVM call per call (two or three for
    calls that can move the watermark); turn it off to feed millions of elements.

    Example::

        from sparkwin.testing import WindowHarness
        h = WindowHarness(pipeline)
        h.processElement({"user": "a", "amount": 3, "ts": 1000})
        h.processWatermark(59_999)
        h.extractOutput()   # [{'user': 'a', 'window_start': 0, 'window_end': 60000, ...}]
    """

    def __init__(
        self,
        pipeline: Pipeline,
        channels: int = 1,
        generateWatermarks: bool = False,
        spark: SparkSession | None = None,
        record: bool = True,
    ) -> None:
        if not isinstance(pipeline, Pipeline):
            raise TypeError(
                "pipeline must be what .aggregate() or .process() returned, "
                f"got {type(pipeline).__name__}"
            )
        if isinstance(channels, bool) or not isinstance(channels, int) or channels < 1:
            raise ValueError(f"channels must be a positive int, got {channels!r}")
        if not isinstance(generateWatermarks, bool):
            raise TypeError("generateWatermarks must be a bool")
        if not isinstance(record, bool):
            raise TypeError("record must be a bool")
        self._pipeline = pipeline
        # The engine runs in this process's JVM: a local Connect server's is the same.
        self._spark = transport.of(spark or pipeline.df.sparkSession).localSession("WindowHarness")
        self._channels = channels
        self._schemas = describe(self._spark, pipeline.planJson())
        # The columns a row gives: the input's, without those Spark computes from Columns.
        self._input = StructType(
            [f for f in pipeline.df.schema.fields if f.name not in pipeline.computed]
        )
        self._handle = transport.of(self._spark).harness(
            pipeline.planJson(), channels, generateWatermarks
        )
        self._generate = generateWatermarks
        self._keyColumns: list[str] = list(pipeline.plan["keys"])
        self._tsColumn: str = pipeline.plan["timestamp"]
        # Output pulled from the JVM for the run log but not yet handed out by extractOutput().
        self._pending: list[dict[str, Any]] = []
        self._recording = record
        self._steps: list[Step] = []
        self._paneSteps: list[int] = []  # the step of every pane fired, in firing order
        self._panes: list[FiredPane] = []  # the panes pulled so far, in firing order
        self._fired = self._panesFired() if record else 0  # the engine's count of panes

    def _checkChannel(self, channel: int) -> int:
        if isinstance(channel, bool) or not isinstance(channel, int):
            raise TypeError(f"channel must be an int, got {type(channel).__name__}")
        if not 0 <= channel < self._channels:
            raise ValueError(f"channel must be in [0, {self._channels}), got {channel}")
        return channel

    def processElement(self, row: Mapping[str, Any], channel: int = 0) -> None:
        """Feeds one element (a dict of input columns; missing columns are null)."""
        if not isinstance(row, Mapping):
            raise TypeError(f"row must be a dict of column values, got {type(row).__name__}")
        unknown = sorted(set(row) - set(self._input.fieldNames()))
        if unknown:
            raise ValueError(
                f"row has unknown columns {unknown}; the pipeline's input has "
                f"{self._input.fieldNames()}"
            )
        for f in self._input.fields:
            _checkValue(f.name, row.get(f.name), f.dataType)
        if self._pipeline.computed:
            row = self._withComputed(row)
        with translated():
            fate = str(
                self._handle.processElement(
                    json.dumps(_toJson(dict(row))), self._checkChannel(channel)
                )
            )
        if self._recording:
            ts = row.get(self._tsColumn)
            self._record(
                "element",
                channel,
                _millis(ts, "timestamp") if isinstance(ts, int | dt.datetime) else None,
                key=tuple(row.get(k) for k in self._keyColumns),
                fate=fate,
                watermarkMoves=self._generate,  # punctuated strategies emit per element
            )

    def _withComputed(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The row with the columns the pipeline's aggregates compute from Spark Columns,
        computed by Spark from a one-row DataFrame (as the stream would: no Python evaluates
        them). The pipeline's own session computes them: a Spark Connect client's Columns are
        its session's."""
        one = self._pipeline.df.sparkSession.createDataFrame(
            [tuple(row.get(f.name) for f in self._input.fields)], self._input
        )
        values = one.select(*[c.alias(name) for name, c in self._pipeline.computed.items()]).first()
        return {**row, **(values.asDict() if values is not None else {})}

    def processElements(self, rows: Iterable[Mapping[str, Any]], channel: int = 0) -> None:
        """Feeds elements in order."""
        for row in rows:
            self.processElement(row, channel)

    def processWatermark(self, watermark: int | dt.datetime, channel: int = 0) -> None:
        """A watermark arrives on ``channel``; the valve decides what the engine sees."""
        value = _millis(watermark, "watermark")
        self._handle.processWatermark(value, self._checkChannel(channel))
        if self._recording:
            self._record("watermark", channel, value)

    def markIdle(self, channel: int) -> None:
        """Marks a channel idle: it no longer holds the valve's output back."""
        self._handle.markIdle(self._checkChannel(channel))
        if self._recording:
            self._record("idle", channel, None)

    def markActive(self, channel: int) -> None:
        """Marks a channel active again; it rejoins the minimum once it catches up."""
        self._handle.markActive(self._checkChannel(channel))
        if self._recording:
            self._record("active", channel, None)

    def setProcessingTime(self, time: int | dt.datetime) -> None:
        """Moves processing time; due processing-time timers fire and periodic watermarks are
        emitted along the way."""
        value = _millis(time, "time")
        self._handle.setProcessingTime(value)
        if self._recording:
            # Processing time moves the watermark only through generated periodic emission.
            self._record("processingTime", None, value, watermarkMoves=self._generate)

    def endOfInput(self) -> None:
        """The input ended: the watermark jumps to +infinity and every event-time window fires."""
        self._handle.endOfInput()
        if self._recording:
            self._record("endOfInput", None, None)

    def currentWatermark(self) -> int | None:
        """The valve's output watermark, or None before the first one."""
        wm = int(self._handle.currentWatermark())
        return None if wm == _MIN_LONG else wm

    def channelStatus(self) -> list[dict[str, Any]]:
        """The valve's view of every input channel, in channel order: ``watermark`` (None before
        its first), ``idle``, and ``aligned`` (a channel back from idleness behind the output
        does not hold it back until it catches up)."""
        status = json.loads(self._handle.channelStatus())
        for c in status:
            if c["watermark"] == _MIN_LONG:
                c["watermark"] = None
        return status

    def currentProcessingTime(self) -> int:
        return int(self._handle.currentProcessingTime())

    def extractOutput(self) -> list[dict[str, Any]]:
        """Results since the last call, in emission order.

        Aggregate pipelines give the output row's columns (``window_start``/``window_end`` as
        epoch milliseconds, None for global windows). Process pipelines give the rows the
        process function returned, pane by pane.
        """
        self._pull()
        entries, self._pending = self._pending, []
        if self._pipeline.processFunction is None:
            types = {f.name: f.dataType for f in self._schemas["result"].fields}
            rows = [
                {k: _fromJson(v, types[k]) for k, v in e.items() if k != "elements"}
                for e in entries
            ]
            panes = self._pipeline.paneAggregates
            if panes is None:
                return rows
            # Each result entry holds its pane's elements for the pandas aggregates.
            names = [f.name for f in panes.schema(self._schemas["result"]).fields]
            return [
                {k: _plain(v) for k, v in panes.row(row, self._frame(e["elements"]), names).items()}
                for row, e in zip(rows, entries, strict=True)
            ]
        out: list[dict[str, Any]] = []
        for entry in entries:
            out.extend(self._runProcess(entry["pane"], entry["elements"]))
        return out

    def _pull(self) -> None:
        """Moves the JVM's output into ``_pending``, noting each pane in the run log."""
        entries = json.loads(self._handle.extractOutput())
        if self._recording:
            for entry in entries:
                pane = entry.get("pane", entry)  # process pipelines: {"pane": ..., "elements"}
                n = len(self._panes)
                # A call that raised was not recorded: its panes go to the next call's step.
                step = self._paneSteps[n] if n < len(self._paneSteps) else len(self._steps)
                self._panes.append(
                    FiredPane(
                        step=step,
                        key=tuple(pane[k] for k in self._keyColumns),
                        windowStart=pane["window_start"],
                        windowEnd=pane["window_end"],
                        timing=pane["pane_timing"],
                        index=pane["pane_index"],
                        isLast=pane["pane_is_last"],
                    )
                )
        self._pending.extend(entries)

    def _panesFired(self) -> int:
        return int(self._handle.panesFired())

    def _record(
        self,
        kind: str,
        channel: int | None,
        value: int | None,
        key: tuple[Any, ...] | None = None,
        fate: str | None = None,
        watermarkMoves: bool = True,
    ) -> None:
        """Appends a call to the run log: ``fate`` is what the engine said of the call's element;
        the change of the engine's pane count says how many panes the call fired; the watermarks
        are read only after calls that can move them."""
        fired = self._panesFired()
        fired, self._fired = fired - self._fired, fired
        self._paneSteps.extend([len(self._steps)] * fired)
        last = self._steps[-1] if self._steps else None
        if watermarkMoves or last is None:
            watermark = self.currentWatermark()
            channels = (
                tuple(c["watermark"] for c in self.channelStatus()) if self._channels > 1 else None
            )
        else:
            watermark, channels = last.watermark, last.channelWatermarks
        if kind == "endOfInput" or (last is not None and last.watermark == _MAX_LONG):
            # The engine's watermark, past the valve's: +infinity from the end of input on.
            watermark = _MAX_LONG
        self._steps.append(Step(kind, channel, value, key, fate, fired, watermark, channels))

    def runLog(self) -> RunLog:
        """The run so far, for ``sparkwin.plot.timeline``: every call (``Step``) and every pane
        fired (``FiredPane``, with the step that fired it). Output not yet extracted stays for
        ``extractOutput()``.

        Example::

            h.processElement({"user": "a", "amount": 3, "ts": 1_000})
            h.processWatermark(9_999)
            log = h.runLog()
            log.steps[0].fate, log.panes[0].step, log.steps[1].watermark   # ('accepted', 1, 9999)
        """
        if not self._recording:
            raise ValueError(
                "this harness does not record its run: create it with WindowHarness(..., "
                "record=True) (the default)"
            )
        self._pull()
        return RunLog(
            steps=list(self._steps),
            panes=list(self._panes),
            keyColumns=list(self._keyColumns),
            timestampColumn=self._tsColumn,
            timestampIsTime=isinstance(self._input[self._tsColumn].dataType, TimestampType),
            channels=self._channels,
        )

    def _runProcess(
        self, pane: dict[str, Any], elements: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        fn = self._pipeline.processFunction
        assert fn is not None
        keys = list(self._pipeline.plan["keys"])
        pdf = self._frame(elements)
        window = PaneWindow(
            start=_dtOf(pane["window_start"]),
            end=_dtOf(pane["window_end"]),
            paneTiming=pane["pane_timing"],
            paneIndex=pane["pane_index"],
            paneIsFirst=pane["pane_is_first"],
            paneIsLast=pane["pane_is_last"],
        )
        result = fn(tuple(pane[k] for k in keys), window, pdf)
        if not isinstance(result, pd.DataFrame):
            raise TypeError(
                f"the process function must return a pandas DataFrame, got {type(result).__name__}"
            )
        return [{k: _plain(v) for k, v in rec.items()} for rec in result.to_dict(orient="records")]

    def _frame(self, elements: list[dict[str, Any]]) -> pd.DataFrame:
        """A pane's elements (the JVM's JSON rows) as the pandas DataFrame Spark would give."""
        fields = self._pipeline.df.schema.fields  # computed columns too: the elements hold them
        pdf = pd.DataFrame(elements, columns=[f.name for f in fields])
        for f in fields:
            if isinstance(f.dataType, TimestampType):
                pdf[f.name] = pd.to_datetime(pdf[f.name], unit="ms")
        return pdf

    def extractSideOutput(self, tag: str) -> list[dict[str, Any]]:
        """A side output's rows since the last call: the late tag, or ``errors``."""
        if not isinstance(tag, str):
            raise TypeError(f"tag must be a string, got {type(tag).__name__}")
        try:
            rows = json.loads(self._handle.extractSideOutput(tag))
        except Exception as exc:  # Py4JJavaError carrying the JVM's explanation
            raise ValueError(str(exc).splitlines()[-1] if str(exc) else repr(exc)) from exc
        types = {f.name: f.dataType for f in self._schemas["errors"].fields}
        return [{k: _fromJson(v, types[k]) for k, v in r.items()} for r in rows]

    def numLateRecordsDropped(self) -> int:
        """Late elements dropped because the pipeline has no late side output."""
        return int(self._handle.numLateRecordsDropped())

    def numStateEntries(self) -> int:
        """Window contents, window metadata, session mappings, Storm queues and timers over
        all keys: 0 once every window has been cleaned up."""
        return int(self._handle.numStateEntries())

    def metrics(self) -> dict[str, int]:
        """The engine's counters (elements in, drops by cause, panes fired, windows ...)."""
        return {k: int(v) for k, v in json.loads(self._handle.metrics()).items()}


def _dtOf(ms: int | None) -> dt.datetime | None:
    if ms is None:
        return None
    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds; anything else as it is."""
    return value.item() if hasattr(value, "item") else value
