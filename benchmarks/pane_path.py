"""Where a real-time pane's latency goes: the timestamps `PaneTrace` writes in the Spark JVM
(`-Dsparkwin.trace=<file>`, `latency.py --trace-panes`) joined with the producer's truth and the
panes' arrival at the output topic.

For a window ending at `end`, with a bound of B ms, the event that closes it on a channel is the
first with ts >= end + B; with a channel per source partition the window closes once every
channel has seen one (the valve's minimum). Its path, each point the latest over channels or key
groups, as the valve waits for the slowest:

- produced: the producer made that event (the truth file, `valve`);
- tap: the map side saw it (the source has just read it from the broker);
- summary: the map side sent the summary that carries it;
- call: the last key group's call that took that summary (the group fires the window there);
- sink: the last pane of the window reached the output topic (the broker's LogAppendTime).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.latency_stats import Pane, closingTimes, percentile

POINTS = ["produced", "tap", "summary", "call", "sink"]


def parse(lines: Iterable[str]) -> dict[str, list[tuple[float, Any]]]:
    """The trace's points in file order: ``tap`` (ms, (channel, ts)), ``summary`` (ms, {channel:
    ts}), ``call`` (ms, (group, {channel: ts}))."""
    out: dict[str, list[tuple[float, Any]]] = {"tap": [], "summary": [], "call": []}
    for line in lines:
        parts = line.split()
        if len(parts) < 3 or parts[0] not in out:
            continue
        at = int(parts[1]) / 1000.0
        if parts[0] == "tap":
            out["tap"].append((at, (parts[2], int(parts[3]))))
        elif parts[0] == "summary":
            out["summary"].append((at, _channels(parts[2:])))
        else:
            out["call"].append((at, (parts[2], _channels(parts[3:]))))
    return out


def _channels(fields: list[str]) -> dict[str, int]:
    return {c: int(t) for c, t in (f.split("=", 1) for f in fields)}


def _firstPerChannel(points: list[tuple[float, dict[str, int]]], need: int) -> dict[str, float]:
    first: dict[str, float] = {}
    for at, channels in points:
        for c, ts in channels.items():
            if ts >= need and c not in first:
                first[c] = at
    return first


def windowPath(
    trace: dict[str, list[tuple[float, Any]]],
    end: int,
    boundMs: int,
    produced: int,
    panes: list[Pane],
) -> dict[str, float] | None:
    """One window's points (epoch ms), or None when the trace lacks one of them."""
    need = end + boundMs
    taps = _firstPerChannel([(at, {c: ts}) for at, (c, ts) in trace["tap"]], need)
    summaries = _firstPerChannel(trace["summary"], need)
    channels = set(summaries)
    # Each group's valve: the least of the channels' largest times it has been told of.
    known: dict[str, dict[str, int]] = {}
    closedAt: dict[str, float] = {}
    for at, (group, channels_) in trace["call"]:
        mine = known.setdefault(group, {})
        for c, ts in channels_.items():
            mine[c] = max(ts, mine.get(c, ts))
        if group not in closedAt and channels and all(mine.get(c, -1) >= need for c in channels):
            closedAt[group] = at
    arrived = [p.arrivedAt for p in panes if p.end == end]
    if not taps or not summaries or not closedAt or not arrived or set(taps) != channels:
        return None
    return {
        "produced": float(produced),
        "tap": max(taps.values()),
        "summary": max(summaries.values()),
        "call": max(closedAt.values()),
        "sink": float(max(arrived)),
    }


def summarize(
    tracePath: str | Path,
    truth: dict[str, Any],
    panes: list[Pane],
    boundMs: int,
    ends: tuple[int, int],
) -> dict[str, Any]:
    """Per step (produced to tap, tap to summary, ...) the median and p99 over the measured
    windows (ends within `ends`, as the latency figures), and one window's points for the log."""
    trace = parse(Path(tracePath).read_text().splitlines())
    closing = closingTimes(truth, "valve")
    paths = []
    for end in sorted(closing):
        if ends[0] <= end < ends[1]:
            path = windowPath(trace, end, boundMs, closing[end], panes)
            if path is not None:
                paths.append((end, path))
    steps: dict[str, Any] = {"windows": len(paths)}
    for a, b in zip(POINTS, POINTS[1:], strict=False):
        gaps = [p[b] - p[a] for _, p in paths]
        if gaps:
            steps[f"{a}->{b}"] = {
                "p50": round(percentile(gaps, 50), 1),
                "p99": round(percentile(gaps, 99), 1),
            }
    if paths:
        end, path = paths[len(paths) // 2]
        steps["example"] = {
            "end": end,
            **{k: round(v - path["produced"], 1) for k, v in path.items()},
        }
    return steps
