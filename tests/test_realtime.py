"""Spark's real-time mode (``trigger={"realTime": ...}``): what it refuses before a query
starts, what ``explain()`` says, and, on the real Kafka broker in a JVM with enough task slots,
that windows leave while a batch runs and that the same input gives the same panes, late rows
and errors as micro-batch mode.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from kafka_broker import Producer, createTopic, produce, readTopic
from realtime_run import panesByWindow, truthByWindow

import sparkwin as sw

TESTS = Path(__file__).resolve().parent
WATERMARK = sw.WatermarkStrategy.forBoundedOutOfOrderness(1000)


def _pipeline(df, ts: str = "timestamp", key: str = "value"):
    return (
        sw.stream(df, ts, watermark=WATERMARK)
        .keyBy(key)
        .window(sw.TumblingEventTimeWindows.of(1000))
        .aggregate(sw.agg.count())
    )


def _refused(spark, pipeline, tmp_path: Path, match: str, **kwargs) -> None:
    before = len(spark.streams.active)
    with pytest.raises(ValueError, match=match):
        pipeline.writeStream(str(tmp_path / "chk"), trigger={"realTime": "5 minutes"}, **kwargs)
    assert len(spark.streams.active) == before, "refused before the query started"
    assert not (tmp_path / "chk").exists(), "nothing written to the checkpoint"


@pytest.mark.parametrize(
    ("output", "match"),
    [
        ("/tmp/sparkwin-results", r"outputs\['main'\] is a directory .*sw.toKafka"),
        (sw.toTable("rt_results"), r"outputs\['main'\] is a table.*sw.forEachRow"),
        (sw.toDelta("/tmp/sparkwin-delta"), r"outputs\['main'\] is a table"),
        (lambda df, batchId: None, r"foreachBatch function fn\(df, batchId\).*sw.forEachRow"),
    ],
    ids=["directory", "table", "delta", "foreachBatch"],
)
def test_real_time_refuses_micro_batch_outputs_naming_the_fix(
    spark, streamingEvents, tmp_path, output, match
) -> None:
    _refused(spark, _pipeline(streamingEvents), tmp_path, match, outputs={"main": output})


def test_real_time_refuses_foreach_output_mixed_sinks_and_process_functions(
    spark, streamingEvents, tmp_path
) -> None:
    pipeline = _pipeline(streamingEvents)
    _refused(spark, pipeline, tmp_path, "no micro-batches", foreachOutput=lambda t, d, b: None)
    mixed = {"main": sw.toKafka("out", "localhost:9092"), "errors": sw.forEachRow(print)}
    _refused(spark, pipeline, tmp_path, "all sw.toKafka", outputs=mixed)
    servers = {
        "main": sw.toKafka("a", "one:9092"),
        "errors": sw.toKafka("b", "two:9092"),
    }
    _refused(spark, pipeline, tmp_path, "same bootstrapServers", outputs=servers)
    process = (
        sw.stream(streamingEvents, "timestamp", watermark=WATERMARK)
        .keyBy("value")
        .window(sw.TumblingEventTimeWindows.of(1000))
        .process(lambda key, window, pdf: pdf, "value long")
    )
    _refused(spark, process, tmp_path, "process", outputs={"main": sw.forEachRow(print)})
    with pytest.raises(ValueError, match="process"):
        process.toDF(realTime=True)


def test_real_time_refuses_a_trigger_without_a_batch_length_and_a_bounded_input(
    spark, streamingEvents, events, tmp_path
) -> None:
    pipeline = _pipeline(streamingEvents)
    for interval, found in [(300, "got 300"), ("  ", "got '  '")]:
        with pytest.raises(sw.errors.PlanError, match=f"batch length as a string.*{found}"):
            pipeline.writeStream(
                str(tmp_path / "chk"),
                outputs={"main": sw.forEachRow(print)},
                trigger={"realTime": interval},
            )
    assert not (tmp_path / "chk").exists()
    bounded = _pipeline(events, ts="ts", key="user")
    with pytest.raises(sw.errors.PlanError, match="runs streams only"):
        bounded.toDF(realTime=True)


def test_real_time_refuses_plans_it_cannot_run(spark, streamingEvents) -> None:
    chained = (
        sw.stream(_pipeline(streamingEvents).toDF(), "window_time")
        .keyBy("value")
        .window(sw.TumblingEventTimeWindows.of(5000))
        .aggregate(sw.agg.count())
    )
    with pytest.raises(sw.errors.PlanError, match="chained windows"):
        chained.toDF(realTime=True)


def test_real_time_needs_a_task_slot_per_kafka_and_shuffle_partition(
    spark, kafkaBroker, tmp_path
) -> None:
    servers = kafkaBroker.bootstrapServers
    topic = f"rt-slots-{uuid.uuid4().hex[:8]}"
    createTopic(spark, servers, topic, partitions=4)
    stream = readTopic(spark, servers, topic, "user string, ts timestamp")
    pipeline = _pipeline(stream, ts="ts", key="user")
    # 4 Kafka partitions + 2 shuffle partitions against local[2]'s two slots.
    _refused(
        spark,
        pipeline,
        tmp_path,
        r"4 Kafka partitions and 2 shuffle partitions .* need 6 task slots, and this cluster has 2",
        outputs={"main": sw.toKafka("out", servers)},
    )


def test_explain_says_which_mode_runs_and_where_time_comes_from(spark, streamingEvents) -> None:
    pipeline = _pipeline(streamingEvents)
    micro = pipeline.describe()
    assert micro["mode"].startswith("micro-batch")
    assert micro["timeMode"] == "EventTime"
    real = pipeline.describe(realTime=True)
    assert real["mode"].startswith("real-time")
    # No Spark watermark or timers: the key groups' own watermark, a channel per source partition.
    assert real["timeMode"] == "None"
    assert (
        "per source partition" in real["watermarks"] and "while a batch runs" in real["watermarks"]
    )
    assert not real["clock"]
    # Unset, one key group per shuffle partition: a watermark summary is a row per group.
    shared = spark.conf.get("spark.sparkwin.keyGroups")  # the test session's "2"
    spark.conf.unset("spark.sparkwin.keyGroups")
    try:
        groups = pipeline.describe(realTime=True)["keyGroups"]
        microGroups = pipeline.describe()["keyGroups"]
    finally:
        spark.conf.set("spark.sparkwin.keyGroups", shared)
    assert groups["count"] == int(spark.conf.get("spark.sql.shuffle.partitions")), groups
    assert groups["origin"].startswith("real-time default"), groups
    assert microGroups["count"] >= 128, microGroups
    idle = (
        sw.stream(
            streamingEvents,
            "timestamp",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(1000).withIdleness(5000),
        )
        .keyBy("value")
        .window(sw.TumblingEventTimeWindows.of(1000))
        .aggregate(sw.agg.count())
    )
    assert idle.describe(realTime=True)["timeMode"] == "ProcessingTime"
    assert "mode:       real-time" in _explained(pipeline, realTime=True)
    assert sw.Pipeline.describe(pipeline)["mode"].startswith("micro-batch")


def _explained(pipeline, realTime: bool) -> str:
    import contextlib
    import io

    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        pipeline.explain(realTime=realTime)
    return text.getvalue()


def _runInItsOwnJvm(script: str, servers: str, work: Path, timeout: float) -> dict[str, Any]:
    """Runs a real-time script beside this file in a JVM of its own (real-time mode needs more
    task slots than the shared session's local[2]); returns the JSON of its last line."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, str(TESTS / script), servers, str(work)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    traceback = done.stderr[done.stderr.rfind("Traceback") :] if "Traceback" in done.stderr else ""
    assert done.returncode == 0, (traceback or done.stderr)[:6000]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_real_time_fires_windows_inside_a_batch_with_micro_batch_results(
    kafkaBroker, tmp_path
) -> None:
    """One JVM of its own (local[8]) runs the pipeline in both modes on one topic: the real-time
    query's first windows reach Kafka inside its first (300 s) batch, and both modes write the
    same panes, late rows and errors; then processing-time windows in real-time mode, and a
    pipeline planned for micro-batches refused in it (realtime_run.py)."""
    started = time.monotonic()
    report = _runInItsOwnJvm("realtime_run.py", kafkaBroker.bootstrapServers, tmp_path, 300)
    outputs = report["outputs"]
    assert outputs["realTime"] == outputs["microBatch"]
    assert len(outputs["realTime"]["main"]) == 8
    assert [json.loads(r)["ts"] for r in outputs["realTime"]["late"]] == [400]
    assert len(outputs["realTime"]["errors"]) == 1
    # The windows left inside the first real-time batch: no batch had ended when they arrived,
    # seconds after the row that closed them.
    assert report["batchesDoneBeforeFirstWindow"] == [], report
    assert report["firstWindowAfterClose"] < 20, report  # 2-3 s measured; slack for load
    # Processing-time windows fire inside the batch as later rows reach their key groups: the
    # first two waves' 8 rows, all of them.
    processing = report["processingTime"]
    assert processing["batchesDone"] == [], processing
    assert sum(p["count"] for p in processing["panes"]) == 8, processing
    assert {p["user"] for p in processing["panes"]} == {"u0", "u1"}
    # A pipeline planned for micro-batches fails at its first rows in real-time mode, naming
    # the plan that fires inside the batch, instead of holding every window to the batch's end.
    mismatch = report["microBatchPlanInRealTime"]
    assert mismatch["error"] is not None, mismatch
    assert "planned for micro-batches" in mismatch["error"], mismatch
    assert "toDF(realTime=True)" in mismatch["error"], mismatch
    assert mismatch["afterRows"] < 30, mismatch  # a batch is 300 s
    print(f"real-time run: {time.monotonic() - started:.1f} s, {report}")


def test_real_time_short_batches_keep_a_windows_rows_across_the_commit(
    kafkaBroker, tmp_path
) -> None:
    """Batches of 5 s (realtime_batches_run.py): a window's rows arrive in one batch without
    closing it, and the rows that close it in a later batch. A data row's call leaves its state
    unwritten until its group's next summary, and the map side's last summary of a partition
    writes it before Spark commits: the pane counts every row of the first batch."""
    report = _runInItsOwnJvm("realtime_batches_run.py", kafkaBroker.bootstrapServers, tmp_path, 180)
    # The rows' batch ended (and a second one) before the closing rows were written.
    assert len(report["batchesBeforeClose"]) >= len(report["batchesBeforeRows"]) + 2, report
    assert report["panesBeforeClose"] == [], report
    got = {p["user"]: {"count": p["count"], "sum": p["sum_amount"]} for p in report["panes"]}
    assert got == report["expected"], report


def test_for_each_row_hands_each_output_its_own_rows() -> None:
    """The real-time foreach: a union row goes to its output's function as that output's row
    (a result, a late row with the input's columns, an error with its reason)."""
    from pyspark.sql import Row

    from sparkwin._plan.contract import ERROR, ERROR_COLUMN, KIND, LATE, RESULT
    from sparkwin._spark.realtime import _rowDispatcher

    seen: dict[str, list] = {"main": [], "late": [], "errors": []}
    dispatch = _rowDispatcher(
        {RESULT: seen["main"].append, LATE: seen["late"].append, ERROR: seen["errors"].append}
    )
    result = Row(user="a", count=2)
    event = Row(user="a", ts=5)

    def union(kind: int, error: str | None = None) -> Row:
        return Row(**{KIND: kind, "result": result, "input": event, ERROR_COLUMN: error})

    for row in (union(RESULT), union(LATE), union(ERROR, "the timestamp is null")):
        dispatch(row)
    assert seen["main"] == [result] and seen["late"] == [event]
    assert seen["errors"][0].asDict() == {
        "user": "a",
        "ts": 5,
        ERROR_COLUMN: "the timestamp is null",
    }
    # An output that is not written gets nothing.
    _rowDispatcher({RESULT: seen["main"].append})(union(LATE))
    assert seen["late"] == [event]


def test_real_time_every_source_partition_holds_the_watermark_before_its_first_row(
    kafkaBroker, tmp_path
) -> None:
    """Without channel=, a channel per source partition (realtime_partitions_run.py): partition
    3's rows come only after a batch that read the other three partitions' rows has ended, and
    no window fires before them (each partition the batch reads holds the watermark from the
    start); every window's count and sum are the producer's. With idleness, a partition that
    never delivers stops holding the others back."""
    started = time.monotonic()
    report = _runInItsOwnJvm(
        "realtime_partitions_run.py", kafkaBroker.bootstrapServers, tmp_path, 300
    )
    late, idle = report["late"], report["idle"]
    assert late["panesBeforeLatePartition"] == {}, late
    assert late["panes"] == {k: [v] for k, v in late["expected"].items()}, late
    assert idle["panes"] == {k: [v] for k, v in idle["expected"].items()}, idle
    print(f"partitions run: {time.monotonic() - started:.1f} s")


class _Waves(threading.Thread):
    """Writes the kill test's input while the drivers come and go: wave after wave, on each of
    two partitions a row of each of three users, 500 ms of event time a wave (in order within a
    partition), each row's amount its own; a wave every 0.4 s, until stopped."""

    def __init__(self, spark: Any, servers: str, topic: str) -> None:
        super().__init__(name="real-time-kill-producer", daemon=True)
        self.producer, self.topic = Producer(spark, servers), topic
        self.records: list[tuple[int, str, dict[str, Any]]] = []
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            wave = 0
            while not self.stopping.wait(0.4):
                rows = [
                    (
                        p,
                        f"u{u}",
                        {
                            "user": f"u{u}",
                            "amount": len(self.records) + 3 * p + u + 1,
                            "ts": 500 * wave + 100 * u,
                        },
                    )
                    for p in (0, 1)
                    for u in range(3)
                ]
                self.producer.send(self.topic, rows)
                self.records += rows
                wave += 1
        except BaseException as e:  # noqa: BLE001 - the test reports it
            self.error = e
        finally:
            self.producer.close()


def test_a_killed_real_time_driver_resumes_from_its_checkpoint_with_every_window_exact(
    spark, kafkaBroker, tmp_path
) -> None:
    """A real-time query's driver (realtime_kill_run.py, a JVM of its own) is SIGKILLed while
    windows fire inside a batch, then started again on its checkpoint while the input goes on.
    Every window's count and sum are the producer's; a pane written twice is only one the
    killed batch had written (Spark runs that batch again from its starting offsets, and the
    Kafka sink is at least once)."""
    started = time.monotonic()
    servers = kafkaBroker.bootstrapServers
    run = uuid.uuid4().hex[:8]
    source, out = f"rtk-in-{run}", f"rtk-out-{run}"
    createTopic(spark, servers, source, partitions=2)
    createTopic(spark, servers, out, partitions=1)
    progress, stop = tmp_path / "progress.jsonl", tmp_path / "stop"
    args = {
        "source": source,
        "out": out,
        "checkpoint": str(tmp_path / "chk"),
        "progress": str(progress),
        "stop": str(stop),
        "batch": "5 seconds",
    }
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    logs: list[Path] = []

    def start() -> subprocess.Popen[bytes]:
        logs.append(tmp_path / f"driver-{len(logs) + 1}.log")
        with logs[-1].open("wb") as log:
            return subprocess.Popen(
                [sys.executable, str(TESTS / "realtime_kill_run.py"), servers, json.dumps(args)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # the driver's JVM is in its group: one SIGKILL ends both
            )

    def batches() -> list[dict[str, Any]]:
        lines = progress.read_text().splitlines() if progress.exists() else []
        return [json.loads(line) for line in lines]

    def panes() -> dict[str, list[dict]]:
        return panesByWindow(spark, servers, out, "~end")

    def awaitUntil(ready: Any, what: str, driver: subprocess.Popen[bytes], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            assert producer.error is None, producer.error
            if driver.poll() is not None:
                pytest.fail(
                    f"the driver exited {driver.returncode}: {logs[-1].read_text()[-4000:]}"
                )
            assert time.monotonic() < deadline, f"not {what} within {timeout} s"
            time.sleep(0.5)

    phases: list[tuple[str, float]] = []

    def reached(phase: str) -> None:
        phases.append((phase, round(time.monotonic() - started, 1)))

    producer = _Waves(spark, servers, source)
    driver = start()
    try:
        producer.start()
        # A batch that read rows has ended (the restart has state to resume; a new JVM's first
        # batches can end before their tasks read), and windows fire in the next one.
        awaitUntil(lambda: any(b["rows"] for b in batches()), "a batch read rows", driver, 120)
        reached("a batch that read rows ended")
        firedBefore = sum(map(len, panes().values()))
        awaitUntil(
            lambda: sum(map(len, panes().values())) >= firedBefore + 3, "3 more panes", driver, 60
        )
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
        reached("killed")
        atKill = panes()
        killedAfter = len(batches())
        driver = start()
        # The second driver runs the killed batch again, and goes on with the input.
        awaitUntil(lambda: len(batches()) > killedAfter, "the killed batch again", driver, 120)
        reached("the killed batch ran again")
        producer.stopping.set()
        producer.join(timeout=60)
        assert producer.error is None, producer.error
        produce(
            spark,
            servers,
            source,
            [(p, "~end", {"user": "~end", "amount": 0, "ts": 10**9}) for p in (0, 1)],
        )
        expected = truthByWindow(producer.records, 2_000)
        awaitUntil(lambda: set(panes()) >= set(expected), "every window", driver, 60)
        reached("every window")
        stop.touch()
        driver.wait(timeout=60)
    finally:
        producer.stopping.set()
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    got = panes()
    wrong = {k: v for k, v in got.items() if any(c != expected.get(k) for c in v)}
    assert wrong == {}, {k: (v, expected.get(k)) for k, v in wrong.items()}
    assert set(got) == set(expected)
    twice = {k for k, v in got.items() if len(v) > 1}
    assert twice <= set(atKill), (twice - set(atKill), "written twice, but not by the killed batch")
    print(
        f"killed real-time driver: {len(expected)} windows exact, {len(twice)} written twice "
        f"(all by the killed batch), {time.monotonic() - started:.1f} s: {phases}"
    )
