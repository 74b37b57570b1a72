"""Draws the README's timeline: ``python docs/make_timeline.py`` writes docs/img/timeline.png.

The pipeline is the README's first example (sliding windows of 10 minutes every 5, a count
trigger of 100, a minute of allowed lateness, a late side output). Generated clicks from two
users, a few seconds out of order and some minutes late, go through a ``WindowHarness`` with
generated watermarks, as a live stream would deliver them; ``sparkwin.plot.timeline`` draws the
run. tests/test_plot.py renders it again.
"""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime
from datetime import timedelta as td
from pathlib import Path
from typing import Any

import sparkwin as sw
from sparkwin.plot import timeline
from sparkwin.testing import WindowHarness

OUTPUT = Path(__file__).resolve().parent / "img" / "timeline.png"
START = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def clicks(seed: int = 3, minutes: int = 30) -> list[tuple[datetime, dict[str, Any]]]:
    """(arrival, click) in arrival order: a click every 5 s or so per user, up to 4 s out of
    order; one in 40 arrives 12 to 15 minutes late (after every window it falls in has closed:
    10 minutes of window and a minute of allowed lateness)."""
    rng = random.Random(seed)
    out = []
    for user in ("alice", "bob"):
        t = START + td(seconds=rng.uniform(0, 5))
        while t < START + td(minutes=minutes):
            delay = td(seconds=rng.uniform(0, 4))
            if rng.random() < 1 / 40:
                delay = td(minutes=rng.uniform(12, 15))
            out.append((t + delay, {"user": user, "amount": rng.randint(1, 50), "ts": t}))
            t += td(seconds=rng.uniform(2, 8))
    out.sort(key=lambda c: c[0])
    return out


def render(spark: Any, path: str | Path = OUTPUT) -> Any:
    """Runs the README's example over the clicks and saves its timeline at ``path``."""
    df = spark.createDataFrame([], "user string, amount long, ts timestamp")
    pipeline = (
        sw.stream(df, timestamp="ts",
                  watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(td(seconds=5)))
        .keyBy("user")
        .window(sw.SlidingEventTimeWindows.of(td(minutes=10), td(minutes=5)))
        .trigger(sw.CountTrigger.of(100))
        .allowedLateness(td(minutes=1))
        .sideOutputLateData("late")
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )  # fmt: skip
    h = WindowHarness(pipeline, generateWatermarks=True)
    for arrival, click in clicks():
        h.setProcessingTime(arrival)  # periodic watermarks follow the arrival clock
        h.processElement(click)
    return timeline(h, path)


if __name__ == "__main__":
    session = sw.session("sparkwin-timeline", **{"spark.sql.session.timeZone": "UTC"})
    render(session, sys.argv[1] if len(sys.argv) > 1 else OUTPUT)
    print(f"wrote {sys.argv[1] if len(sys.argv) > 1 else OUTPUT}")
