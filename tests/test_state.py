"""Looking inside a checkpoint (``sparkwin.state.read``) and what a query refuses to resume
before it starts (docs/concepts/state.md).

The reader shows what the engine holds: the values here are the script's, worked out by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sparkstreams import SCHEMA, SCRIPT, onOperator, tumbling, writeBatches

import sparkwin as sw
from sparkwin.errors import CheckpointError, PlanError


def _start(spark, tmp_path: Path, build=tumbling, trigger=None):
    df = (
        spark.readStream.schema(SCHEMA)
        .option("maxFilesPerTrigger", 1)
        .json(str(tmp_path / "source"))
    )
    pipeline = build(df)
    tags = ["main", *pipeline.sideOutputTags()]
    query = pipeline.writeStream(
        str(tmp_path / "checkpoint"),
        {t: str(tmp_path / "out" / t) for t in tags},
        trigger=trigger,
    )
    return pipeline, query


def _run(spark, tmp_path: Path, batches, build=tumbling, start: int = 0):
    writeBatches(tmp_path / "source", batches, start=start)
    pipeline, query = _start(spark, tmp_path, build)
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    return pipeline


def _ms(value) -> int:
    return int(value.timestamp() * 1000)


@pytest.mark.compat
def test_read_shows_each_keys_open_windows_timers_and_the_key_groups(spark, tmp_path) -> None:
    # SCRIPT's first three batches: watermark 18999. Windows of 10 s, lateness 5 s: a's and b's
    # [0, 10 s) fired (cleaned at 14999); a [10, 20) holds 4, b [20, 30) 7, c [10, 20) 8.
    _run(spark, tmp_path, SCRIPT[:3])
    state = sw.state.read(str(tmp_path / "checkpoint"))
    windows = {
        (r.user, _ms(r.window_start), _ms(r.window_end)): (r.sum_amount, r["count"], r.panes_fired)
        for r in state.windows.collect()
    }
    assert windows == {
        ("a", 10_000, 20_000): (4, 1, 0),
        ("b", 20_000, 30_000): (7, 1, 0),
        ("c", 10_000, 20_000): (8, 1, 0),
    }
    # Each window's end and its cleanup, on event time.
    timers = sorted((r.user, r.domain, _ms(r.time)) for r in state.timers.collect())
    assert timers == [
        ("a", "event", 19_999),
        ("a", "event", 24_999),
        ("b", "event", 29_999),
        ("b", "event", 34_999),
        ("c", "event", 19_999),
        ("c", "event", 24_999),
    ]
    groups = state.keyGroups.collect()
    assert sum(g["keys"] for g in groups) == 3
    assert {g["key_group"] for g in groups} == {r.key_group for r in state.windows.collect()}
    assert all(g.spark_timer is not None for g in groups)
    assert state.channels.count() == 0
    assert state.batchId == max(
        int(p.name) for p in (tmp_path / "checkpoint" / "commits").iterdir() if p.name.isdigit()
    )


@pytest.mark.compat
def test_a_running_querys_checkpoint_is_read_at_the_batches_it_committed(spark, tmp_path) -> None:
    writeBatches(tmp_path / "source", SCRIPT[:2])
    _, query = _start(spark, tmp_path)
    try:
        query.processAllAvailable()
        first = sw.state.read(str(tmp_path / "checkpoint"))
        writeBatches(tmp_path / "source", SCRIPT[2:3], start=2)
        query.processAllAvailable()
        later = sw.state.read(str(tmp_path / "checkpoint"))
        assert later.batchId > first.batchId
        # The earlier batch reads as it was, while the query runs on.
        again = sw.state.read(str(tmp_path / "checkpoint"), batchId=first.batchId)
        assert sorted(map(tuple, again.windows.collect())) == sorted(
            map(tuple, first.windows.collect())
        )
        users = lambda s: sorted(r.user for r in s.windows.collect())  # noqa: E731
        assert "c" not in users(first) and "c" in users(later)
        assert query.isActive
    finally:
        query.stop()


def test_a_reader_names_the_batches_there_are(spark, tmp_path) -> None:
    _run(spark, tmp_path, SCRIPT[:1])
    with pytest.raises(PlanError, match=r"batchId must be a batch the checkpoint committed, 0 to"):
        sw.state.read(str(tmp_path / "checkpoint"), batchId=999)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(PlanError, match="has no committed batch yet"):
        sw.state.read(str(empty))


def test_channels_show_each_groups_watermarks_and_idleness(spark, tmp_path) -> None:
    def perChannel(df):
        return (
            sw.stream(
                df, "ts", channel="ch", watermark=sw.WatermarkStrategy.forMonotonousTimestamps()
            )
            .keyBy("user")
            .window(sw.TumblingEventTimeWindows.of(10_000))
            .aggregate(sw.agg.count())
        )

    schema = "user string, amount long, ts long, ch int"
    writeBatches(
        tmp_path / "source",
        [
            [
                {"user": "a", "amount": 1, "ts": 5_000, "ch": 0},
                {"user": "b", "amount": 1, "ts": 2_000, "ch": 1},
            ]
        ],
    )
    df = spark.readStream.schema(schema).json(str(tmp_path / "source"))
    pipeline = perChannel(df)
    query = pipeline.writeStream(str(tmp_path / "checkpoint"), {"main": str(tmp_path / "out")})
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    state = sw.state.read(str(tmp_path / "checkpoint"))
    channels = state.channels.collect()
    # Every group keeps its own copy of both channels: monotonous watermarks are max - 1.
    assert {(c.channel, _ms(c.watermark), c.idle) for c in channels} == {
        ("0", 4_999, False),
        ("1", 1_999, False),
    }
    assert {_ms(c.valve_watermark) for c in channels} == {1_999}
    assert len(channels) == 2 * state.keyGroups.count()


def test_a_checkpoint_keeps_its_pipeline_so_it_reads_alone(spark, tmp_path) -> None:
    _run(spark, tmp_path, SCRIPT[:1])
    manifest = json.loads((tmp_path / "checkpoint" / "sparkwin" / "manifest.json").read_text())
    assert manifest["sparkwin"] == sw.__version__
    assert manifest["runtime"] in ("transformWithState", "flatMapGroupsWithState")
    assert manifest["operators"][0]["plan"]["keys"] == ["user"]
    # Without the manifest (a 0.4 checkpoint, or Spark's own writeStream) it asks for the pipeline.
    (tmp_path / "checkpoint" / "sparkwin" / "manifest.json").unlink()
    with pytest.raises(PlanError, match=r"pass the\s+pipeline that wrote it"):
        sw.state.read(str(tmp_path / "checkpoint"))
    df = spark.readStream.schema(SCHEMA).json(str(tmp_path / "source"))
    assert sw.state.read(str(tmp_path / "checkpoint"), tumbling(df)).windows.count() == 2


def test_a_copied_checkpoint_is_relocated(spark, tmp_path) -> None:
    _run(spark, tmp_path, SCRIPT[:2], build=tumbling)
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "checkpoint", copy)
    assert sw.state.relocate(str(copy)) == 0  # flatMapGroupsWithState keeps no paths
    if spark.version.startswith("3."):
        return
    # Spark 4's transformWithState does.
    shutil.rmtree(copy)
    shutil.rmtree(tmp_path / "checkpoint")
    shutil.rmtree(tmp_path / "source")
    with onOperator(spark, "transformWithState"):
        _run(spark, tmp_path, SCRIPT[:2])
    shutil.copytree(tmp_path / "checkpoint", copy)
    # The copy names the first place's schema files: read while they are there, refused after.
    original = sorted(map(tuple, sw.state.read(str(tmp_path / "checkpoint")).windows.collect()))
    assert sorted(map(tuple, sw.state.read(str(copy)).windows.collect())) == original
    moved = tmp_path / "moved"
    shutil.move(tmp_path / "checkpoint", moved)
    with pytest.raises(CheckpointError, match=r"copied or moved from another place.*relocate"):
        sw.state.read(str(copy))
    assert sw.state.relocate(str(copy)) >= 1
    shutil.move(moved, tmp_path / "checkpoint")
    assert sw.state.relocate(str(copy)) == 0
    assert sorted(map(tuple, sw.state.read(str(copy)).windows.collect())) == original


# ---------------------------------------------------------------------------------------------
# Refused before the query starts, nothing read into it or written.


def _refused(spark, tmp_path: Path, build=tumbling):
    """Starts the query on the checkpoint expecting a refusal; returns it, after checking that
    the query planned no batch and the checkpoint's files are as they were."""
    checkpoint = tmp_path / "checkpoint"
    before = {p: p.read_bytes() for p in checkpoint.rglob("*") if p.is_file()}
    with pytest.raises(CheckpointError) as refused:
        _start(spark, tmp_path, build)
    after = {p: p.read_bytes() for p in checkpoint.rglob("*") if p.is_file()}
    assert after == before, "a refused checkpoint is left as it was"
    return str(refused.value)


@pytest.mark.compat
def test_a_checkpoint_of_a_newer_release_is_refused_naming_both(spark, tmp_path) -> None:
    _run(spark, tmp_path, SCRIPT[:1])
    path = tmp_path / "checkpoint" / "sparkwin" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["sparkwin"] = "99.1.0"
    path.write_text(json.dumps(manifest))
    path.with_name(".manifest.json.crc").unlink(missing_ok=True)  # as the release wrote it
    message = _refused(spark, tmp_path)
    assert f"written by sparkwin 99.1.0, and this is sparkwin {sw.__version__}" in message
    assert "Install sparkwin 99.1.0 or newer" in message


def test_a_checkpoint_of_another_pipeline_is_refused_naming_what_changed(spark, tmp_path) -> None:
    _run(spark, tmp_path, SCRIPT[:1])

    def counts(df):
        return (
            sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(2000))
            .keyBy("user")
            .window(sw.TumblingEventTimeWindows.of(10_000))
            .allowedLateness(5_000)
            .sideOutputLateData("late")
            .aggregate(sw.agg.count())
        )

    message = _refused(spark, tmp_path, counts)
    assert "was written for another pipeline" in message
    assert "its aggregates (sum_amount, count; now count)" in message


def test_a_checkpoint_missing_a_state_file_is_refused_as_damaged(spark, tmp_path) -> None:
    _run(spark, tmp_path, SCRIPT[:3])
    state = tmp_path / "checkpoint" / "state" / "0"
    changelogs = sorted(state.rglob("*.changelog"), key=lambda p: int(p.stem))
    newest = [p for p in changelogs if int(p.stem) == int(changelogs[-1].stem)]
    newest[0].unlink()
    message = _refused(spark, tmp_path)
    assert (
        "the checkpoint is damaged" in message
        and f"cannot load state version {newest[0].stem}" in message
    )


def test_a_damaged_manifest_is_refused(spark, tmp_path) -> None:
    _run(spark, tmp_path, SCRIPT[:1])
    manifest = tmp_path / "checkpoint" / "sparkwin" / "manifest.json"
    manifest.write_text("{not json")
    assert "does not match its checksum file" in _refused(spark, tmp_path)
    manifest.with_name(".manifest.json.crc").unlink(missing_ok=True)
    assert "is not valid JSON" in _refused(spark, tmp_path)


def test_a_micro_batch_checkpoint_runs_in_real_time_mode_once_moved(spark, tmp_path) -> None:
    """A new micro-batch checkpoint keeps its key groups on flatMapGroupsWithState; real-time
    mode runs on transformWithState, so it refuses that checkpoint before anything starts, naming
    the move, and takes the moved one (DESIGN.md, "Which operator hosts the key groups")."""
    pipeline = _run(spark, tmp_path, SCRIPT[:3])
    checkpoint = str(tmp_path / "checkpoint")
    assert "flatMapGroupsWithState" in pipeline.describe(checkpointLocation=checkpoint)["runtime"]
    realTime = pipeline.describe(realTime=True, checkpointLocation=checkpoint)["runtime"]
    assert realTime.startswith("streaming: transformWithState over key groups (real-time mode")
    before = {p: p.read_bytes() for p in Path(checkpoint).rglob("*") if p.is_file()}
    with pytest.raises(
        CheckpointError,
        match=r"state on Spark's flatMapGroupsWithState, and this query runs on "
        r"transformWithState \(real-time mode\): move the checkpoint with sparkwin\.state\.migrate",
    ):
        pipeline.toDF(realTime=True, checkpointLocation=checkpoint)
    after = {p: p.read_bytes() for p in Path(checkpoint).rglob("*") if p.is_file()}
    assert after == before, "a refused checkpoint is left as it was"
    moved = str(tmp_path / "moved")
    report = sw.state.migrate(checkpoint, moved, pipeline, realTime=True)
    assert report["runtime"] == "flatMapGroupsWithState -> transformWithState"
    assert report["entries"] > 0
    pipeline.toDF(realTime=True, checkpointLocation=moved)  # admitted

    def windows(at: str) -> list:
        return sorted(map(str, sw.state.read(at).windows.collect()))

    assert windows(moved) == windows(checkpoint)


def test_reading_over_spark_connect(connectSpark, spark, tmp_path) -> None:
    pipeline = _run(spark, tmp_path, SCRIPT[:3])
    classic = sw.state.read(str(tmp_path / "checkpoint"))
    remote = sw.state.read(str(tmp_path / "checkpoint"), spark=connectSpark)
    assert remote.batchId == classic.batchId
    for view in ("windows", "timers", "keyGroups"):
        assert sorted(map(tuple, getattr(remote, view).collect())) == sorted(
            map(tuple, getattr(classic, view).collect())
        ), view
    # Without a manifest the Connect client sends the pipeline's plan.
    (tmp_path / "checkpoint" / "sparkwin" / "manifest.json").unlink()
    assert (
        sw.state.read(str(tmp_path / "checkpoint"), pipeline, spark=connectSpark).windows.count()
        == 3
    )
