"""benchmarks/pane_path.py: a real-time pane's path from PaneTrace's points, the slowest channel
and key group deciding each step, as the valve waits for them."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import pane_path  # noqa: E402
from benchmarks.latency_stats import Pane  # noqa: E402

# Window [0, 1000) with a 200 ms bound closes on a channel at its first ts >= 1200. Channel 1
# gets there last (its tap at 1001 s, its summary at 1003 s); group 7 learns of it at 1005 s,
# group 9 at 1006 s. Times in the trace are epoch microseconds.
TRACE = """tap 1000000000 0 1200
tap 1001000000 1 1250
summary 1002000000 0=1200 1=1100
summary 1003000000 0=1200 1=1250
call 1004000000 7 0=1200 1=1100
call 1005000000 7 1=1250
call 1006000000 9 0=1200 1=1250
"""


def test_each_point_is_the_slowest_channel_or_group() -> None:
    trace = pane_path.parse(TRACE.splitlines())
    panes = [Pane("a", 0, 1000, 1, 1, 1_006_050), Pane("b", 0, 1000, 1, 1, 1_006_100)]
    path = pane_path.windowPath(trace, 1000, 200, 999_990, panes)
    assert path == {
        "produced": 999_990.0,
        "tap": 1_001_000.0,
        "summary": 1_003_000.0,
        "call": 1_006_000.0,
        "sink": 1_006_100.0,
    }


def test_a_window_the_trace_does_not_close_has_no_path() -> None:
    trace = pane_path.parse(TRACE.splitlines()[:5])  # group calls never learn channel 1's 1250
    panes = [Pane("a", 0, 1000, 1, 1, 1_006_050)]
    assert pane_path.windowPath(trace, 1000, 200, 999_990, panes) is None


def test_summarize_gives_each_step(tmp_path: Path) -> None:
    (tmp_path / "trace").write_text(TRACE)
    truth = {"closing": [[1000, [999_980, 999_990]]]}
    panes = [Pane("a", 0, 1000, 1, 1, 1_006_100)]
    steps = pane_path.summarize(tmp_path / "trace", truth, panes, 200, (0, 2000))
    assert steps["windows"] == 1
    assert steps["produced->tap"] == {"p50": 1010.0, "p99": 1010.0}
    assert steps["call->sink"] == {"p50": 100.0, "p99": 100.0}
    assert steps["example"]["sink"] == 6110.0
