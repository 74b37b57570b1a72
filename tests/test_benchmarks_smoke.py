"""The benchmark's pieces are right on a few hundred events (no timings here): the generator
keeps its promises, and the applyInPandasWithState implementation computes the same windows
as sparkwin; and benchmarks/ imports one way."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F  # noqa: N812

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.measure import breakdown  # noqa: E402
from benchmarks.run import spark_setting  # noqa: E402
from benchmarks.systems import pandas_windows  # noqa: E402
from benchmarks.systems.windows import run_spark, sparkwin_windows  # noqa: E402
from benchmarks.workloads import BOUND_MS, CHANNELS, GRANULE, WORKLOADS, generate  # noqa: E402


class FakeState:
    """Just enough of GroupState for one call that sees everything, then +infinity."""

    def __init__(self) -> None:
        self.value: Any = None
        self.hasTimedOut = False

    @property
    def exists(self) -> bool:
        return self.value is not None

    @property
    def get(self) -> Any:
        return self.value

    def update(self, value: Any) -> None:
        self.value = value

    def remove(self) -> None:
        self.value = None

    def getCurrentWatermarkMs(self) -> int:
        return 2**62

    def setTimeoutTimestamp(self, ts: int) -> None:
        pass


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    return generate(str(tmp_path_factory.mktemp("bench")), 400, 7, 3, seed=3)


def test_generated_events_keep_the_promises(events) -> None:
    table = pq.read_table(events.directory).to_pandas()
    ts = pandas_windows._millis(table)
    assert (ts % GRANULE == 0).all()  # never exactly a session gap apart
    flush = (table["key"] == events.flush_key).to_numpy()
    real = ts[~flush]
    running_max = np.maximum.accumulate(real)
    assert (running_max - real <= BOUND_MS).all()  # disorder within the watermark bound
    # the flush events come last, one per channel, in the last two files: the second lets
    # Spark act on the first
    last = 2 * CHANNELS
    assert flush[-last:].all() and not flush[:-last].any() and (ts[flush] > real.max()).all()
    assert sorted(table["part"][flush]) == sorted(list(range(CHANNELS)) * 2)
    assert len(real) == events.count == 400


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.kind)
def test_pandas_implementation_matches_sparkwin(spark, events, workload) -> None:
    df = spark.read.parquet(events.directory).where(F.col("key") != events.flush_key)
    expected = sorted(
        (r["key"], r["start"], r["value"]) for r in sparkwin_windows(df, workload).collect()
    )
    table = df.toPandas()
    fn = (
        pandas_windows.sessions(workload)
        if workload.kind == "session"
        else pandas_windows.fixed_windows(workload)
    )
    got = []
    for key, pdf in table.groupby("key"):
        for out in fn((key,), iter([pdf]), FakeState()):
            got += [(r.key, int(r.start), int(r.value)) for r in out.itertuples()]
    assert expected and sorted(got) == expected


def test_breakdown_sums_phases_and_classifies_stages() -> None:
    from types import SimpleNamespace as Ns

    op = Ns(allUpdatesTimeMs=30, allRemovalsTimeMs=5, commitTimeMs=40)
    batch = Ns(
        durationMs={"queryPlanning": 7, "addBatch": 100, "walCommit": 3, "commitOffsets": 2},
        stateOperators=[op],
    )
    stage = {"executorRunTime": 0, "executorCpuTime": 0, "jvmGcTime": 1, "shuffleWriteRecords": 0}
    stages = [
        {
            **stage,
            "stageId": 0,
            "inputRecords": 500,
            "numTasks": 1,
            "executorRunTime": 60,
            "executorCpuTime": 50_000_000,
            "shuffleWriteRecords": 120,
        },
        {
            **stage,
            "stageId": 1,
            "inputRecords": 0,
            "numTasks": 4,
            "executorRunTime": 90,
            "executorCpuTime": 20_000_000,
        },
        # a final aggregate
        {**stage, "stageId": 2, "inputRecords": 0, "numTasks": 1, "executorRunTime": 9},
    ]
    b = breakdown(Ns(recentProgress=[batch, batch]), stages, partitions=4)
    assert (b["planning"], b["execution"], b["log_commits"]) == (14, 200, 10)
    assert (b["state_updates"], b["state_commit"]) == (70, 80)
    assert (b["source_stage_run"], b["source_stage_cpu"], b["shuffled_rows"]) == (60, 50, 120)
    assert (b["stateful_stage_run"], b["stateful_stage_cpu"], b["gc"]) == (90, 20, 3)
    assert b["stateful_stage_cpu_batches"] == [20]


def test_the_breakdown_shows_the_jit_compilers_time_beside_the_jvms_cpu(spark) -> None:
    from benchmarks.measure import jitMs
    from benchmarks.report import breakdownTable

    before = jitMs(spark)
    spark.range(20_000).selectExpr("sum(id * 3) AS s").collect()
    assert jitMs(spark) >= before >= 0
    b = breakdown(SimpleNamespace(recentProgress=[]), [], partitions=4)
    b.update(jvm_cpu=9_000, jit=4_250)
    table = breakdownTable([{"workload": "tumbling", "system": "sparkwin", "breakdown": b}])
    header, row = table.splitlines()
    assert header.split()[-2:] == ["cpu", "jit"]
    assert row.split()[-2:] == ["9.00", "4.25"]


def test_per_channel_watermarks_keep_the_lagging_channel_that_one_watermark_drops(spark, events):
    lagging = next(w for w in WORKLOADS if w.lagged)
    kept = run_spark(spark, events, lagging, "sparkwin")
    assert (kept["windows"], kept["sum"], kept["weighted"]) == events.lagged_fingerprint
    assert kept["dropped_late"] == 0
    # Spark's own windows follow the fastest channels: the lagging one's events are late.
    native = run_spark(spark, events, lagging, "native")
    assert native["dropped_late"] > 0 and native["sum"] < kept["sum"]


def test_the_floor_streams_every_file_and_keeps_no_row(spark, events) -> None:
    r = run_spark(spark, events, WORKLOADS[0], "floor")
    assert (r["windows"], r["sum"], r["weighted"]) == (0, 0, 0)
    assert r["seconds"] > 0


def test_conf_settings_need_a_key_and_an_equals_sign() -> None:
    import argparse

    assert spark_setting("spark.a=b=c") == ("spark.a", "b=c")
    assert spark_setting("spark.a=") == ("spark.a", "")
    for bad in ("spark.a", "=b", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="--conf takes KEY=VALUE"):
            spark_setting(bad)


def test_the_scale_series_vary_one_factor_and_resize_the_workloads(tmp_path) -> None:
    import argparse

    from benchmarks import charts, scale
    from benchmarks.run import resized

    assert set(scale.SERIES) == {"events", "keys", "slides"}
    for points in scale.SERIES.values():
        assert len(points) >= 2 and len({tuple(args) for _, args, _ in points}) == len(points)
    args = argparse.Namespace(slide=10_000, gap=1_800_000)
    sliding, session = (next(w for w in WORKLOADS if w.kind == k) for k in ("sliding", "session"))
    assert (resized(sliding, args).slide_ms, resized(sliding, args).name) == (
        10_000,
        "sliding 10m/10s sum",
    )
    assert resized(session, args).gap_ms == 1_800_000
    points = [
        {"series": s, "point": p, "system": sys_, "us_per_event": v}
        for s, p, sys_, v in [("events", "1M", "sparkwin", 6.5), ("events", "3M", "sparkwin", 3.1)]
    ]
    charts.costPerEvent(points, str(tmp_path / "scale.png"))
    assert (tmp_path / "scale.png").stat().st_size > 1000


def test_scale_runs_only_the_chosen_points_and_passes_breakdown_and_conf(
    monkeypatch, tmp_path
) -> None:
    from benchmarks import scale

    calls = []

    def point(args, systems, line=None, extra=None):
        calls.append((args, extra))
        breakdown = {"stateful_stage_cpu": 1000, "jvm_cpu": 3000}
        return [
            {
                "system": "sparkwin",
                "workload": "w",
                "events": 10**6,
                "seconds": 2.0,
                "breakdown": breakdown,
            }
        ]

    monkeypatch.setattr(scale, "runPoint", point)
    out = tmp_path / "scale.json"
    scale.main(
        [
            "--series",
            "keys",
            "--points",
            "1k,10M",
            "--systems",
            "sparkwin",
            "--breakdown",
            "--conf",
            "a=b",
            "--json",
            str(out),
        ]
    )
    assert [a[a.index("--keys") + 1] for a, _ in calls] == ["1000", "10000000"]
    assert calls[0][1] == ["--breakdown", "--conf", "a=b"]
    points = json.loads(out.read_text())["points"]
    assert [p["point"] for p in points] == ["1k keys", "10M keys"]
    assert points[0]["breakdown"]["jvm_cpu"] == 3000


def latencyTruth() -> dict:
    """A producer's truth file by hand: two partitions, keys k0 (partition 0) and k1 (1), a bound
    of 200 ms; events in seconds 10 and 11, the watermark past 11000 in both partitions and past
    12000 in partition 0 only."""
    return {
        "bound": 200,
        "maxTs": [12_300, 11_900],
        "buckets": [[0, 10, 3, 30], [1, 10, 2, 7], [0, 11, 1, 5], [1, 11, 4, 40]],
        # Partition 0 made its first event with ts - 200 >= 11000 at 11_250, partition 1 at
        # 11_400; only partition 0 passed 12000.
        "closing": [[11_000, [11_250, 11_400]], [12_000, [12_260, -1]]],
    }


def test_latency_windows_come_from_the_producers_buckets() -> None:
    from benchmarks.latency_stats import expectedWindows

    truth = latencyTruth()
    tumbling = expectedWindows(truth, "tumbling")
    assert tumbling[("k0", 10_000, 11_000)] == (3, 30)
    assert tumbling[("k1", 11_000, 12_000)] == (4, 40)
    sliding = expectedWindows(truth, "sliding")
    assert sliding[("k1", 2_000, 12_000)] == (6, 47)  # both seconds
    assert sliding[("k1", 11_000, 21_000)] == (4, 40)  # second 11 only
    assert sliding[("k0", 1_000, 11_000)] == (3, 30)  # second 10 only
    assert len(sliding) == 2 * 11  # per key: windows starting 1 s ... 11 s


def test_latency_is_measured_from_the_event_that_closed_the_window_for_that_watermark() -> None:
    from benchmarks.latency_stats import Pane, check, closingTimes, latencies, summary

    truth = latencyTruth()
    assert closingTimes(truth, "global") == {11_000: 11_250, 12_000: 12_260}
    assert closingTimes(truth, "valve") == {11_000: 11_400}  # 12000: partition 1 never passed
    panes = [Pane("k0", 10_000, 11_000, 3, 30, 11_500), Pane("k1", 10_000, 11_000, 2, 7, 11_650)]
    chosen, missing = check(panes, truth, "tumbling")
    assert missing == 0
    points = latencies(chosen, closingTimes(truth, "valve"), fromEnd=0)
    assert points == [(11_000, 100), (11_000, 250)]
    # A window ending in the warm-up or the cool-down is left out.
    assert latencies(chosen, closingTimes(truth, "valve"), fromEnd=11_001) == []
    assert latencies(chosen, closingTimes(truth, "valve"), fromEnd=0, toEnd=11_000) == []
    assert latencies(chosen, closingTimes(truth, "valve"), fromEnd=0, toEnd=11_001) == points
    s = summary(points)
    assert (s["p50"], s["p99"], s["max"], s["held"]) == (100, 250, 250, True)


def test_latency_check_refuses_wrong_duplicate_and_early_panes_but_not_a_late_tail() -> None:
    from benchmarks.latency_stats import Pane, ResultMismatchError, check

    truth = latencyTruth()
    good = [Pane("k0", 10_000, 11_000, 3, 30, 0), Pane("k1", 10_000, 11_000, 2, 7, 0)]
    for bad in [
        [good[0], Pane("k1", 10_000, 11_000, 2, 8, 0)],  # a wrong sum
        [*good, good[1]],  # a window twice
        [*good, Pane("k0", 12_000, 13_000, 1, 1, 0)],  # no event falls in it
        [*good, Pane("k1", 11_000, 12_000, 4, 40, 0), Pane("k0", 12_000, 13_000, 0, 0, 0)],
    ]:
        with pytest.raises(ResultMismatchError):
            check(bad, truth, "tumbling")
    with pytest.raises(ResultMismatchError, match="before any watermark"):
        # Watermarks reached 12100 at most: [12000, 13000) cannot have closed.
        check(
            [*good, Pane("k0", 12_000, 13_000, 1, 5, 0)],
            {**truth, "buckets": truth["buckets"] + [[0, 12, 1, 5]]},
            "tumbling",
        )
    # The first window missing and a later one emitted: a hole, not a system behind.
    with pytest.raises(ResultMismatchError, match="missing"):
        check(
            [good[1], Pane("k1", 11_000, 12_000, 4, 40, 0)],
            {**truth, "maxTs": [12_300, 12_300]},
            "tumbling",
        )
    # Behind: the latest windows not emitted yet, counted, not refused.
    assert check(good[:1], truth, "tumbling")[1] == 1


def test_latency_table_prints_a_failed_run_as_a_row_beside_the_others() -> None:
    from benchmarks.report import latencyTable

    held = {"workload": "tumbling", "rate": 100000, "system": "flink", "achieved": 99870.4}
    held |= {"p50": 153.2, "p99": 270.9, "max": 301.0, "growth": 2.0, "held": True}
    failed = {"workload": "tumbling", "rate": 100000, "system": "sparkwin-rt", "achieved": None}
    failed |= {"p50": None, "p99": None, "max": None, "growth": None, "held": False}
    failed["error"] = "ResultMismatchError: 683 differences from the events"
    rows = latencyTable([failed, held]).splitlines()
    assert len(rows) == 3
    assert rows[1].split() == [
        "tumbling",
        "100000",
        "sparkwin-rt",
        "-",
        "-",
        "-",
        "-",
        "-",
        "error",
    ]
    assert rows[2].split() == [
        "tumbling",
        "100000",
        "flink",
        "99870",
        "153",
        "271",
        "301",
        "2",
        "yes",
    ]


def test_latency_takes_a_list_of_key_counts() -> None:
    import argparse

    from benchmarks.latency import KEYS, keyCounts
    from benchmarks.report import latencyMarkdown

    assert keyCounts("16,100000,1000000") == [16, 100_000, 1_000_000]
    for bad in ["", "16,", "0", "-5", "many"]:
        with pytest.raises(argparse.ArgumentTypeError):
            keyCounts(bad)
    row = {"workload": "tumbling", "rate": 10000, "keys": 100000, "system": "flink"}
    row |= {"achieved": 9990.0, "p50": 150.0, "p99": 280.0, "max": 300.0, "growth": 1.0}
    row |= {"held": True}
    assert "| 10k (10.0k) | 100000 | flink |" in latencyMarkdown([row], KEYS)


def test_latency_check_finds_every_window_of_many_keys_without_listing_them() -> None:
    from benchmarks.latency_stats import Pane, Truth, check

    keys = 5000
    # Key k has one event in second 10 + k % 3: a window of its own, all in partition 0's closing.
    truth = {"bound": 200, "maxTs": [20_000], "closing": [[20_000, [1]]]}
    truth["buckets"] = [[k, 10 + k % 3, 1, k] for k in range(keys)]
    panes = [Pane(f"k{k}", (10 + k % 3) * 1000, (11 + k % 3) * 1000, 1, k, 0) for k in range(keys)]
    assert check(panes, truth, "tumbling")[1] == 0
    behind = [p for p in panes if p.key != "k2"]  # k2's window is among the latest
    assert check(behind, truth, "tumbling")[1] == 1
    sliding = Truth(truth, "sliding")
    assert sum(1 for _ in sliding.windows()) == 10 * keys  # each window once
    assert sliding.get(("k4", 5_000, 15_000)) == (1, 4)  # k4's event is in second 11


def test_latency_valve_system_runs_the_same_windows_per_partition_watermark(spark) -> None:
    """sparkwin-valve-1s's pipeline (channel="partition" over the input's partitions) gives the
    same panes as sparkwin-mb's on data no watermark makes late, and is measured from the valve's
    closing event."""
    from benchmarks.systems.latency import PARTITIONS, WATERMARK, sparkwinPanes

    rows = [(f"k{i % 3}", i, 100 * i, i % PARTITIONS) for i in range(40)]
    ev = spark.createDataFrame(rows, "key string, amount long, ts long, partition int")
    plain = sorted(r.value for r in sparkwinPanes(ev, "tumbling").collect())
    valve = sorted(r.value for r in sparkwinPanes(ev, "tumbling", valve=True).collect())
    assert valve == plain and len(plain) == 12  # 4 one-second windows x 3 keys
    assert "k0,0,1000,4,18" in plain
    assert WATERMARK["sparkwin-valve-1s"] == "valve" and WATERMARK["sparkwin-mb-1s"] == "global"


def benchmarkImports() -> dict[str, set[str]]:
    """Each module of benchmarks/ (dotted name) and the modules of benchmarks/ it imports, read
    from its import statements (`from benchmarks import x` names module x where x is one)."""
    root = Path(__file__).resolve().parent.parent
    modules = {
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p
        for p in (root / "benchmarks").rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's package, `level - 1` up
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parts, *([base] if base else [])])
                imported |= {
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                }
        graph[name] = {m for m in imported if m in modules and m != name}
    return graph


def importCircle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of imports (its modules in order, the first again at the end), or None."""
    state: dict[str, str] = {}  # "open" while on the walk's path, then "done"
    path: list[str] = []

    def walk(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return [*path[path.index(imported) :], imported]
            if imported not in state and (circle := walk(imported)):
                return circle
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state and (circle := walk(module)):
            return circle
    return None


def test_benchmarks_import_one_way_without_a_circle() -> None:
    graph = benchmarkImports()
    # The reading sees imports: a command imports the pieces it runs.
    assert "benchmarks.systems.windows" in graph["benchmarks.run"]
    assert "benchmarks.services" in graph["benchmarks.topics"]
    assert importCircle(graph) is None, f"benchmarks/ imports in a circle: {importCircle(graph)}"
    assert importCircle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
