"""sparkwin's clock on a live stream: pipelines that act as processing time passes start a
micro-batch when a timer is due and none otherwise (docs/DESIGN.md, "One owner of time")."""

from __future__ import annotations

import pytest
from sparkstreams import dataRows, runStream

import sparkwin as sw

SCHEMA = "user string, amount long, ts long"


def _counts(df, keyed: bool) -> sw.Pipeline:
    stream = sw.stream(df, "ts")
    windows = sw.TumblingProcessingTimeWindows.of(2_000)
    windowed = stream.keyBy("user").window(windows) if keyed else stream.windowAll(windows)
    return windowed.aggregate(sw.agg.count())


@pytest.mark.parametrize("keyed", [True, False], ids=["keyBy", "windowAll"])
def test_a_processing_time_window_fires_without_new_data_and_the_query_then_rests(
    spark, tmp_path, keyed
):
    """A 2 s processing-time window opened by the only batch of data fires when its end comes,
    in a micro-batch the clock starts; after that nothing waits, so no batch runs in the
    seconds that follow, and processAllAvailable() returned (no interval trigger)."""
    rows = [{"user": u, "amount": 1, "ts": i} for i, u in enumerate("aabab")]
    result = runStream(spark, tmp_path, SCHEMA, lambda df: _counts(df, keyed), [rows], linger=5.0)
    counts = sorted((r.get("user"), r["count"]) for r in result.outputs["main"])
    assert counts == ([("a", 3), ("b", 2)] if keyed else [(None, 5)])
    fired = [p for p in result.progress if p["observedMetrics"]["sparkwin"]["panesFired"]]
    assert len(fired) == 1 and dataRows(fired[0]) == 0, "the window fired on a tick, without data"
    assert result.progress[-1] is fired[0], "no batch after the last due work"
    # The clock is a source of its own, one row per tick, beside the data.
    clock = [s for s in fired[0]["sources"] if s["description"] == "sparkwin-clock"]
    assert len(clock) == 1 and clock[0]["numInputRows"] == 1
