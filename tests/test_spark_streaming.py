"""The Spark runtime against the harness: a streaming query over several micro-batches (out of
order, late and very late data) must produce exactly what the harness produces when fed the
same rows and the same watermarks; bounded DataFrames must equal the harness fed everything
then +infinity; a restarted query must equal an uninterrupted one.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pandas as pd
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812
from pyspark.sql.types import NullType, StructType
from sparkstreams import (
    SCHEMA,
    SCRIPT,
    canonical,
    harnessFed,
    onOperator,
    replayInHarness,
    row,
    runStream,
    scripted,
    tumbling,
    writeBatches,
)

import sparkwin as sw
from sparkwin._support import lineFor
from sparkwin.errors import CheckpointError, PlanError
from sparkwin.testing import WindowHarness


def tumblingPreaggregated(df: DataFrame) -> sw.Pipeline:
    # No lateness, no late output, default trigger: Spark pre-aggregates before the shuffle.
    return (
        scripted(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .aggregate(sw.agg.sum("amount"), sw.agg.count(), sw.agg.avg("amount"), sw.agg.max("ts"))
    )


def slidingPreaggregated(df: DataFrame) -> sw.Pipeline:
    return (
        scripted(df)
        .keyBy("user")
        .window(sw.SlidingEventTimeWindows.of(10_000, 4_000))
        .aggregate(sw.agg.sum("amount"), sw.agg.min("ts"))
    )


def sliding(df: DataFrame) -> sw.Pipeline:
    return (
        scripted(df)
        .keyBy("user")
        .window(sw.SlidingEventTimeWindows.of(10_000, 5_000))
        .sideOutputLateData("late")
        .aggregate(sw.agg.sum("amount"), sw.agg.max("ts"))
    )


def sessions(df: DataFrame) -> sw.Pipeline:
    return (
        scripted(df)
        .keyBy("user")
        .window(sw.EventTimeSessionWindows.withGap(5_000))
        .allowedLateness(3_000)
        .sideOutputLateData("late")
        .aggregate(sw.agg.count(), sw.agg.sum("amount"), sw.agg.min("ts"))
    )


def countWindows(df: DataFrame) -> sw.Pipeline:
    return scripted(df).keyBy("user").countWindow(2).aggregate(sw.agg.collectList("amount"))


def continuous(df: DataFrame) -> sw.Pipeline:
    return (
        scripted(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(20_000))
        .trigger(sw.ContinuousEventTimeTrigger.of(4_000))
        .aggregate(sw.agg.sum("amount"))
    )


def beamEarlyLate(df: DataFrame) -> sw.Pipeline:
    trigger = (
        sw.AfterWatermark.pastEndOfWindow()
        .withEarlyFirings(sw.AfterPane.elementCountAtLeast(2))
        .withLateFirings(sw.AfterPane.elementCountAtLeast(1))
    )
    return (
        scripted(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .trigger(trigger)
        .allowedLateness(5_000)
        .accumulationMode("discarding")
        .sideOutputLateData("late")
        .aggregate(sw.agg.collectList("amount"))
    )


def evicting(df: DataFrame) -> sw.Pipeline:
    return (
        scripted(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(20_000))
        .evictor(sw.CountEvictor.of(2))
        .aggregate(sw.agg.collectList("amount"))
    )


def storm(df: DataFrame) -> sw.Pipeline:
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forStormLag(1_000))
        .keyBy("user")
        .window(sw.StormWindows.of(10_000, 5_000).withLag(1_000))
        .sideOutputLateData("late")
        .aggregate(sw.agg.collectList("amount"))
    )


def windowAllPreaggregated(df: DataFrame) -> sw.Pipeline:
    # One stand-in key for the whole stream on Spark; none in the output.
    return (
        scripted(df)
        .windowAll(sw.TumblingEventTimeWindows.of(10_000))
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )


def windowAllLate(df: DataFrame) -> sw.Pipeline:
    return (
        scripted(df)
        .windowAll(sw.SlidingEventTimeWindows.of(10_000, 5_000))
        .allowedLateness(5_000)
        .sideOutputLateData("late")
        .aggregate(sw.agg.max("amount"), sw.agg.count())
    )


PIPELINES = [
    tumbling,
    tumblingPreaggregated,
    sliding,
    slidingPreaggregated,
    sessions,
    countWindows,
    continuous,
    beamEarlyLate,
    evicting,
    storm,
    windowAllPreaggregated,
    windowAllLate,
]


@pytest.mark.parametrize("build", PIPELINES, ids=lambda b: b.__name__)
def test_stream_matches_harness_fed_the_same_watermarks(spark, tmp_path: Path, build) -> None:
    result = runStream(spark, tmp_path, SCHEMA, build, SCRIPT)
    batch = spark.createDataFrame([], SCHEMA)
    expected = replayInHarness(build(batch), result, SCRIPT)
    assert expected["main"], "the script must fire windows"
    for tag, rows in expected.items():
        assert canonical(result.outputs.get(tag, [])) == canonical(rows), tag
    # The null timestamp is never lost: it is the error output, in Spark and in the harness.
    assert [r["amount"] for r in result.outputs["errors"]] == [99]


def test_late_rows_reach_the_side_output_instead_of_being_dropped_by_spark(
    spark, tmp_path: Path
) -> None:
    result = runStream(spark, tmp_path, SCHEMA, tumbling, SCRIPT)
    late = sorted((r["user"], r["ts"]) for r in result.outputs["late"])
    assert late == [("a", 8000), ("b", 11000), ("c", 2000)]
    refired = [
        r
        for r in result.outputs["main"]
        if r["user"] == "a" and r["window_start"] == 0 and r["pane_timing"] == "LATE"
    ]
    assert [(r["sum_amount"], r["count"]) for r in refired] == [(10, 3)]


def test_every_input_row_is_accounted_for(spark, tmp_path: Path) -> None:
    result = runStream(spark, tmp_path, SCHEMA, tumbling, SCRIPT)
    data = [r for batch in SCRIPT for r in batch if r["user"] != "z"]
    lastPane: dict[tuple, int] = {}
    for r in result.outputs["main"]:
        if r["user"] != "z":
            key = (r["user"], r["window_start"])
            lastPane[key] = max(lastPane.get(key, 0), r["count"])
    counted = sum(lastPane.values()) + len(result.outputs["late"]) + len(result.outputs["errors"])
    dropped = sum(p["observedMetrics"]["sparkwin"]["droppedLate"] for p in result.progress)
    assert counted + dropped == len(data)


def test_state_store_holds_no_window_state_after_windows_expire(spark, tmp_path: Path) -> None:
    runStream(spark, tmp_path, SCHEMA, tumbling, SCRIPT)

    def stateOf(variable: str) -> list:
        return (
            spark.read.format("statestore")
            .option("path", str(tmp_path / "checkpoint"))
            .option("stateVarName", variable)
            .load()
            .collect()
        )

    # Only the flush key's window, still open at watermark 97999, keeps state: its engine state
    # and its key group's record (2 key groups, one key with state, a timer at the window's end,
    # one bucket of keys, and that key's wake-up).
    # The state holds bytes: the record (the map's empty key) in sparkwin's layout 1 with keys in
    # buckets (version 1 + 16), and bucket 0 (tag 2, index 0) holding the key, as Spark's
    # UnsafeRow of the key columns, with its engine state (KeyGroupLoop, GroupRecord, KeyBuckets).
    entries = {bytes(r["user_map_key"]["value"]): r for r in stateOf("sparkwin")}
    assert sorted(entries) == [b"", b"\x02\x00\x00\x00\x00"]
    groupEntry, bucketEntry = entries[b""], entries[b"\x02\x00\x00\x00\x00"]
    assert bucketEntry["key"] == groupEntry["key"]
    record = bytes(groupEntry["user_map_value"]["value"])
    version, groups, timer, live, buckets, n = struct.unpack_from(">biqqii", record)
    assert (version, groups, live, timer, buckets, n) == (17, 2, 1, 109999, 1, 1)
    (length,) = struct.unpack_from(">i", record, 29)
    wakeupKey, (at,) = record[33 : 33 + length], struct.unpack_from(">q", record, 33 + length)
    assert (at, len(record)) == (109999, 33 + length + 8)
    bucket = bytes(bucketEntry["user_map_value"]["value"])
    (keyLength,) = struct.unpack_from(">i", bucket, 0)
    key = bucket[4 : 4 + keyLength]
    (stateLength,) = struct.unpack_from(">i", bucket, 4 + keyLength)
    assert unsafeRowString(key) == "z" and key == wakeupKey
    assert len(bucket) == 4 + keyLength + 4 + stateLength > 4 + keyLength + 4


def unsafeRowString(row: bytes) -> str:
    """The one string field of a Spark UnsafeRow: a null bitmap word, then (offset, size)."""
    (word,) = struct.unpack_from("<q", row, 8)
    offset, size = word >> 32, word & 0xFFFFFFFF
    return row[offset : offset + size].decode()


@pytest.mark.compat
def test_a_checkpoint_on_an_operator_this_line_lacks_is_refused_before_it_starts(
    spark, tmp_path: Path
) -> None:
    (tmp_path / "source").mkdir()
    df = spark.readStream.schema(SCHEMA).json(str(tmp_path / "source"))
    checkpoint = tmp_path / "checkpoint"
    if lineFor(spark.version).scala == "2.13":
        # What Spark 3.5's operator leaves, state alone, resumes on it here (test_compat.py).
        (checkpoint / "state" / "0" / "0").mkdir(parents=True)
        runtime = tumbling(df).describe(checkpointLocation=str(checkpoint))["runtime"]
        assert runtime.startswith("streaming: flatMapGroupsWithState over key groups (the ")
        return
    (checkpoint / "state" / "0" / "_stateSchema").mkdir(parents=True)  # Spark 4's
    with pytest.raises(CheckpointError, match=r"holds state of sparkwin's Spark 4.0 or newer"):
        tumbling(df).writeStream(str(checkpoint), {"main": str(tmp_path / "out")})
    assert not (checkpoint / "offsets").exists()  # refused before the query started


def test_key_groups_of_an_old_checkpoint_are_checked_by_its_state(spark, tmp_path: Path) -> None:
    # A checkpoint written before sparkwin kept its count: the groups' records hold it.
    source, paths = tmp_path / "source", {t: str(tmp_path / t) for t in ("main", "late", "errors")}
    checkpoint = tmp_path / "checkpoint"

    def start():
        df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
        return tumbling(df).writeStream(str(checkpoint), paths)

    writeBatches(source, SCRIPT[:3])
    q = start()
    q.processAllAvailable()
    q.stop()
    shutil.rmtree(checkpoint / "sparkwin")  # as before the count was kept
    # More data moves the watermark: every key group with state wakes up and sees the change.
    writeBatches(source, SCRIPT[5:], start=3)
    spark.conf.set("spark.sparkwin.keyGroups", "5")
    try:
        q = start()
        with pytest.raises(Exception, match="written with 2 key groups.*keyGroups to 2"):
            q.processAllAvailable()
        q.stop()
    finally:
        spark.conf.set("spark.sparkwin.keyGroups", "2")


@pytest.mark.parametrize("value", ["0", "many", "40000"])
def test_key_groups_setting_is_checked(spark, tmp_path: Path, value: str) -> None:
    df = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    spark.conf.set("spark.sparkwin.keyGroups", value)
    try:
        with pytest.raises(PlanError, match="spark.sparkwin.keyGroups must be a whole number"):
            tumbling(df).toDF()
    finally:
        spark.conf.set("spark.sparkwin.keyGroups", "2")


def test_many_keys_a_group_index_their_wake_ups_by_time_and_fire_after_a_restart(
    spark, tmp_path: Path
) -> None:
    # 1200 keys in the session's 2 key groups: each group's wake-ups outgrow the record's table
    # (256 keys) and move to pages of an index by time, entries of their own (WakeupIndex).
    source, checkpoint = tmp_path / "source", tmp_path / "checkpoint"
    paths = {t: str(tmp_path / t) for t in ("main", "late", "errors")}
    keys = 1200

    def run() -> None:
        df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
        q = tumbling(df).writeStream(str(checkpoint), paths)
        try:
            q.processAllAvailable()
        finally:
            q.stop()

    # Key i's window is one of [0, 10 s), [10 s, 20 s), [20 s, 30 s): three buckets of wake-ups.
    writeBatches(source, [[row(f"u{i}", i, 1000 + (i % 3) * 10_000) for i in range(keys)]])
    with onOperator(spark, "transformWithState"):  # one value per group keeps its table
        run()
    state = (
        spark.read.format("statestore")
        .option("path", str(checkpoint))
        .option("stateVarName", "sparkwin")
        .load()
        .select(F.col("user_map_key.value").alias("k"), F.col("user_map_value.value").alias("v"))
        .collect()
    )
    records = [bytes(r["v"]) for r in state if len(r["k"]) == 0]
    assert len(records) == 2 and all(r[0] & 0x20 for r in records)  # wake-ups by time
    assert sum(1 for r in state if len(r["k"]) == 14) >= 2 * 3  # pages: a bucket's, a group's
    writeBatches(source, [[row("z", 0, 100_000)]], start=1)  # past every window, after a restart
    run()
    fired = (
        spark.read.parquet(paths["main"])
        .where("user != 'z'")
        .select("user", F.unix_millis("window_start").alias("start"), "sum_amount")
        .collect()
    )
    assert sorted(tuple(r) for r in fired) == sorted(
        (f"u{i}", (i % 3) * 10_000, i) for i in range(keys)
    )


CHANGELOG = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"


@pytest.mark.parametrize(
    "changelog",
    [
        pytest.param(("true", "true"), id="changelog", marks=pytest.mark.compat),
        pytest.param(("false", "true"), id="snapshots-then-changelog"),
    ],
)
def test_restarted_query_equals_an_uninterrupted_run(
    spark, tmp_path: Path, changelog: tuple[str, str]
) -> None:
    # sparkwin.session() turns changelog checkpointing on; a checkpoint from before that (state
    # committed as snapshots) must resume under it with nothing lost or repeated.
    def run(dirs: Path, parts: list[list[list[dict]]], settings: tuple[str, ...]) -> dict:
        source, outputs = dirs / "source", dirs / "out"
        paths = {t: str(outputs / t) for t in ("main", "late", "errors")}
        start, changelogSoFar = 0, False
        for part, setting in zip(parts, settings, strict=True):
            writeBatches(source, part, start=start)
            start += len(part)
            spark.conf.set(CHANGELOG, setting)
            df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
            q = tumbling(df).writeStream(str(dirs / "checkpoint"), paths)
            try:
                q.processAllAvailable()
            finally:
                q.stop()
                spark.conf.set(CHANGELOG, "true")
            # The setting took: state commits wrote changelogs once it was on, not before.
            changelogSoFar = changelogSoFar or setting == "true"
            logs = list((dirs / "checkpoint" / "state").rglob("*.changelog"))
            assert bool(logs) == changelogSoFar, setting
        return {
            t: [r.asDict() for r in spark.read.parquet(p).drop("batch_id").collect()]
            for t, p in paths.items()
        }

    whole = run(tmp_path / "whole", [SCRIPT], changelog[1:])
    restarted = run(tmp_path / "restarted", [SCRIPT[:3], SCRIPT[3:]], changelog)
    assert whole["main"] and whole["late"]
    for tag in whole:
        assert canonical(restarted[tag]) == canonical(whole[tag]), tag


def _combinedAndPlain(spark, workdir: Path, schema: str, build, script) -> tuple:
    """The stream run with map-side combining on, then off: (results, main panes, errors)."""
    combined = runStream(spark, workdir / "on", schema, build, script)
    spark.conf.set("spark.sparkwin.mapSideCombine", "false")
    try:
        plain = runStream(spark, workdir / "off", schema, build, script)
    finally:
        spark.conf.unset("spark.sparkwin.mapSideCombine")
    main, errors = (
        [canonical(r.outputs.get(tag, [])) for r in (combined, plain)] for tag in ("main", "errors")
    )
    return (combined, plain), main, errors


@pytest.mark.parametrize(
    "build", [tumblingPreaggregated, slidingPreaggregated], ids=lambda b: b.__name__
)
def test_map_side_combine_changes_nothing_but_speed(spark, tmp_path: Path, build) -> None:
    (combined, plain), main, errors = _combinedAndPlain(spark, tmp_path, SCHEMA, build, SCRIPT)
    assert main[0] and main[0] == main[1]
    assert errors[0] and errors[0] == errors[1]  # the row without a timestamp, either way
    dropped = [
        sum(p["observedMetrics"]["sparkwin"]["droppedLate"] for p in r.progress)
        for r in (combined, plain)
    ]
    assert dropped[0] == dropped[1] > 0


# One micro-batch where a key's windows turn up newest first, then oldest, then in between: the
# combiner's per-key chain of window sets is kept newest first, so these go to its end and middle.
# With 10 s windows sliding by 4 s, 26000 is in two windows and 25000 in three: same last start,
# different sets.
OUT_OF_ORDER_SCRIPT = [
    [
        row("a", 8, 26000),
        row("a", 2, 5000),
        row("a", 4, 15000),
        row("a", 1, 25000),
        row("a", 16, 6000),
        row("a", 32, 16000),
        row("b", 64, 5000),
        row("a", 128, 7000),
    ],
    [row("z", 0, 100000)],
]


@pytest.mark.parametrize(
    "build", [tumblingPreaggregated, slidingPreaggregated], ids=lambda b: b.__name__
)
def test_map_side_combine_groups_windows_that_arrive_out_of_order(
    spark, tmp_path: Path, build
) -> None:
    (combined, _), main, _ = _combinedAndPlain(spark, tmp_path, SCHEMA, build, OUT_OF_ORDER_SCRIPT)
    assert main[0] and main[0] == main[1]
    sums = sorted(
        (r["user"], r["sum_amount"]) for r in combined.outputs["main"] if r["user"] != "z"
    )
    if build is tumblingPreaggregated:
        assert sums == [("a", 9), ("a", 36), ("a", 146), ("b", 64)]


OLD_TIMES_SCHEMA = "user string, amount long, ts timestamp, note string"


def _t(user: str, amount: int, ts: str | None, note: str = "") -> dict:
    return {"user": user, "amount": amount, "ts": ts, "note": note}


# Timestamp columns: before 1582 (where Spark's calendar rebase moves milliseconds), before and
# after 1900-01-01 (from where the combiner reads milliseconds instead of timestamp objects),
# a row without a timestamp whose unread column must reach the error output intact.
OLD_TIMES = [
    [_t("a", 1, "1500-03-01T00:00:03Z"), _t("a", 2, "1500-03-01T00:00:07Z")],
    [_t("a", 3, "1899-12-31T23:59:52Z"), _t("b", 4, "1899-12-31T23:59:58Z")],
    [
        _t("a", 5, "1900-01-01T00:00:01Z"),
        _t("b", 6, "1900-01-01T00:00:04Z"),
        _t("c", 7, None, "kept"),
    ],
    [_t("a", 8, "2024-05-01T12:00:00Z")],
    [_t("z", 0, "2024-05-02T12:00:00Z")],
]


def timestampSums(df: DataFrame) -> sw.Pipeline:
    return (
        scripted(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )


def test_map_side_combine_reads_timestamps_like_the_operator(spark, tmp_path: Path) -> None:
    (combined, _), main, errors = _combinedAndPlain(
        spark, tmp_path, OLD_TIMES_SCHEMA, timestampSums, OLD_TIMES
    )
    assert main[0] == main[1]
    assert errors[0] == errors[1]
    # Every timed element is in one pane: 1+2 (1500), 3 and 4 (1899), 5 and 6 (1900), 8 (2024).
    assert sum(r["sum_amount"] for r in combined.outputs["main"] if r["user"] != "z") == 29
    assert len([r for r in combined.outputs["main"] if r["user"] == "a"]) == 4
    (error,) = combined.outputs["errors"]
    assert (error["user"], error["amount"], error["note"]) == ("c", 7, "kept")


def test_map_side_combine_setting_is_checked(spark, tmp_path: Path) -> None:
    df = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    spark.conf.set("spark.sparkwin.mapSideCombine", "sometimes")
    try:
        with pytest.raises(PlanError, match="spark.sparkwin.mapSideCombine must be true or false"):
            tumblingPreaggregated(df).toDF()
    finally:
        spark.conf.unset("spark.sparkwin.mapSideCombine")


def test_preaggregated_pipelines_count_their_late_drops(spark, tmp_path: Path) -> None:
    result = runStream(spark, tmp_path, SCHEMA, tumblingPreaggregated, SCRIPT)
    dropped = sum(p["observedMetrics"]["sparkwin"]["droppedLate"] for p in result.progress)
    h = harnessFed(tumblingPreaggregated(spark.createDataFrame([], SCHEMA)), result, SCRIPT)
    # a@3000, a@8000, b@11000 and c@2000 arrive after their windows closed.
    assert dropped == h.numLateRecordsDropped() == 4


def test_write_stream_reports_observed_metrics(spark, tmp_path: Path) -> None:
    result = runStream(spark, tmp_path, SCHEMA, tumbling, SCRIPT)
    totals = {
        k: sum(p["observedMetrics"]["sparkwin"][k] for p in result.progress)
        for k in ("panesFired", "lateSideOutput", "errorRows", "windowsOpened", "windowsCleaned")
    }
    assert totals["panesFired"] == len(result.outputs["main"])
    assert totals["lateSideOutput"] == 3
    assert totals["errorRows"] == 1
    assert totals["windowsOpened"] - totals["windowsCleaned"] == 1  # the flush key's window


@pytest.mark.compat
@pytest.mark.parametrize("build", PIPELINES, ids=lambda b: b.__name__)
def test_bounded_dataframe_equals_the_harness_fed_everything_then_infinity(spark, build) -> None:
    rows = [r for batch in SCRIPT for r in batch]
    df = spark.createDataFrame(rows, SCHEMA)
    pipeline = build(df)
    h = WindowHarness(pipeline)
    h.processElements(sorted((r for r in rows if r["ts"] is not None), key=lambda r: r["ts"]))
    h.processElements([r for r in rows if r["ts"] is None])
    h.endOfInput()
    got = [
        r.asDict(recursive=True)
        for r in pipeline.toDF()
        .select(
            *[
                F.unix_millis(F.col(c)).alias(c)
                if c in ("window_start", "window_end", "window_time")
                else F.col(c)
                for c in pipeline.toDF().columns
            ]
        )
        .collect()
    ]
    assert got and canonical(got) == canonical(h.extractOutput())
    errors = pipeline.getSideOutput("errors").collect()
    assert [(e["amount"], e["error"]) for e in errors] == [(99, "the timestamp is null")]


def _processPipeline(df: DataFrame) -> sw.Pipeline:
    # Defined here, not at module level, so Spark's Python workers get it by value.
    def paneSummary(key, window, pdf: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "user": [key[0]],
                "timing": [window.paneTiming],
                "n": [len(pdf)],
                "total": [int(pdf["amount"].sum())],
            }
        )

    return (
        scripted(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .allowedLateness(5_000)
        .process(paneSummary, "user string, timing string, n long, total long")
    )


@pytest.mark.compat
def test_process_function_on_a_stream_matches_the_harness(spark, tmp_path: Path) -> None:
    result = runStream(spark, tmp_path, SCHEMA, _processPipeline, SCRIPT)
    expected = replayInHarness(_processPipeline(spark.createDataFrame([], SCHEMA)), result, SCRIPT)
    assert expected["main"]
    assert canonical(result.outputs["main"]) == canonical(expected["main"])


@pytest.mark.compat
def test_process_function_on_a_bounded_dataframe(spark) -> None:
    rows = [r for batch in SCRIPT for r in batch if r["ts"] is not None]
    got = _processPipeline(spark.createDataFrame(rows, SCHEMA)).toDF().collect()
    summary = sorted((r["user"], r["timing"], r["n"], r["total"]) for r in got)
    # Bounded input: everything, then +infinity; nothing is late, every window fires on time.
    assert summary == [
        ("a", "ON_TIME", 1, 4),
        ("a", "ON_TIME", 1, 10),
        ("a", "ON_TIME", 4, 19),
        ("b", "ON_TIME", 1, 7),
        ("b", "ON_TIME", 1, 11),
        ("b", "ON_TIME", 2, 7),
        ("c", "ON_TIME", 1, 8),
        ("c", "ON_TIME", 1, 12),
        ("z", "ON_TIME", 1, 0),
    ]


def test_only_a_process_function_union_carries_pane_structs(spark) -> None:
    # Spark plans every nested field of the union's serializer in every micro-batch: where no
    # output reads the pane struct (aggregates, pandas aggregates) its column is null-typed.
    empty = spark.createDataFrame([], SCHEMA)
    assert isinstance(_processPipeline(empty)._union().schema["pane"].dataType, StructType)
    assert isinstance(tumbling(empty)._union().schema["pane"].dataType, NullType)


def test_process_function_over_window_all_gets_no_key(spark, tmp_path: Path) -> None:
    def perWindow(key, window, pdf: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "key": [repr(key)],
                "n": [len(pdf)],
                "total": [int(pdf["amount"].sum())],
            }
        )

    def build(df: DataFrame) -> sw.Pipeline:
        return (
            scripted(df)
            .windowAll(sw.TumblingEventTimeWindows.of(10_000))
            .process(perWindow, "key string, n long, total long")
        )

    rows = [r for batch in SCRIPT for r in batch if r["ts"] is not None]
    bounded = sorted(tuple(r) for r in build(spark.createDataFrame(rows, SCHEMA)).toDF().collect())
    # Everything, then +infinity: each window holds every user's elements.
    assert bounded == [
        ("()", 1, 0),
        ("()", 1, 7),
        ("()", 1, 10),
        ("()", 3, 23),
        ("()", 7, 38),
    ]
    result = runStream(spark, tmp_path, SCHEMA, build, SCRIPT)
    expected = replayInHarness(build(spark.createDataFrame([], SCHEMA)), result, SCRIPT)
    assert expected["main"] and {r["key"] for r in expected["main"]} == {"()"}
    assert canonical(result.outputs["main"]) == canonical(expected["main"])


def test_timestamp_columns_and_java8_time_api(spark) -> None:
    rows = [("a", 1, "1970-01-01 00:00:01"), ("a", 2, "1970-01-01 00:00:09")]
    df = spark.createDataFrame(rows, "user string, amount long, t string").select(
        "user", "amount", F.to_timestamp("t").alias("ts")
    )
    pipeline = (
        sw.stream(df, "ts")
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .aggregate(sw.agg.sum("amount"), sw.agg.max("ts"))
    )
    for java8 in ("false", "true"):
        spark.conf.set("spark.sql.datetime.java8API.enabled", java8)
        try:
            out = (
                pipeline.toDF()
                .select(
                    F.unix_millis("window_start").alias("s"),
                    F.unix_millis("max_ts").alias("m"),
                    "sum_amount",
                )
                .collect()
            )
        finally:
            spark.conf.set("spark.sql.datetime.java8API.enabled", "false")
        assert [tuple(r) for r in out] == [(0, 9000, 3)], java8
