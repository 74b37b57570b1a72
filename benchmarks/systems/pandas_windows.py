"""What a Python user writes today: the benchmark windows with `applyInPandasWithState`.

Per key, the state holds the open windows (fixed windows: start and running value; sessions:
start, end and count). Each call folds the new events in with numpy, emits the windows
the watermark has passed, and sets an event-time timeout at the earliest open window's end.
Correct for the benchmark's input (nothing arrives behind the watermark).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql.streaming.state import GroupStateTimeout
from pyspark.sql.types import BinaryType, StructField, StructType

from benchmarks.workloads import Workload

OUTPUT = "key string, start long, end long, value long"
# The state is one binary column of packed int64 columns (PySpark 4.3 fails to read array
# fields of an applyInPandasWithState state schema: KeyError 'elementType').
STATE = StructType([StructField("packed", BinaryType())])


def _pack(*columns: list[int]) -> tuple[bytes]:
    return (np.array([len(columns[0]), *[v for c in columns for v in c]], np.int64).tobytes(),)


def _unpack(state: Any, width: int) -> list[list[int]]:
    if not state.exists:
        return [[] for _ in range(width)]
    flat = np.frombuffer(state.get[0], np.int64)
    n = int(flat[0])
    return [flat[1 + i * n : 1 + (i + 1) * n].tolist() for i in range(width)]


def _millis(pdf: pd.DataFrame) -> np.ndarray:
    """Epoch milliseconds; Spark hands naive UTC timestamps (the session time zone is UTC)."""
    ts = pdf["ts"]
    if getattr(ts.dt, "tz", None) is not None:
        ts = ts.dt.tz_convert("UTC").dt.tz_localize(None)
    return ts.astype("datetime64[ms]").astype(np.int64).to_numpy()


def _sum_by(group: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact int64 sums of `values` per distinct `group`, groups ascending. numpy, not a pandas
    groupby: per key and batch there are a few dozen values, where groupby's set-up dominates."""
    if not len(group):
        return group, values
    order = np.argsort(group, kind="stable")
    group, values = group[order], values[order]
    first = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
    return group[first], np.add.reduceat(values, first)


def fixed_windows(w: Workload):
    size, slide = w.size_ms, w.slide_ms
    per_event = size // slide

    def fn(key: Any, pdfs: Iterator[pd.DataFrame], state: Any) -> Iterator[pd.DataFrame]:
        starts, values = _unpack(state, 2)
        open_ = dict(zip(starts, values, strict=True))
        if not state.hasTimedOut:
            for pdf in pdfs:
                ts = _millis(pdf)
                value = (
                    pdf["amount"].to_numpy()
                    if w.aggregate == "sum"
                    else np.ones(len(pdf), np.int64)
                )
                last = ts - np.mod(ts, slide)
                starts = np.concatenate([last - j * slide for j in range(per_event)])
                values = np.tile(value, per_event)
                inside = starts > np.tile(ts, per_event) - size
                window, sums = _sum_by(starts[inside], values[inside])
                for s, v in zip(window.tolist(), sums.tolist(), strict=True):
                    open_[s] = open_.get(s, 0) + v
        wm = state.getCurrentWatermarkMs()
        done = sorted(s for s in open_ if s + size - 1 <= wm)
        if done:
            yield pd.DataFrame(
                {
                    "key": key[0],
                    "start": done,
                    "end": [s + size for s in done],
                    "value": [open_.pop(s) for s in done],
                }
            )
        if open_:
            state.update(_pack(list(open_), list(open_.values())))
            state.setTimeoutTimestamp(min(open_) + size)
        else:
            state.remove()

    return fn


def sessions(w: Workload):
    gap = w.gap_ms

    def fn(key: Any, pdfs: Iterator[pd.DataFrame], state: Any) -> Iterator[pd.DataFrame]:
        starts, ends, values = _unpack(state, 3)
        if not state.hasTimedOut:
            for pdf in pdfs:
                ts = _millis(pdf)
                starts += ts.tolist()
                ends += (ts + gap).tolist()
                values += [1] * len(ts)
        s, e, v = np.array(starts, np.int64), np.array(ends, np.int64), np.array(values, np.int64)
        order = np.argsort(s, kind="stable")
        s, e, v = s[order], e[order], v[order]
        if len(s):
            # Touching or overlapping intervals merge: a new session starts after a gap.
            reach = np.maximum.accumulate(e)
            first = np.flatnonzero(np.concatenate([[True], s[1:] > reach[:-1]]))
            s, e, v = s[first], np.maximum.reduceat(e, first), np.add.reduceat(v, first)
        wm = state.getCurrentWatermarkMs()
        done = e - 1 <= wm
        if done.any():
            yield pd.DataFrame({"key": key[0], "start": s[done], "end": e[done], "value": v[done]})
        rest = ~done
        if rest.any():
            state.update(_pack(s[rest].tolist(), e[rest].tolist(), v[rest].tolist()))
            state.setTimeoutTimestamp(int(e[rest].min()))
        else:
            state.remove()

    return fn


def windowed(df: DataFrame, w: Workload) -> DataFrame:
    fn = sessions(w) if w.kind == "session" else fixed_windows(w)
    return df.groupBy("key").applyInPandasWithState(
        fn, OUTPUT, STATE, "append", GroupStateTimeout.EventTimeTimeout
    )
