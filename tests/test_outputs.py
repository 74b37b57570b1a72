"""writeStream's outputs: directories, catalog tables (``sw.toTable``) and the user's own
functions, each exactly once across a restart that replays a batch (Spark replays a batch whose
commit is missing: the query wrote its outputs, then died before committing)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sparkstreams import writeBatches

import sparkwin as sw

SCHEMA = "user string, amount long, ts long"
# Watermark (bound 0) after each batch: 4999, 14999, 24999, 99999.
BATCHES = [
    [{"user": "a", "amount": 1, "ts": 1_000}, {"user": "b", "amount": 2, "ts": 5_000}],
    [{"user": "a", "amount": 3, "ts": 12_000}, {"user": "a", "amount": 4, "ts": 15_000}],
    [{"user": "b", "amount": 5, "ts": 25_000}, {"user": "a", "amount": 6, "ts": 2_000}],
    [{"user": "z", "amount": 0, "ts": 100_000}],
]
# Windows of 10 s closed by the last watermark; a@2000 arrives after [0, 10000) fired: late.
EXPECTED = {("a", 0, 1), ("b", 0, 2), ("a", 10_000, 7), ("b", 20_000, 5)}
LATE = {("a", 6)}


def _pipeline(df) -> sw.Pipeline:
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .sideOutputLateData("late")
        .aggregate(sw.agg.sum("amount"))
    )


def _run(spark, tmp_path: Path, outputs: dict, batches: list, start: int) -> None:
    source = tmp_path / "source"
    writeBatches(source, batches, start=start)
    sdf = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
    query = _pipeline(sdf).writeStream(str(tmp_path / "checkpoint"), outputs)
    try:
        query.processAllAvailable()
    finally:
        query.stop()


def _runWithReplay(spark, tmp_path: Path, outputs: dict, lastWritten) -> int:
    """Three batches, then a crash just after the last batch that wrote a result (its commit
    and later ones removed), then the rest: that batch runs again. Returns its id."""
    _run(spark, tmp_path, outputs, BATCHES[:3], 0)
    replayed = lastWritten()
    commits = tmp_path / "checkpoint" / "commits"
    for p in commits.iterdir():  # the commit and its checksum file, as if never written
        number = p.name.removeprefix(".").removesuffix(".crc")
        if number.isdigit() and int(number) >= replayed:
            p.unlink()
    _run(spark, tmp_path, outputs, BATCHES[3:], 3)
    return replayed


def _windows(rows) -> set:
    return {(r["user"], int(r["window_start"].timestamp() * 1000), r["sum_amount"]) for r in rows}


def test_a_table_output_is_exactly_once_across_a_replayed_batch(spark, tmp_path) -> None:
    table = f"sw_results_{uuid.uuid4().hex[:8]}"
    late = f"sw_late_{uuid.uuid4().hex[:8]}"
    try:
        outputs = {"main": sw.toTable(table), "late": sw.toTable(late)}
        lastWritten = lambda: max(r[0] for r in spark.table(table).select("batch_id").collect())  # noqa: E731
        _runWithReplay(spark, tmp_path, outputs, lastWritten)
        spark.catalog.refreshTable(table)  # this session listed the table's files before
        rows = spark.table(table).collect()
        assert len(rows) == len(EXPECTED) and _windows(rows) == EXPECTED
        assert {(r["user"], r["amount"]) for r in spark.table(late).collect()} == LATE
        assert "batch_id" in spark.table(table).columns
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")
        spark.sql(f"DROP TABLE IF EXISTS {late}")


def test_a_function_output_sees_every_batch_and_the_replay_again(spark, tmp_path) -> None:
    written: dict[int, list] = {}
    calls: list[int] = []

    def keep(df, batchId: int) -> None:  # idempotent: a batch id replaces what it wrote
        calls.append(batchId)
        written[batchId] = df.collect()

    outputs = {"main": keep, "late": str(tmp_path / "late")}
    replayed = _runWithReplay(spark, tmp_path, outputs, lambda: max(written))
    rows = [r for batch in written.values() for r in batch]
    assert len(rows) == len(EXPECTED) and _windows(rows) == EXPECTED
    assert calls.count(replayed) == 2, calls  # the replay called it again, with the same id
    late = spark.read.parquet(str(tmp_path / "late")).collect()
    assert {(r["user"], r["amount"]) for r in late} == LATE


def test_bad_outputs_are_refused_before_the_query_starts(spark, tmp_path) -> None:
    sdf = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    pipeline = _pipeline(sdf)
    with pytest.raises(TypeError, match=r"outputs\['main'\] must be a directory path, "):
        pipeline.writeStream(str(tmp_path / "c"), {"main": 42})
    with pytest.raises(TypeError, match=r"toTable\(name\): name must be a table name"):
        sw.toTable("")
    clash = (
        sw.stream(
            sdf.withColumnRenamed("amount", "batch_id"),
            "ts",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0),
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .sideOutputLateData("late")
    )
    with pytest.raises(ValueError, match=r"outputs\['late'\]: toTable\('t'\) adds a 'batch_id'"):
        clash.aggregate(sw.agg.count()).writeStream(str(tmp_path / "c"), {"late": sw.toTable("t")})
