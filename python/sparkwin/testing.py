"""Unit-testing pipelines without a streaming query: ``WindowHarness``.

The harness runs the same JVM engine Spark runs, in process, through the session's gateway:
elements, watermarks, idleness and processing time go in by hand, results come out as dicts.
It needs a SparkSession only for the JVM. Values: timestamps are epoch milliseconds (ints) on
the way out; ``datetime`` or ints on the way in.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.types import DataType, DateType, DecimalType, StructType, TimestampType

from sparkwin import _connect
from sparkwin._jvm import entryPoint, translated
from sparkwin._runtime import PaneWindow, describe
from sparkwin.pipeline import Pipeline

__all__ = ["WindowHarness", "PaneWindow"]

_MIN_LONG = -(2**63)
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


def _fromJson(value: Any, dataType: DataType) -> Any:
    if value is None:
        return None
    if isinstance(dataType, DateType):
        return dt.date(1970, 1, 1) + dt.timedelta(days=value)
    if isinstance(dataType, DecimalType):
        return decimal.Decimal(value)
    return value


_INT_RANGES = {
    "bigint": (-(2**63), 2**63 - 1),
    "int": (-(2**31), 2**31 - 1),
    "smallint": (-(2**15), 2**15 - 1),
    "tinyint": (-(2**7), 2**7 - 1),
}


def _checkValue(name: str, value: Any, dataType: DataType) -> None:
    """A row's value must be one the column's type can hold, as Spark would insist: the engine
    would otherwise read a wrapped or defaulted value and compute a wrong answer silently."""
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
    elif isinstance(dataType, TimestampType):
        if isinstance(value, bool) or not isinstance(value, int | dt.datetime):
            raise TypeError(
                f"column {name!r} is a timestamp: give a datetime or epoch milliseconds, got "
                f"{type(value).__name__} {value!r}"
            )


class WindowHarness:
    """Drives a pipeline's engine by hand, as Flink's operator test harnesses do.

    ``channels`` input channels meet in a watermark valve; with ``generateWatermarks`` each
    channel runs the pipeline's WatermarkStrategy (elements feed it, ``setProcessingTime``
    emits its periodic watermark, punctuated strategies emit per element).

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
        self._pipeline = pipeline
        self._spark = spark or pipeline.df.sparkSession
        if _connect.isConnect(self._spark):  # Py4J only: the JVM a local Connect server runs in
            self._spark = _connect.localJvmSession("WindowHarness")
        self._channels = channels
        self._schemas = describe(self._spark, pipeline.planJson())
        self._input: StructType = self._pipeline.df.schema
        with translated():
            self._handle = entryPoint(self._spark).harness(
                pipeline.planJson(), channels, generateWatermarks
            )

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
        with translated():
            self._handle.processElement(json.dumps(_toJson(dict(row))), self._checkChannel(channel))

    def processElements(self, rows: Iterable[Mapping[str, Any]], channel: int = 0) -> None:
        """Feeds elements in order."""
        for row in rows:
            self.processElement(row, channel)

    def processWatermark(self, watermark: int | dt.datetime, channel: int = 0) -> None:
        """A watermark arrives on ``channel``; the valve decides what the engine sees."""
        self._handle.processWatermark(_millis(watermark, "watermark"), self._checkChannel(channel))

    def markIdle(self, channel: int) -> None:
        """Marks a channel idle: it no longer holds the valve's output back."""
        self._handle.markIdle(self._checkChannel(channel))

    def markActive(self, channel: int) -> None:
        """Marks a channel active again; it rejoins the minimum once it catches up."""
        self._handle.markActive(self._checkChannel(channel))

    def setProcessingTime(self, time: int | dt.datetime) -> None:
        """Moves processing time; due processing-time timers fire and periodic watermarks are
        emitted along the way."""
        self._handle.setProcessingTime(_millis(time, "time"))

    def endOfInput(self) -> None:
        """The input ended: the watermark jumps to +infinity and every event-time window fires."""
        self._handle.endOfInput()

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
        entries = json.loads(self._handle.extractOutput())
        if self._pipeline.processFunction is None:
            types = {f.name: f.dataType for f in self._schemas["result"].fields}
            return [{k: _fromJson(v, types[k]) for k, v in e.items()} for e in entries]
        out: list[dict[str, Any]] = []
        for entry in entries:
            out.extend(self._runProcess(entry["pane"], entry["elements"]))
        return out

    def _runProcess(
        self, pane: dict[str, Any], elements: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        fn = self._pipeline.processFunction
        assert fn is not None
        keys = list(self._pipeline.plan["keys"])
        pdf = pd.DataFrame(elements, columns=[f.name for f in self._input.fields])
        for f in self._input.fields:
            if isinstance(f.dataType, TimestampType):
                pdf[f.name] = pd.to_datetime(pdf[f.name], unit="ms")
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
        return [
            {k: (v.item() if hasattr(v, "item") else v) for k, v in rec.items()}
            for rec in result.to_dict(orient="records")
        ]

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
