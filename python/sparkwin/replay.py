"""Replaying history with live-stream semantics: ``pipeline.replay()``.

A bounded DataFrame with an arrival column (and optionally a channel column) is run as the live
stream that delivered it would have run: each channel's watermark from the pipeline's strategy
(periodic emission and idleness in arrival time), the valve over the channels, then every key
in arrival order against that watermark timeline. Early firings, late data and the late side
output come out as the live job emitted them; each result says at which arrival time it fired.
This module only wraps what the JVM computes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from sparkwin import _transport as transport
from sparkwin._spark import runtime as _runtime
from sparkwin._spark.pane_aggregates import PaneAggregates

__all__ = ["Replay"]


class Pipeline(Protocol):
    """What a replay needs of a pipeline (`sparkwin.pipeline.Pipeline` is one)."""

    df: DataFrame
    plan: dict[str, Any]
    processFunction: Callable[..., Any] | None
    outputSchema: StructType | None
    paneAggregates: PaneAggregates | None

    def planJson(self) -> str: ...

    @property
    def lateOutputTag(self) -> str | None: ...


class Replay:
    """The outputs of a replay. Results have a ``fired_at`` column: the arrival value at which
    the pane fired (an element's arrival, a periodic watermark tick, or a processing-time
    timer). Call ``unpersist()`` when done: the replay caches its input (so both passes see the
    same arrival order) and its outputs (so every output reads one per-key pass).

    Example::

        replayed = pipeline.replay()
        replayed.toDF().orderBy("fired_at").show()
        replayed.getSideOutput("late").count()
        print(replayed.watermarkPassSeconds, len(replayed.timeline()))
    """

    def __init__(self, pipeline: Pipeline, handle: Any) -> None:
        self._pipeline = pipeline
        self._handle = handle
        spark = pipeline.df.sparkSession
        # Every output reads the same per-key pass: compute it once.
        self._union = DataFrame(handle.union(), spark).persist()

    @property
    def watermarkPassSeconds(self) -> float:
        """Wall-clock time of the first pass (channel summaries, generators and valve)."""
        return int(self._handle.watermarkPassMillis()) / 1000.0

    def timeline(self) -> list[tuple[int, int]]:
        """The valve's watermark timeline: (arrival time in ms, watermark) from that point on."""
        times = list(self._handle.timelineTimes())
        marks = list(self._handle.timelineWatermarks())
        return [(int(t), int(w)) for t, w in zip(times, marks, strict=True)]

    def channels(self) -> list[str]:
        """The channel values, in the order that numbers them 0, 1, ..."""
        return [str(c) for c in self._handle.channelValues()]

    def toDF(self) -> DataFrame:
        """The results the live stream would have emitted, with ``fired_at``."""
        p = self._pipeline
        return _runtime.mainOutput(
            self._union, p.planJson(), p.processFunction, p.outputSchema, p.paneAggregates
        )

    def getSideOutput(self, tag: str) -> DataFrame:
        """Late elements (the pipeline's late tag) or bad records (``errors``)."""
        if not isinstance(tag, str):
            raise TypeError(f"tag must be a string, got {type(tag).__name__}")
        return _runtime.sideOutput(self._union, tag, self._pipeline.lateOutputTag)

    def unpersist(self) -> None:
        """Releases the cached input and outputs."""
        self._union.unpersist()
        self._handle.unpersist()


def replay(pipeline: Pipeline, endOfInput: bool) -> Replay:
    if not isinstance(endOfInput, bool):
        raise TypeError("endOfInput must be a bool")
    spark = pipeline.df.sparkSession
    # What a plan needs to be replayed (a bounded input, event time, arrivals, a strategy) is the
    # JVM's to say (PlanRules.refuseReplay), before it reads any of the input.
    handle = transport.of(spark).replay(pipeline.df, pipeline.planJson(), endOfInput)
    return Replay(pipeline, handle)
