"""writeStream's outputs: catalog tables (``sw.toTable``), Delta tables (``sw.toDelta``) and the
user's own functions, each exactly once across a restart that replays a batch. Spark replays a
batch whose commit is missing: the query wrote its outputs, then died before committing;
removing the last ``commits/<n>`` file of the checkpoint is that crash. (Directories:
test_spark_streaming.py.)

Delta runs where the Spark line has a Delta release (bin/matrix's older lines, whose shared
session has Delta); on the others the test is that Delta outputs are refused, naming the lines.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from sparkstreams import writeBatches

import sparkwin as sw
from sparkwin._spark import delta as _delta
from sparkwin._support import lineFor
from sparkwin.errors import UnsupportedSparkError

SCHEMA = "user string, amount long, ts long"
# Watermark (bound 0) after each batch: 4999, 14999, 24999, 99999.
BATCHES = [
    [{"user": "a", "amount": 1, "ts": 1_000}, {"user": "b", "amount": 2, "ts": 5_000}],
    [
        {"user": "a", "amount": 3, "ts": 12_000},
        {"user": "a", "amount": 4, "ts": 15_000},
        {"user": "c", "amount": 9, "ts": None},  # no timestamp: to errors
    ],
    [{"user": "b", "amount": 5, "ts": 25_000}, {"user": "a", "amount": 6, "ts": 2_000}],
    [{"user": "z", "amount": 0, "ts": 100_000}],
]
# Windows of 10 s closed by the last watermark; a@2000 arrives after [0, 10000) fired: late.
EXPECTED = {("a", 0, 1), ("b", 0, 2), ("a", 10_000, 7), ("b", 20_000, 5)}
LATE = {("a", 6)}
ERRORS = {("c", 9)}


@pytest.fixture
def database(spark, tmp_path: Path):
    """A database of its own whose tables live under tmp_path, dropped with them afterwards."""
    name = f"sw_outputs_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE DATABASE {name} LOCATION '{tmp_path / 'warehouse'}'")
    yield name
    spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")


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
    query = _pipeline(sdf).writeStream(str(tmp_path / "checkpoint"), outputs=outputs)
    try:
        query.processAllAvailable()
    finally:
        query.stop()


def _runWithReplay(spark, tmp_path: Path, outputs: dict, lastWritten) -> int:
    """Three batches and a stop; then the crash: the last batch wrote its result but its commit
    is lost; then a restart with the rest, which runs that batch again. Returns its id."""
    _run(spark, tmp_path, outputs, BATCHES[:3], 0)
    commits = tmp_path / "checkpoint" / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    assert lastWritten() == last, "the batch to replay must be one that wrote rows"
    (commits / str(last)).unlink()
    (commits / f".{last}.crc").unlink(missing_ok=True)
    _run(spark, tmp_path, outputs, BATCHES[3:], 3)
    return last


def _windows(rows) -> set:
    return {(r["user"], int(r["window_start"].timestamp() * 1000), r["sum_amount"]) for r in rows}


def _table(spark, name: str) -> list:
    spark.catalog.refreshTable(name)  # this session listed the table's files before
    return spark.table(name).collect()


@pytest.mark.compat
def test_table_outputs_are_exactly_once_across_a_replayed_batch(
    spark, session, tmp_path, database
) -> None:
    main, late, errors = (f"{database}.{t}" for t in ("results", "late", "errors"))
    outputs = {"main": sw.toTable(main), "late": sw.toTable(late), "errors": sw.toTable(errors)}
    lastWritten = lambda: max(r["batch_id"] for r in _table(spark, main))  # noqa: E731
    replayed = _runWithReplay(session, tmp_path, outputs, lastWritten)
    rows = _table(spark, main)
    assert len(rows) == len(EXPECTED) and _windows(rows) == EXPECTED
    assert replayed in {r["batch_id"] for r in rows}
    assert {(r["user"], r["amount"]) for r in _table(spark, late)} == LATE
    assert {(r["user"], r["amount"]) for r in _table(spark, errors)} == ERRORS
    partitions = {c.name for c in spark.catalog.listColumns(main) if c.isPartition}
    assert partitions == {"batch_id"}


@pytest.mark.compat
def test_function_outputs_see_every_batch_and_the_replayed_one_again(
    spark, tmp_path, database
) -> None:
    written: dict[int, list] = {}
    calls: list[int] = []
    overwriteModes: set[str] = set()

    def keep(df, batchId: int) -> None:  # idempotent: a batch id replaces what it wrote
        calls.append(batchId)
        written[batchId] = df.collect()
        # A table output in the same query (late, written in an earlier batch) changed no
        # setting of the session this code writes with.
        overwriteModes.add(df.sparkSession.conf.get("spark.sql.sources.partitionOverwriteMode"))

    late = f"{database}.late"
    outputs = {"main": keep, "late": sw.toTable(late)}
    replayed = _runWithReplay(spark, tmp_path, outputs, lambda: max(written))
    rows = [r for batch in written.values() for r in batch]
    assert len(rows) == len(EXPECTED) and _windows(rows) == EXPECTED
    assert calls.count(replayed) == 2, calls  # the replay called it again, with the same id
    assert {(r["user"], r["amount"]) for r in _table(spark, late)} == LATE
    assert overwriteModes == {"STATIC"}


def test_a_table_is_created_when_the_query_starts(spark, tmp_path, database) -> None:
    (tmp_path / "source").mkdir()
    sdf = spark.readStream.schema(SCHEMA).json(str(tmp_path / "source"))
    table = f"{database}.results"
    query = _pipeline(sdf).writeStream(str(tmp_path / "c"), {"main": sw.toTable(table)})
    query.processAllAvailable()
    query.stop()
    assert spark.table(table).count() == 0
    assert spark.table(table).columns == [*_pipeline(sdf).schemas()["main"].names, "batch_id"]
    # The next start takes the table it made (a restart), and `paths=`, the old name, still works.
    query = _pipeline(sdf).writeStream(str(tmp_path / "c"), paths={"main": sw.toTable(table)})
    query.processAllAvailable()
    query.stop()


def test_bad_outputs_are_refused_before_the_query_starts(spark, tmp_path, database) -> None:
    sdf = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    pipeline = _pipeline(sdf)
    start = lambda outputs: pipeline.writeStream(str(tmp_path / "c"), outputs)  # noqa: E731
    with pytest.raises(TypeError, match=r"outputs\['main'\] must be a directory path, "):
        start({"main": 42})
    with pytest.raises(TypeError, match=r"outputs\['late'\]: a function output is called as "):
        start({"late": lambda df: None})
    with pytest.raises(ValueError, match=r"outputs has unknown outputs \['lat'\]"):
        start({"lat": "/tmp/x"})
    with pytest.raises(ValueError, match="give exactly one of outputs"):
        pipeline.writeStream(str(tmp_path / "c"), {"main": "/a"}, paths={"main": "/b"})
    with pytest.raises(TypeError, match=r"toTable\(name\): name must be a table name"):
        sw.toTable("")
    unpartitioned = f"{database}.plain"
    spark.sql(f"CREATE TABLE {unpartitioned} (user string, amount long, ts long) USING parquet")
    with pytest.raises(ValueError, match=r"the table exists but cannot be written exactly once"):
        start({"late": sw.toTable(unpartitioned)})
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


def _withDelta(spark) -> None:
    if lineFor(spark.version).delta is None:
        pytest.skip(f"Delta has no release for Spark {spark.version}")


def _deltaTransactions(path: Path) -> list[tuple[str, int]]:
    """The (appId, version) of every transaction in a Delta table's log, oldest first."""
    log = sorted((path / "_delta_log").glob("*.json"))
    lines = [json.loads(line) for f in log for line in f.read_text().splitlines()]
    return [(a["txn"]["appId"], a["txn"]["version"]) for a in lines if "txn" in a]


@pytest.mark.compat
def test_delta_outputs_are_exactly_once_across_a_replayed_batch(spark, tmp_path, database) -> None:
    _withDelta(spark)
    main, errors = tmp_path / "delta" / "main", tmp_path / "delta" / "errors"
    late = f"{database}.late"
    outputs = {
        "main": sw.toDelta(str(main)),
        "late": sw.toDelta(table=late),
        "errors": sw.toDelta(str(errors)),
    }
    lastWritten = lambda: _deltaTransactions(main)[-1][1]  # noqa: E731
    replayed = _runWithReplay(spark, tmp_path, outputs, lastWritten)
    rows = spark.read.format("delta").load(str(main)).collect()
    assert len(rows) == len(EXPECTED) and _windows(rows) == EXPECTED
    # The replayed batch's write was skipped: one transaction per batch that had rows.
    versions = [v for _, v in _deltaTransactions(main)]
    assert versions.count(replayed) == 1 and versions == sorted(set(versions)), versions
    assert {(r["user"], r["amount"]) for r in spark.table(late).collect()} == LATE
    assert {
        (r["user"], r["amount"]) for r in spark.read.format("delta").load(str(errors)).collect()
    } == ERRORS
    # The table has the output's own columns, no batch_id.
    schema = _pipeline(spark.createDataFrame([], SCHEMA)).schemas()["main"]
    assert spark.read.format("delta").load(str(main)).schema.names == schema.names


@pytest.mark.compat
def test_a_delta_table_with_other_columns_is_refused_before_the_query_starts(
    spark, tmp_path
) -> None:
    _withDelta(spark)
    other = tmp_path / "other"
    spark.createDataFrame([(1,)], "x int").write.format("delta").save(str(other))
    sdf = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    with pytest.raises(
        ValueError, match=r"outputs\['main'\]: toDelta\(.*\): the Delta table exists"
    ):
        _pipeline(sdf).writeStream(str(tmp_path / "c"), {"main": sw.toDelta(str(other))})
    assert not (tmp_path / "c").exists()  # no query started


@pytest.mark.compat
def test_a_bounded_result_saved_to_delta(spark, tmp_path) -> None:
    _withDelta(spark)
    rows = [r for batch in BATCHES for r in batch if r["ts"] is not None]
    result = _pipeline(spark.createDataFrame(rows, SCHEMA)).toDF()
    target = sw.toDelta(str(tmp_path / "bounded"))
    target.save(result)
    saved = spark.read.format("delta").load(str(tmp_path / "bounded")).collect()
    assert _windows(saved) == _windows(result.collect())
    target.save(result, mode="overwrite")
    assert spark.read.format("delta").load(str(tmp_path / "bounded")).count() == len(saved)


def test_delta_is_refused_where_delta_has_no_release(spark, tmp_path) -> None:
    if lineFor(spark.version).delta is not None:
        pytest.skip(f"Spark {spark.version} has Delta")
    sdf = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    names = r"Delta outputs run on Spark 3\.5, 4\.0, 4\.1, 4\.2"
    with pytest.raises(UnsupportedSparkError, match=r"outputs\['main'\]: toDelta.*" + names):
        _pipeline(sdf).writeStream(str(tmp_path / "c"), {"main": sw.toDelta(str(tmp_path / "d"))})
    with pytest.raises(UnsupportedSparkError, match="the installed PySpark is Spark .*" + names):
        sw.configure(SparkSession.builder, delta=True)


def test_a_delta_jar_for_another_spark_or_none_is_named_with_the_one_that_fits() -> None:
    line = lineFor("4.1.4")
    with pytest.raises(
        UnsupportedSparkError,
        match=r"built for Spark 4\.2.*io\.delta:delta-spark_4\.1_2\.13:4\.4\.0",
    ):
        _delta.checkJar("file:/ivy/jars/io.delta_delta-spark_4.2_2.13-4.4.0.jar", line, "w")
    with pytest.raises(
        UnsupportedSparkError,
        match=r"no Delta Lake jar; start the session with sparkwin\.session\(delta=True\)",
    ):
        _delta.checkJar(None, line, "w")
    _delta.checkJar("file:/ivy/jars/io.delta_delta-spark_4.1_2.13-4.4.0.jar", line, "w")
    _delta.checkJar("file:/jars/delta-spark_2.13-4.4.0.jar", line, "w")  # no line in its name


def test_delta_arguments_are_named() -> None:
    with pytest.raises(TypeError, match="toDelta needs exactly one of path"):
        sw.toDelta()
    with pytest.raises(TypeError, match="toDelta needs exactly one of path"):
        sw.toDelta("/a", table="t")
    with pytest.raises(TypeError, match=r"toDelta\(table\): table must be a non-empty string"):
        sw.toDelta(table=" ")
    a = sw.toDelta("/a").forQuery("/chk", "main")
    assert (
        a == sw.toDelta("/a").forQuery("/chk/", "main") != sw.toDelta("/a").forQuery("/chk", "late")
    )
    assert sw.toDelta("/a", appId="mine").forQuery("/chk", "main").appId == "mine"
