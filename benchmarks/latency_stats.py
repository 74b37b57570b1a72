"""What benchmarks/latency.py computes from a run, without Spark or Kafka: the panes every system
must emit (from the producer's truth file), the check of a system's output against them, and each
pane's latency.

Latency of a pane = the wall time its row reached the output topic (the broker's LogAppendTime)
minus the wall time the producer made the event that moved the system's watermark past the
window's end. With a bound of B ms, every system here closes a window ending at `end` once it
has seen an event with ts - B >= end (Flink and sparkwin: watermark max - B - 1 reaches the
window's max timestamp end - 1; Spark: watermark max - B reaches end). Which event that is
depends on where the watermark's maximum is taken:

- `global` (Spark's one watermark per query, sparkwin without channels): the first event made,
  over all partitions, with ts - B >= end;
- `valve` (Flink's Kafka source: a watermark per partition, the minimum over partitions): in
  each partition the first such event, and the latest made of those.

The producer writes, per second boundary and partition, when it made the first such event, so
both are read off its truth file.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

# A window: (key, start ms, end ms); its content: (count, sum of amounts).
Window = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class Pane:
    """One output row: a window's count and sum, and when it reached the output (epoch ms)."""

    key: str
    start: int
    end: int
    count: int
    total: int
    arrivedAt: int


class ResultMismatchError(AssertionError):
    """A system's output differs from what its input must give."""


def expectedWindows(truth: dict[str, Any], workload: str) -> dict[Window, tuple[int, int]]:
    """Every window the producer's events fill, with its count and sum: `tumbling` 1 s or
    `sliding` 10 s every 1 s, from the truth file's per key and second buckets (all at once:
    `check` asks a [[Truth]] window by window)."""
    t = Truth(truth, workload)
    return {w: value for w in t.windows() if (value := t.get(w)) is not None}


# A window's seconds: tumbling 1 s, sliding 10 s (every 1 s).
SPAN = {"tumbling": 1, "sliding": 10}


class Truth:
    """The producer's events as (key, second) -> (count, sum), and every window they fill found
    from those buckets on demand: with a million keys, the sliding windows alone would be ten
    million entries held at once."""

    def __init__(self, truth: dict[str, Any], workload: str) -> None:
        if workload not in SPAN:
            raise ValueError(f"workload must be tumbling or sliding, got {workload!r}")
        self.span = SPAN[workload]
        self.buckets: dict[tuple[str, int], tuple[int, int]] = {
            (f"k{k}", second): (count, total) for k, second, count, total in truth["buckets"]
        }

    def get(self, window: Window) -> tuple[int, int] | None:
        """The window's count and sum, or None when no event falls in it (or it is no window)."""
        key, start, end = window
        if start % 1000 or end - start != 1000 * self.span:
            return None
        count = total = 0
        found = False
        for second in range(start // 1000, start // 1000 + self.span):
            b = self.buckets.get((key, second))
            if b is not None:
                found = True
                count += b[0]
                total += b[1]
        return (count, total) if found else None

    def windows(self) -> Iterator[Window]:
        """Every window the events fill, once: a window comes from its earliest second."""
        for key, second in self.buckets:
            for start in range(second - self.span + 1, second + 1):
                if not any((key, s) in self.buckets for s in range(start, second)):
                    yield (key, start * 1000, (start + self.span) * 1000)


def closingTimes(truth: dict[str, Any], watermark: str) -> dict[int, int]:
    """Per window end: when the event that moved the watermark past it was made (epoch ms), for a
    `global` watermark or a `valve` over partitions (see the module's docstring). Ends that the
    watermark never passed are left out."""
    closing: dict[int, int] = {}
    for end, perPartition in truth["closing"]:
        made = [at for at in perPartition if at >= 0]
        if watermark == "global":
            closing[end] = min(made)
        elif watermark == "valve":
            if len(made) == len(perPartition):
                closing[end] = max(made)
        else:
            raise ValueError(f"watermark must be global or valve, got {watermark!r}")
    return closing


def check(
    panes: list[Pane],
    truth: dict[str, Any],
    workload: str,
    updates: bool = False,
) -> tuple[dict[Window, Pane], int]:
    """Checks a system's output against its input; returns each window's pane and how many
    windows it has not emitted yet (a system that fell behind).

    Every row must belong to a window the events fill and hold its count and sum, once; every
    window whose end every partition's watermark passed must be there, except the latest ones
    when the system fell behind (no window after the first missing one emitted). With `updates`
    (Spark's update mode, rows reduced to the first with the final values) a window may come
    before the watermark passes its end. Raises ResultMismatchError naming the first differences.
    """
    expected = Truth(truth, workload)
    bound = truth["bound"]
    closedEverywhere = min(truth["maxTs"]) - bound  # the valve's maximum: every system passed it
    closedSomewhere = max(truth["maxTs"]) - bound
    byWindow: dict[Window, list[Pane]] = defaultdict(list)
    for p in panes:
        byWindow[(p.key, p.start, p.end)].append(p)
    problems: list[str] = []
    for window, rows in byWindow.items():
        want = expected.get(window)
        if want is None:
            problems.append(f"{window}: emitted, but no event falls in it")
            continue
        if not updates and window[2] > closedSomewhere:
            problems.append(f"{window}: emitted before any watermark passed its end")
        if len(rows) > 1:
            problems.append(f"{window}: {len(rows)} panes, want 1")
        if (rows[0].count, rows[0].total) != want:
            problems.append(f"{window}: {(rows[0].count, rows[0].total)}, want {want}")
    missing = sorted(
        (w for w in expected.windows() if w[2] <= closedEverywhere and w not in byWindow),
        key=lambda w: w[2],
    )
    if missing:
        firstMissing = missing[0][2]
        emittedAfter = [w for w in byWindow if w[2] > firstMissing and expected.get(w) is not None]
        if emittedAfter and not updates:
            problems += [f"{w}: missing" for w in missing]
    if problems:
        raise ResultMismatchError(
            f"{len(problems)} differences from the events ({workload}): " + "; ".join(problems[:8])
        )
    return {w: rows[0] for w, rows in byWindow.items()}, len(missing)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), nearest rank."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def latencies(
    chosen: dict[Window, Pane], closing: dict[int, int], fromEnd: int, toEnd: int | None = None
) -> list[tuple[int, int]]:
    """(window end, latency ms) of every pane of a window ending at `fromEnd` or later (earlier
    ones are the warm-up) and before `toEnd` (later ones are the cool-down), in order of window
    end."""
    return sorted(
        (end, pane.arrivedAt - closing[end])
        for (_, _, end), pane in chosen.items()
        if end >= fromEnd and (toEnd is None or end < toEnd) and end in closing
    )


def summary(points: Iterable[tuple[int, int]], growthLimitMs: int = 1000) -> dict[str, Any]:
    """p50, p99 and max latency (ms), and whether the system kept up: the median latency of the
    last fifth of window ends grew by less than `growthLimitMs` over the first fifth's."""
    points = list(points)
    if not points:
        return {"panes": 0, "p50": None, "p99": None, "max": None, "growth": None, "held": False}
    values = [float(v) for _, v in points]
    ends = sorted({e for e, _ in points})
    fifth = max(1, len(ends) // 5)
    first = [v for e, v in points if e <= ends[fifth - 1]]
    last = [v for e, v in points if e >= ends[-fifth]]
    growth = percentile(last, 50) - percentile(first, 50)
    return {
        "panes": len(values),
        "p50": percentile(values, 50),
        "p99": percentile(values, 99),
        "max": max(values),
        "growth": growth,
        "held": growth < growthLimitMs,
    }
