"""Pictures of what the windows did: ``timeline``.

Event-time bugs are timing bugs (why did this window fire early, why was that element late,
which channel held the watermark back); a timeline answers them at a glance, as the watermark
diagrams of Flink's web UI and Beam's pane diagrams do. This module only reads what a run
recorded: the harness's run log, a replay's results and watermark timeline, or output
DataFrames. It never changes a pipeline or a run, and it imports matplotlib only when it draws
(``pip install "sparkwin[plot]"``).
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql.types import TimestampNTZType, TimestampType

from sparkwin._plan.contract import ERRORS_TAG, FIRED_AT, WINDOW_COLUMNS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["timeline"]

_MIN_LONG = -(2**63)
_MAX_LONG = 2**63 - 1
_TIMINGS = ("EARLY", "ON_TIME", "LATE")
# Pane colours follow the traffic-light reading of Beam's timings; element markers differ in
# shape as well as colour so the picture survives greyscale printing.
_PANE_COLOURS = {"EARLY": "#1f77b4", "ON_TIME": "#2ca02c", "LATE": "#d62728"}
_ELEMENT_STYLES: dict[str, dict[str, Any]] = {
    "accepted": {"marker": "o", "s": 8, "color": "#777777", "alpha": 0.7, "label": "element"},
    "late": {"marker": "x", "s": 40, "color": "#ff7f0e", "label": "late element (side output)"},
    "dropped": {"marker": "X", "s": 45, "color": "black", "label": "dropped element"},
}
_WATERMARK_COLOUR = "#6a3d9a"
_CHANNEL_COLOURS = ("#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#9467bd")


def _requireMatplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "sparkwin.plot needs matplotlib, an optional extra: pip install 'sparkwin[plot]'"
        ) from exc


# ---------------------------------------------------------------------------------------------
# What a picture shows, whatever the source: positions are event time (epoch ms) on x and the
# run's arrival or processing order on y.


@dataclass
class _Element:
    key: tuple[Any, ...]
    time: int
    y: float
    fate: str  # accepted, late, dropped


@dataclass
class _Pane:
    key: tuple[Any, ...]
    start: int | None
    end: int | None
    timing: str
    y: float


@dataclass
class _Picture:
    kind: str
    keyColumns: list[str]
    keys: list[tuple[Any, ...]]  # the keys drawn, in lane order
    keyCount: int | None  # how many keys the run has; None: more than drawn, not counted
    yLabel: str
    xIsTime: bool
    yIsTime: bool
    elements: list[_Element] = field(default_factory=list)
    panes: list[_Pane] = field(default_factory=list)
    # (y, watermark) in y order: the watermark holds from y on; None before the first one.
    watermark: list[tuple[float, int | None]] = field(default_factory=list)
    channels: dict[str, list[tuple[float, int | None]]] = field(default_factory=dict)


def timeline(
    source: Any,
    path: str | os.PathLike[str] | None = None,
    *,
    keys: Iterable[Any] | None = None,
    maxKeys: int = 6,
    query: Any = None,
    timestamp: str | None = None,
) -> Figure:
    """Draws what a run's windows did: one matplotlib Figure with event time across and the
    run's arrival or processing order upwards, one lane per key. In each lane every window is a
    band (from its first element to its last pane), every pane a diamond at the window's end
    coloured by its timing (EARLY, ON_TIME, LATE), every element a dot (late elements a cross,
    dropped ones a bold cross), and the valve's watermark a staircase (each channel's dashed,
    when there are channels).

    ``source`` is one of:

    - a ``WindowHarness`` after a run: upwards is the order of its calls; every element, its
      fate, every pane and the valve's and each channel's watermark after every call (its
      ``runLog()``).
    - a ``Replay`` (``pipeline.replay()``): upwards is arrival; the elements (late ones from
      the late side output), the panes at ``fired_at`` and the valve's watermark timeline
      (the replay keeps no per-channel watermarks).
    - output DataFrames: the main output of an aggregate pipeline, or a dict of outputs by tag
      (``"main"``, the late tag, ``"errors"``) as ``toDF()``/``getSideOutput()`` give them or
      as read back from ``writeStream``'s directories. Upwards is ``batch_id`` when the rows
      have it (outputs read back from a stream), else ``fired_at``, else the pane index (a
      bounded run has no arrival order). ``query``: the StreamingQuery that wrote them (or its
      ``recentProgress``) adds each micro-batch's watermark (and each channel's). ``timestamp``
      names the late rows' event-time column when they have more than one timestamp column.

    Keys: the first ``maxKeys`` keys in sorted order, or the ``keys`` given (values, or tuples
    of values for several key columns). ``path`` also saves the figure as a PNG. Event times and
    arrivals that are timestamps are labelled in UTC.

    Example::

        from sparkwin.plot import timeline
        h = WindowHarness(pipeline)
        h.processElements(rows)
        h.processWatermark(60_000)
        fig = timeline(h, "timeline.png")        # also returns the matplotlib Figure
        timeline(pipeline.replay(), keys=["alice", "bob"])
    """
    _requireMatplotlib()
    if isinstance(maxKeys, bool) or not isinstance(maxKeys, int) or maxKeys < 1:
        raise ValueError(f"maxKeys must be a positive int, got {maxKeys!r}")
    wanted = None if keys is None else _keyTuples(keys)
    picture = _collect(source, wanted, maxKeys, query, timestamp)
    figure = _draw(picture)
    if path is not None:
        figure.savefig(os.fspath(path), dpi=110)
    return figure


def _keyTuples(keys: Iterable[Any]) -> list[tuple[Any, ...]]:
    if isinstance(keys, str | bytes) or not isinstance(keys, Iterable):
        raise TypeError(f"keys must be a list of key values, got {type(keys).__name__}")
    out = [k if isinstance(k, tuple) else (k,) for k in keys]
    if not out:
        raise ValueError("keys is empty: give the keys to draw, or None for a sample")
    return out


def _sortKey(key: tuple[Any, ...]) -> tuple[Any, ...]:
    # None sorts last; values of one key column share a type, so the rest compare.
    return tuple((v is None, "" if v is None else v) for v in key)


def _pick(
    present: Iterable[tuple[Any, ...]], wanted: list[tuple[Any, ...]] | None, maxKeys: int
) -> list[tuple[Any, ...]]:
    keys = sorted(set(present), key=_sortKey)
    if wanted is None:
        return keys[:maxKeys]
    missing = [k for k in wanted if k not in set(keys)]
    if missing:
        sample = ", ".join(map(repr, keys[:5]))
        raise ValueError(f"keys {missing} are not in this run; it has {len(keys)}, e.g. {sample}")
    return wanted


def _collect(
    source: Any,
    wanted: list[tuple[Any, ...]] | None,
    maxKeys: int,
    query: Any,
    timestamp: str | None,
) -> _Picture:
    from sparkwin.replay import Replay
    from sparkwin.testing import WindowHarness

    if isinstance(source, WindowHarness):
        return _fromHarness(source, wanted, maxKeys)
    if isinstance(source, Replay):
        return _fromReplay(source, wanted, maxKeys)
    if isinstance(source, DataFrame):
        source = {"main": source}
    if isinstance(source, Mapping) and all(isinstance(v, DataFrame) for v in source.values()):
        return _fromOutputs(source, wanted, maxKeys, query, timestamp)
    raise TypeError(
        "source must be a WindowHarness, a Replay (pipeline.replay()), an output DataFrame or "
        f"a dict of output DataFrames by tag, got {type(source).__name__}"
    )


# ---------------------------------------------------------------------------------------------
# Sources


def _fromHarness(h: Any, wanted: list[tuple[Any, ...]] | None, maxKeys: int) -> _Picture:
    log = h.runLog()
    elements = [
        _Element(s.key or (), s.value, i, s.fate or "accepted")
        for i, s in enumerate(log.steps)
        if s.kind == "element" and s.fate != "error" and s.value is not None
    ]
    panes = [_Pane(p.key, p.windowStart, p.windowEnd, p.timing, p.step) for p in log.panes]
    present = {e.key for e in elements} | {p.key for p in panes}
    picture = _Picture(
        kind="harness",
        keyColumns=log.keyColumns,
        keys=_pick(present, wanted, maxKeys),
        keyCount=len(present),
        yLabel="harness call (arrival order)",
        xIsTime=log.timestampIsTime,
        yIsTime=False,
        elements=elements,
        panes=panes,
        watermark=[(i, s.watermark) for i, s in enumerate(log.steps)],
    )
    if log.channels > 1:
        for c in range(log.channels):
            picture.channels[f"channel {c}"] = [
                (i, s.channelWatermarks[c] if s.channelWatermarks else None)
                for i, s in enumerate(log.steps)
            ]
    return picture


def _millis(df: DataFrame, column: str) -> Column:
    """A column as epoch milliseconds (timestamps) or a long (numbers)."""
    from sparkwin import _transport as transport

    F = transport.of(df).functions()
    c = F.col(f"`{column}`")
    kind = df.schema[column].dataType
    if isinstance(kind, TimestampType | TimestampNTZType):
        return F.unix_millis(c.cast("timestamp"))
    return c.cast("long")


def _isTime(df: DataFrame, column: str) -> bool:
    return isinstance(df.schema[column].dataType, TimestampType | TimestampNTZType)


def _sampleKeys(
    df: DataFrame, keyColumns: list[str], wanted: list[tuple[Any, ...]] | None, maxKeys: int
) -> tuple[list[tuple[Any, ...]], int | None]:
    """The keys to draw, read from ``df`` without collecting every key: the first ``maxKeys``
    in sorted order, and their number when that is all there are."""
    if not keyColumns:
        return [()], 1
    if wanted is not None:
        return wanted, len(wanted)
    quoted = [f"`{k}`" for k in keyColumns]
    rows = df.select(*quoted).distinct().orderBy(*quoted).limit(maxKeys + 1).collect()
    found = [tuple(r) for r in rows]
    return found[:maxKeys], (len(found) if len(found) <= maxKeys else None)


def _keyFilter(df: DataFrame, keyColumns: list[str], keys: list[tuple[Any, ...]]) -> DataFrame:
    if not keyColumns:
        return df
    from sparkwin import _transport as transport

    F = transport.of(df).functions()
    matches = [
        functools.reduce(
            lambda a, b: a & b,
            [F.col(f"`{c}`").eqNullSafe(v) for c, v in zip(keyColumns, key, strict=True)],
        )
        for key in keys
    ]
    return df.where(functools.reduce(lambda a, b: a | b, matches))


def _fromReplay(replayed: Any, wanted: list[tuple[Any, ...]] | None, maxKeys: int) -> _Picture:
    pipeline = replayed._pipeline
    plan = pipeline.plan
    keyColumns, ts, arrival = list(plan["keys"]), plan["timestamp"], plan["arrival"]
    history = pipeline.df
    keys, keyCount = _sampleKeys(history, keyColumns, wanted, maxKeys)

    def points(df: DataFrame) -> list[tuple[tuple[Any, ...], int, int]]:
        rows = (
            _keyFilter(df, keyColumns, keys)
            .select(
                *[f"`{k}`" for k in keyColumns],
                _millis(df, ts).alias("__t"),
                _millis(df, arrival).alias("__y"),
            )
            .collect()
        )
        n = len(keyColumns)
        return [(tuple(r[:n]), r[n], r[n + 1]) for r in rows if r[n] is not None]

    lateRows: list[tuple[tuple[Any, ...], int, int]] = []
    if pipeline.lateOutputTag is not None:
        lateRows = points(replayed.getSideOutput(pipeline.lateOutputTag))
    late = _counted(lateRows)
    elements = []
    for key, t, y in points(history):
        fate = "accepted"
        if late.get((key, t, y), 0) > 0:
            late[(key, t, y)] -= 1
            fate = "late"
        elements.append(_Element(key, t, y, fate))
    results = replayed.toDF()
    panes = _panesOf(results, keyColumns, keys, FIRED_AT)
    return _Picture(
        kind="replay",
        keyColumns=keyColumns,
        keys=keys,
        keyCount=keyCount,
        yLabel=f"arrival ({arrival})",
        xIsTime=_isTime(history, ts),
        yIsTime=_isTime(history, arrival),
        elements=elements,
        panes=panes,
        watermark=[(t, None if w <= _MIN_LONG else w) for t, w in replayed.timeline()],
    )


def _counted(items: Iterable[Any]) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def _panesOf(
    results: DataFrame, keyColumns: list[str], keys: list[tuple[Any, ...]], yColumn: str
) -> list[_Pane]:
    missing = [c for c in (*WINDOW_COLUMNS[:2], "pane_timing", yColumn) if c not in results.columns]
    if missing:
        raise ValueError(
            f"the results have no {missing} columns: timeline draws aggregate pipelines' "
            "outputs (a process() function's rows carry no panes)"
        )
    start, end = WINDOW_COLUMNS[:2]
    rows = (
        _keyFilter(results, keyColumns, keys)
        .select(
            *[f"`{k}`" for k in keyColumns],
            _millis(results, start).alias("__start"),
            _millis(results, end).alias("__end"),
            "pane_timing",
            _millis(results, yColumn).alias("__y"),
        )
        .collect()
    )
    n = len(keyColumns)
    return [_Pane(tuple(r[:n]), r[n], r[n + 1], r[n + 2], r[n + 3]) for r in rows]


def _fromOutputs(
    outputs: Mapping[str, DataFrame],
    wanted: list[tuple[Any, ...]] | None,
    maxKeys: int,
    query: Any,
    timestamp: str | None,
) -> _Picture:
    if "main" not in outputs:
        raise ValueError(f"the outputs need a 'main' DataFrame, got tags {sorted(outputs)}")
    main = outputs["main"]
    if WINDOW_COLUMNS[0] not in main.columns:
        raise ValueError(
            "the main output has no window_start column: timeline draws aggregate pipelines' "
            "results (keys, window_start, window_end, aggregates, pane columns)"
        )
    # An aggregate pipeline's results begin with its key columns (docs/plan.md).
    keyColumns = main.columns[: main.columns.index(WINDOW_COLUMNS[0])]
    if "batch_id" in main.columns:
        yColumn, yLabel = "batch_id", "micro-batch (batch_id)"
    elif FIRED_AT in main.columns:
        yColumn, yLabel = FIRED_AT, f"arrival ({FIRED_AT})"
    else:
        yColumn, yLabel = "pane_index", "pane index (a bounded run has no arrival order)"
    keys, keyCount = _sampleKeys(main, keyColumns, wanted, maxKeys)
    picture = _Picture(
        kind="outputs",
        keyColumns=keyColumns,
        keys=keys,
        keyCount=keyCount,
        yLabel=yLabel,
        xIsTime=_isTime(main, WINDOW_COLUMNS[0]),
        yIsTime=_isTime(main, yColumn),
        panes=_panesOf(main, keyColumns, keys, yColumn),
    )
    lateTags = [t for t in outputs if t not in ("main", ERRORS_TAG)]
    if len(lateTags) > 1:
        raise ValueError(f"more than one late output: {lateTags}; give main, late and errors")
    if lateTags:
        late = outputs[lateTags[0]]
        if yColumn in late.columns:  # late rows read back from a stream carry their batch
            column = timestamp or _timestampColumn(late)
            rows = (
                _keyFilter(late, keyColumns, keys)
                .select(
                    *[f"`{k}`" for k in keyColumns],
                    _millis(late, column).alias("__t"),
                    _millis(late, yColumn).alias("__y"),
                )
                .collect()
            )
            n = len(keyColumns)
            picture.elements = [
                _Element(tuple(r[:n]), r[n], r[n + 1], "late") for r in rows if r[n] is not None
            ]
    if query is not None:
        _addProgress(picture, query)
    return picture


def _timestampColumn(df: DataFrame) -> str:
    times = [f.name for f in df.schema.fields if isinstance(f.dataType, TimestampType)]
    if len(times) != 1:
        raise ValueError(
            f"cannot tell the late rows' event-time column among {times or df.columns}: pass "
            "timestamp='column'"
        )
    return times[0]


def _addProgress(picture: _Picture, query: Any) -> None:
    """Each micro-batch's watermark from a query's progress: the valve's and each channel's
    (``channel=`` pipelines' metrics), else Spark's own event-time watermark."""
    from sparkwin._transport import observedMetrics

    progress = query.recentProgress if hasattr(query, "recentProgress") else query
    if not isinstance(progress, Sequence):
        raise TypeError("query must be a StreamingQuery or its recentProgress list")
    for p in progress:
        batch = float(p["batchId"])
        metrics = observedMetrics(p)
        if "watermark" in metrics:
            picture.watermark.append((batch, _known(metrics["watermark"])))
            for c in metrics.get("channels", []):
                name = f"channel {c['channel']}"
                picture.channels.setdefault(name, []).append((batch, _known(c["watermark"])))
        else:
            text = (p["eventTime"] or {}).get("watermark")
            wm = _isoMillis(text) if text else None
            # Spark reports the epoch until the first watermark: no watermark yet.
            picture.watermark.append((batch, wm if wm else None))


def _known(wm: Any) -> int | None:
    return None if wm is None or int(wm) <= _MIN_LONG else int(wm)


def _isoMillis(text: str) -> int:
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 1000)


# ---------------------------------------------------------------------------------------------
# Drawing


def _keyLabel(columns: list[str], key: tuple[Any, ...]) -> str:
    if not columns:
        return "all elements (windowAll)"
    return ", ".join(f"{c}={v}" for c, v in zip(columns, key, strict=True))


_TIME_STEPS = [
    ms * unit
    for unit, multiples in (
        (1, (1, 2, 5, 10, 20, 50, 100, 200, 500)),
        (1000, (1, 2, 5, 10, 15, 30)),
    )
    for ms in multiples
] + [m * 60_000 for m in (1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440)]


def _timeAxis(axis: Any, span: float) -> None:
    """Ticks at round clock times (every 5 minutes, not every 4 min 10 s) labelled in UTC."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator

    step = next((s for s in _TIME_STEPS if span / s <= 8), None)
    axis.set_major_locator(MultipleLocator(step) if step else MaxNLocator(8))
    fmt = "%H:%M:%S" if span < 86_400_000 else "%Y-%m-%d %H:%M"
    if step and step < 1000:
        fmt += ".%f"

    def label(value: float, _pos: int) -> str:
        try:
            text = dt.datetime.fromtimestamp(value / 1000, dt.UTC).strftime(fmt)
        except (OverflowError, OSError, ValueError):
            return ""
        return text[:-3] if fmt.endswith("%f") else text  # milliseconds, not microseconds

    axis.set_major_formatter(FuncFormatter(label))


def _staircase(
    points: list[tuple[float, int | None]], top: float, lo: float, hi: float
) -> tuple[list[float], list[float]]:
    """A watermark over the run as a staircase: it holds (upwards) until the next change, then
    steps right. Values outside [lo, hi] (the +infinity of the end of input) are clipped."""
    changes: list[tuple[float, float]] = []
    for y, wm in sorted(points, key=lambda p: p[0]):
        if wm is None:
            continue
        x = min(max(float(wm), lo), hi)
        if not changes or changes[-1][1] != x:
            changes.append((y, x))
    xs: list[float] = []
    ys: list[float] = []
    for i, (y, x) in enumerate(changes):
        following = changes[i + 1][0] if i + 1 < len(changes) else max(top, y)
        xs += [x, x]
        ys += [y, following]
    return xs, ys


def _bounds(picture: _Picture) -> tuple[float, float, float, float, float]:
    """The axes' limits, and the last position of the run: event time from the drawn windows
    and elements (the watermarks only when there are none), arrival from everything."""
    shown = set(picture.keys)
    xs = [float(e.time) for e in picture.elements if e.key in shown]
    for p in picture.panes:
        if p.key in shown:
            xs += [float(v) for v in (p.start, p.end) if v is not None]
    # Watermarks widen the range when they are near the data; far ones (the end of input's
    # +infinity, a test's huge watermark) are clipped to the edge instead.
    marks = [
        float(w)
        for pts in (picture.watermark, *picture.channels.values())
        for _, w in pts
        if w is not None and _MIN_LONG < w < _MAX_LONG
    ]
    if xs:
        span = max(xs) - min(xs) or 1.0
        xs += [w for w in marks if min(xs) - span <= w <= max(xs) + span]
    xs = xs or marks or [0.0, 1.0]
    ys = [float(e.y) for e in picture.elements] + [float(p.y) for p in picture.panes]
    ys += [float(y) for pts in (picture.watermark, *picture.channels.values()) for y, _ in pts]
    ys = ys or [0.0, 1.0]
    xPad = (max(xs) - min(xs)) * 0.03 or 1.0
    yPad = (max(ys) - min(ys)) * 0.03 or 1.0
    return min(xs) - xPad, max(xs) + xPad, min(ys) - yPad, max(ys) + yPad, max(ys)


def _draw(picture: _Picture) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    lanes = max(len(picture.keys), 1)
    # No pyplot: a plain Figure on the Agg canvas needs no display and leaks no global state.
    figure = Figure(figsize=(10, 1.6 + 2.4 * lanes), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(lanes, 1, sharex=True, squeeze=False)[:, 0]
    x0, x1, y0, y1, top = _bounds(picture)
    for ax, key in zip(axes, picture.keys, strict=False):
        _drawLane(ax, picture, key, (x0, x1, y0, y1))
    for ax in axes:
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        ax.grid(True, color="#dddddd", linewidth=0.5)
        if picture.yIsTime:
            _timeAxis(ax.yaxis, y1 - y0)
        else:  # calls, micro-batches and pane indexes count: no 2.5
            ax.yaxis.set_major_locator(MaxNLocator(nbins="auto", integer=True))
        _drawWatermarks(ax, picture, top, x0, x1)
    if picture.xIsTime:
        _timeAxis(axes[-1].xaxis, x1 - x0)
    # The x label on the bottom lane (not the figure) leaves the legend room below it.
    axes[-1].set_xlabel("event time" + (" (UTC)" if picture.xIsTime else " (ms)"))
    figure.supylabel(picture.yLabel + (" (UTC)" if picture.yIsTime else ""))
    shown = len(picture.keys)
    if picture.keyCount is None:
        count = f"the first {shown} keys"
    elif picture.keyCount > shown:
        count = f"{shown} of {picture.keyCount} keys"
    else:
        count = "1 key" if shown == 1 else f"{shown} keys"
    figure.suptitle(f"sparkwin timeline ({picture.kind}): {count}")
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if handles:
        figure.legend(
            handles.values(), handles.keys(), loc="outside lower center", ncols=4, fontsize=8
        )
    return figure


def _drawLane(
    ax: Axes, picture: _Picture, key: tuple[Any, ...], limits: tuple[float, float, float, float]
) -> None:
    from matplotlib.patches import Rectangle

    x0, x1, y0, y1 = limits
    elements = [e for e in picture.elements if e.key == key]
    panes = [p for p in picture.panes if p.key == key]
    ax.set_title(_keyLabel(picture.keyColumns, key), loc="left", fontsize=9)
    # One band per window: from its first element (or first pane) up to its last pane.
    minHeight = (y1 - y0) * 0.01
    windows: dict[tuple[int | None, int | None], list[float]] = {}
    for p in panes:
        windows.setdefault((p.start, p.end), []).append(p.y)
    accepted = sorted((e.time, e.y) for e in elements if e.fate == "accepted")
    times = [t for t, _ in accepted]
    for (start, end), ys in windows.items():
        left = x0 if start is None else start
        right = x1 if end is None else end
        # The window's elements, found by bisection: a lane can hold many windows and elements.
        inside = accepted[bisect.bisect_left(times, left) : bisect.bisect_left(times, right)]
        bottom, upper = min([*ys, *(y for _, y in inside)]), max(ys)
        ax.add_patch(
            Rectangle(
                (left, bottom),
                right - left,
                max(upper - bottom, minHeight),
                facecolor="#c6dbef",
                edgecolor="#6baed6",
                alpha=0.35,
                linewidth=0.8,
                gid="window",
                label="window (first element to last pane)",
            )
        )
    for fate, style in _ELEMENT_STYLES.items():
        chosen = [e for e in elements if e.fate == fate]
        if chosen:
            ax.scatter([e.time for e in chosen], [e.y for e in chosen], zorder=3, gid=fate, **style)
    for timing in _TIMINGS:
        fired = [p for p in panes if p.timing == timing]
        if fired:
            ax.scatter(
                [x1 if p.end is None else p.end for p in fired],
                [p.y for p in fired],
                marker="D",
                s=40,
                color=_PANE_COLOURS[timing],
                edgecolors="black",
                linewidths=0.6,
                zorder=4,
                gid=f"pane {timing}",
                label=f"{timing} pane",
            )


def _drawWatermarks(ax: Axes, picture: _Picture, top: float, lo: float, hi: float) -> None:
    for i, (name, points) in enumerate(sorted(picture.channels.items())):
        xs, ys = _staircase(points, top, lo, hi)
        if xs:
            ax.plot(
                xs,
                ys,
                linestyle="--",
                linewidth=1.2,
                zorder=3.5,
                color=_CHANNEL_COLOURS[i % len(_CHANNEL_COLOURS)],
                gid=f"watermark {name}",
                label=f"{name} watermark",
            )
    xs, ys = _staircase(picture.watermark, top, lo, hi)
    if xs:
        # Above the elements: with a small bound it runs right along them.
        ax.plot(
            xs,
            ys,
            linewidth=1.8,
            color=_WATERMARK_COLOUR,
            zorder=3.6,
            gid="watermark",
            label="watermark",
        )
