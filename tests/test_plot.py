"""``sparkwin.plot.timeline`` and the harness's run log it draws: what the figure shows is what
the run did (pane marks per timing, elements by fate, the watermark's staircase)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from pyspark.sql import functions as F  # noqa: N812

import sparkwin as sw
from sparkwin.plot import timeline
from sparkwin.testing import WindowHarness

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = "user string, amount long, ts long"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def df(spark):
    return spark.createDataFrame([], SCHEMA)


def tumbling(df, lateTag: str | None = "late") -> sw.Pipeline:
    w = (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(1_000))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .allowedLateness(5_000)
    )
    if lateTag:
        w = w.sideOutputLateData(lateTag)
    return w.aggregate(sw.agg.sum("amount"), sw.agg.count())


def readmeRun(h: WindowHarness) -> WindowHarness:
    """The README's testing example: on time, late within lateness, then too late."""
    h.processElement({"user": "a", "amount": 3, "ts": 1_000})
    h.processElement({"user": "a", "amount": 4, "ts": 9_999})
    h.processWatermark(9_999)
    h.processElement({"user": "a", "amount": 5, "ts": 2_000})
    h.processWatermark(14_999)
    h.processElement({"user": "a", "amount": 6, "ts": 3_000})
    return h


def byGid(fig, gid: str) -> list:
    """Every artist (scatter, line, patch) of every lane with this gid."""
    return [
        a
        for ax in fig.axes
        for a in (*ax.collections, *ax.lines, *ax.patches)
        if a.get_gid() == gid
    ]


def points(fig, gid: str) -> list[tuple[float, float]]:
    return [tuple(p) for a in byGid(fig, gid) for p in a.get_offsets().tolist()]


def staircase(fig, gid: str = "watermark") -> list[tuple[float, float]]:
    lines = byGid(fig, gid)
    assert lines, f"no {gid} line"
    return [tuple(p) for p in lines[0].get_xydata().tolist()]


# ---------------------------------------------------------------------------------------------
# The harness's run log


def test_run_log_keeps_each_calls_fate_panes_and_watermark(df) -> None:
    h = readmeRun(WindowHarness(tumbling(df)))
    log = h.runLog()
    assert [(s.kind, s.fate, s.panes, s.watermark) for s in log.steps] == [
        ("element", "accepted", 0, None),
        ("element", "accepted", 0, None),
        ("watermark", None, 1, 9_999),
        ("element", "accepted", 1, 9_999),  # late within lateness: a LATE pane
        ("watermark", None, 0, 14_999),
        ("element", "late", 0, 14_999),
    ]
    assert [(p.step, p.key, p.windowStart, p.windowEnd, p.timing) for p in log.panes] == [
        (2, ("a",), 0, 10_000, "ON_TIME"),
        (3, ("a",), 0, 10_000, "LATE"),
    ]
    # The run log reads the output but leaves it to extractOutput().
    assert [o["pane_timing"] for o in h.extractOutput()] == ["ON_TIME", "LATE"]
    assert h.extractOutput() == []
    assert len(h.runLog().panes) == 2


def test_run_log_marks_dropped_elements_and_errors(df) -> None:
    h = WindowHarness(tumbling(df, lateTag=None))
    h.processWatermark(20_000)
    h.processElement({"user": "a", "amount": 1, "ts": 1})
    h.processElement({"user": "a", "amount": 1, "ts": None})
    assert [s.fate for s in h.runLog().steps] == [None, "dropped", "error"]
    assert h.numLateRecordsDropped() == 1


def test_run_log_can_be_turned_off(df) -> None:
    h = WindowHarness(tumbling(df), record=False)
    h.processElement({"user": "a", "amount": 1, "ts": 1})
    with pytest.raises(ValueError, match="record=True"):
        h.runLog()
    with pytest.raises(ValueError, match="record=True"):
        timeline(h)
    with pytest.raises(TypeError, match="record must be a bool"):
        WindowHarness(tumbling(df), record="yes")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# From a harness


def test_harness_timeline_draws_panes_elements_window_and_watermark(df, tmp_path) -> None:
    h = readmeRun(WindowHarness(tumbling(df)))
    path = tmp_path / "timeline.png"
    fig = timeline(h, path)
    assert path.read_bytes().startswith(PNG)
    (lane,) = fig.axes
    assert lane.get_title(loc="left") == "user=a"
    assert lane.get_ylabel() == "" and "harness call" in fig.get_supylabel()
    # Pane diamonds sit at the window's end, at the call that fired them.
    assert points(fig, "pane ON_TIME") == [(10_000, 2)]
    assert points(fig, "pane LATE") == [(10_000, 3)]
    assert points(fig, "pane EARLY") == []
    assert points(fig, "accepted") == [(1_000, 0), (9_999, 1), (2_000, 3)]
    assert points(fig, "late") == [(3_000, 5)]
    # The window [0, 10000) from its first element up to its last pane.
    (band,) = byGid(fig, "window")
    assert (band.get_x(), band.get_y(), band.get_width(), band.get_height()) == (0, 0, 10_000, 3)
    # The watermark holds until the next call that moves it, up to the last call.
    assert staircase(fig) == [(9_999, 2), (9_999, 4), (14_999, 4), (14_999, 5)]
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"ON_TIME pane", "LATE pane", "late element (side output)", "watermark"} <= labels


def test_harness_timeline_draws_every_channels_watermark(df) -> None:
    h = WindowHarness(tumbling(df), channels=2)
    h.processElement({"user": "a", "amount": 1, "ts": 5_000}, channel=0)
    h.processWatermark(12_000, channel=0)
    h.processWatermark(8_000, channel=1)  # the valve follows the slower channel
    h.processWatermark(11_000, channel=1)
    fig = timeline(h)
    assert staircase(fig, "watermark channel 0") == [(12_000, 1), (12_000, 3)]
    assert staircase(fig, "watermark channel 1") == [(8_000, 2), (8_000, 3), (11_000, 3)] + [
        (11_000, 3)
    ]
    assert staircase(fig) == [(8_000, 2), (8_000, 3), (11_000, 3), (11_000, 3)]
    assert points(fig, "pane ON_TIME") == [(10_000, 3)]


def test_end_of_input_is_clipped_to_the_right_edge(df) -> None:
    h = WindowHarness(tumbling(df))
    h.processElement({"user": "a", "amount": 1, "ts": 1_000})
    h.endOfInput()
    fig = timeline(h)
    right = fig.axes[0].get_xlim()[1]
    assert staircase(fig) == [(right, 1), (right, 1)]
    assert points(fig, "pane ON_TIME") == [(10_000, 1)]


def test_many_keys_are_sampled_and_can_be_chosen(df) -> None:
    h = WindowHarness(tumbling(df))
    for i in range(10):
        h.processElement({"user": f"u{i}", "amount": 1, "ts": 1_000 * i})
    h.processWatermark(20_000)
    fig = timeline(h, maxKeys=3)
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["user=u0", "user=u1", "user=u2"]
    assert fig.get_suptitle().endswith("3 of 10 keys")
    assert len(points(fig, "pane ON_TIME")) == 3
    fig = timeline(h, keys=["u7", "u4"])
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["user=u7", "user=u4"]
    with pytest.raises(ValueError, match="not in this run"):
        timeline(h, keys=["nobody"])
    with pytest.raises(ValueError, match="maxKeys"):
        timeline(h, maxKeys=0)


def test_window_all_and_process_pipelines_draw_one_lane(df) -> None:
    import pandas as pd

    p = (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .windowAll(sw.TumblingEventTimeWindows.of(10))
        .process(lambda key, w, pdf: pd.DataFrame({"n": [len(pdf)]}), "n long")
    )
    h = WindowHarness(p)
    h.processElements([{"user": "a", "amount": 1, "ts": 1}, {"user": "b", "amount": 1, "ts": 2}])
    h.processWatermark(9)
    fig = timeline(h)
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["all elements (windowAll)"]
    assert points(fig, "pane ON_TIME") == [(10, 2)]
    assert h.extractOutput() == [{"n": 2}]


def test_a_source_of_another_kind_is_refused() -> None:
    with pytest.raises(TypeError, match="WindowHarness, a Replay"):
        timeline([1, 2, 3])


def test_without_matplotlib_the_error_names_the_extra(df, monkeypatch) -> None:
    h = readmeRun(WindowHarness(tumbling(df)))
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises
    with pytest.raises(ImportError, match=r"pip install 'sparkwin\[plot\]'"):
        timeline(h)


# ---------------------------------------------------------------------------------------------
# From a replay and from output DataFrames


def test_replay_timeline_draws_panes_at_fired_at_and_the_valve_timeline(spark) -> None:
    rows = [(u, 1, ts, arrival) for u, ts, arrival in [("a", 100, 100), ("b", 150, 150)]]
    rows += [("a", 1, 1_000, 1_000), ("a", 1, 50, 1_100)]  # the last one far too late
    history = spark.createDataFrame(rows, "user string, amount long, ts long, arrival long")
    replayed = (
        sw.stream(
            history,
            "ts",
            arrival="arrival",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0).withAutoWatermarkInterval(
                100
            ),
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(500))
        .sideOutputLateData("late")
        .aggregate(sw.agg.count())
        .replay()
    )
    fired = sorted(
        (r["user"], r["fired_at"]) for r in replayed.toDF().select("user", "fired_at").collect()
    )
    fig = timeline(replayed)
    replayed.unpersist()
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["user=a", "user=b"]
    assert sorted(points(fig, "pane ON_TIME")) == sorted((500, y) for _, y in fired)
    assert points(fig, "late") == [(50, 1_100)]
    assert sorted(points(fig, "accepted")) == [(100, 100), (150, 150), (1_000, 1_000)]
    marks = staircase(fig)
    assert marks[0][1] == min(t for t, _ in replayed.timeline())
    assert {x for x, _ in marks} == {w for _, w in replayed.timeline()}
    assert fig.get_supylabel() == "arrival (arrival)"


def test_output_dataframes_of_a_bounded_run(spark) -> None:
    data = spark.createDataFrame(
        [("a", 1, 1_000), ("a", 2, 12_000), ("b", 3, 5_000)], "user string, amount long, ts long"
    )
    p = tumbling(data)
    fig = timeline({"main": p.toDF(), "late": p.getSideOutput("late")})
    assert "pane index" in fig.get_supylabel()
    assert sorted(points(fig, "pane ON_TIME")) == [(10_000, 0), (10_000, 0), (20_000, 0)]
    assert byGid(fig, "watermark") == []  # a bounded run reports none
    # The main output alone will do too.
    assert len(points(timeline(p.toDF()), "pane ON_TIME")) == 3


def test_outputs_read_back_from_a_stream_use_the_micro_batch(spark) -> None:
    main = spark.createDataFrame(
        [("a", 0, 10_000, "EARLY", 0, 1), ("a", 0, 10_000, "ON_TIME", 1, 3)],
        "user string, ws long, we long, pane_timing string, pane_index int, batch_id int",
    ).select(
        "user",
        F.timestamp_millis("ws").alias("window_start"),
        F.timestamp_millis("we").alias("window_end"),
        "pane_timing",
        "pane_index",
        "batch_id",
    )
    late = spark.createDataFrame([("a", 4_000, 4)], "user string, ms long, batch_id int").select(
        "user", F.timestamp_millis("ms").alias("ts"), "batch_id"
    )
    progress = [
        {"batchId": b, "observedMetrics": {}, "eventTime": {"watermark": wm}}
        for b, wm in [
            (0, "1970-01-01T00:00:00.000Z"),  # Spark's "no watermark yet"
            (1, "1970-01-01T00:00:05.000Z"),
            (3, "1970-01-01T00:00:12.000Z"),
        ]
    ]
    fig = timeline({"main": main, "late": late, "errors": late.limit(0)}, query=progress)
    assert fig.get_supylabel() == "micro-batch (batch_id)"
    assert points(fig, "pane EARLY") == [(10_000, 1)]
    assert points(fig, "pane ON_TIME") == [(10_000, 3)]
    assert points(fig, "late") == [(4_000, 4)]
    assert staircase(fig) == [(5_000, 1), (5_000, 3), (12_000, 3), (12_000, 4)]
    with pytest.raises(ValueError, match="window_start"):
        timeline(late)


# ---------------------------------------------------------------------------------------------
# The README's picture


def test_the_readme_timeline_is_drawn_by_its_script(spark, tmp_path) -> None:
    spec = importlib.util.spec_from_file_location("make_timeline", ROOT / "docs/make_timeline.py")
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    path = tmp_path / "timeline.png"
    fig = script.render(spark, path)
    assert path.read_bytes().startswith(PNG) and path.stat().st_size > 10_000
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["user=alice", "user=bob"]
    assert points(fig, "pane EARLY") and points(fig, "late")  # count panes, too-late clicks
    assert script.OUTPUT.relative_to(ROOT).as_posix() in (ROOT / "README.md").read_text()
