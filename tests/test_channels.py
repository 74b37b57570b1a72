"""Per-channel watermarks on live Spark streams (``sw.stream(df, ts, channel=...)``): a generator
per channel, idleness in micro-batch time and the valve, kept by every key group and in the
checkpoint. Each run is held to the harness fed the same batches by the contract of
docs/DESIGN.md ("Channels on a live stream"), and to what Spark's own windows drop."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F  # noqa: N812
from sparkstreams import canonical, channelHarness, dataRows, runStream, writeBatches

import sparkwin as sw

SCHEMA = "user string, amount long, ts long, part int"
BOUND = 1_000
MIN = 60_000


def _pipeline(
    df, *, late: bool = True, idle: int | None = None, channels: list[int] | None = None
) -> sw.Pipeline:
    strategy = sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND)
    if idle is not None:
        strategy = strategy.withIdleness(idle)
    windowed = (
        sw.stream(df, "ts", channel="part", channels=channels, watermark=strategy)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(MIN))
    )
    if late:
        windowed = windowed.sideOutputLateData("late")
    return windowed.aggregate(sw.agg.sum("amount"), sw.agg.count())


def _lagging(batches: int = 6) -> list[list[dict]]:
    """Partitions 0-2 run at real time; partition 3 replays ten minutes behind (a backfill)."""
    out = []
    for b in range(batches):
        rows = []
        for part in range(4):
            behind = 10 * MIN if part == 3 else 0
            for i in range(3):
                ts = 20 * MIN + b * 30_000 + i * 9_000 - behind
                rows.append(
                    {"user": f"u{(b + i + part) % 3}", "amount": 1 + part, "ts": ts, "part": part}
                )
        out.append(rows)
    return out


def _generated(largest: int) -> int:
    return largest - BOUND - 1


def _compare(pipeline, result, batches, idle=None) -> dict:
    h = channelHarness(pipeline, result, batches, "part", _generated, idle)
    expected = {"main": h.extractOutput(), "errors": h.extractSideOutput("errors")}
    if pipeline.lateOutputTag:
        expected["late"] = h.extractSideOutput("late")
    for tag, rows in expected.items():
        assert canonical(result.outputs.get(tag, [])) == canonical(rows), tag
    return expected


@pytest.mark.compat
@pytest.mark.parametrize("late", [True, False], ids=["element by element", "pre-aggregated"])
def test_a_lagging_channel_keeps_its_events_on_time_as_the_harness_says(spark, tmp_path, late):
    batches = _lagging()
    result = runStream(spark, tmp_path, SCHEMA, lambda df: _pipeline(df, late=late), batches)
    expected = _compare(_pipeline(spark.createDataFrame([], SCHEMA), late=late), result, batches)
    assert expected["main"], "windows closed by the lagging partition's progress must fire"
    assert expected.get("late", []) == []
    metrics = [p["observedMetrics"]["sparkwin"] for p in result.progress if p["numInputRows"]]
    assert all(m["droppedLate"] == 0 for m in metrics)
    # The lagging partition sets the watermark, and every micro-batch says which one it is.
    last = metrics[-1]
    slowest = min(last["channels"], key=lambda c: c["watermark"])
    assert slowest["channel"] == "3" and last["watermark"] == slowest["watermark"]


def test_spark_native_windows_drop_what_sparkwin_keeps(spark, tmp_path):
    """Spark's global watermark follows the fastest partitions: the lagging partition's events
    fall behind it and Spark's own windows drop them; per-channel watermarks keep every one."""
    batches = _lagging()
    source = tmp_path / "native"
    writeBatches(source, batches)
    sdf = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
    native = (
        sdf.withColumn("t", F.timestamp_millis("ts"))
        .withWatermark("t", f"{BOUND + 1} milliseconds")
        .groupBy(F.window("t", "1 minute"), "user")
        .agg(F.count(F.lit(1)).alias("n"))
    )
    q = native.writeStream.outputMode("append").format("memory").queryName("native_lag").start()
    q.processAllAvailable()
    q.stop()
    dropped = sum(
        op["numRowsDroppedByWatermark"] for p in q.recentProgress for op in p["stateOperators"]
    )
    lagging = sum(1 for b in batches for r in b if r["part"] == 3)
    # All but the first batches' (Spark's watermark trails by a batch or two): most of them.
    assert lagging // 2 <= dropped < lagging, (dropped, lagging)
    result = runStream(spark, tmp_path, SCHEMA, lambda df: _pipeline(df, late=True), batches)
    assert result.outputs.get("late", []) == []
    metrics = [p["observedMetrics"]["sparkwin"] for p in result.progress if p["numInputRows"]]
    assert sum(m["droppedLate"] + m["lateSideOutput"] for m in metrics) == 0


@pytest.mark.compat
def test_an_idle_channel_stops_holding_back_and_windows_fire_without_new_data(spark, tmp_path):
    """Partition 2 delivers once, far behind, and goes quiet: after the idle timeout (in
    micro-batch time) it stops holding the others back. Partition 3 delivers once, far ahead,
    and goes quiet too; once the last active partitions are quiet as well, the valve flushes to
    the furthest watermark (Flink's all-idle rule). All of it in micro-batches without data."""
    # Batches with data must come within the idle timeout of each other (a loaded machine's
    # take seconds), or partitions 0-1 would go idle between them too.
    idle = 8_000
    # A first batch on partition 0 alone: a query's first micro-batch takes seconds more than
    # the next ones, and those batches must come within the idle timeout of each other.
    batches = [[{"user": "u", "amount": 1, "ts": 0, "part": 0}]]
    for b in range(4):
        rows = [
            {"user": "u", "amount": 1, "ts": b * 40_000 + i * 1_000, "part": p}
            for p in (0, 1)
            for i in range(2)
        ]
        if b == 0:
            rows.append({"user": "v", "amount": 5, "ts": 500, "part": 2})
            rows.append({"user": "w", "amount": 9, "ts": 200_000, "part": 3})
        batches.append(rows)
    result = runStream(
        spark,
        tmp_path,
        SCHEMA,
        lambda df: _pipeline(df, idle=idle),
        batches,
        trigger={"processingTime": "500 milliseconds"},
        linger=1.5 * idle / 1000,
    )
    expected = _compare(
        _pipeline(spark.createDataFrame([], SCHEMA), idle=idle), result, batches, idle
    )
    fired = {(r["user"], r["window_start"]) for r in expected["main"]}
    # The newest window of partitions 0-1 fired only by the all-idle flush to partition 3's
    # watermark (199 s); partition 3's own window is still ahead of it.
    assert fired == {("v", 0), ("u", 0), ("u", 60_000), ("u", 120_000)}
    metrics = [(dataRows(p), p["observedMetrics"]["sparkwin"]) for p in result.progress]
    assert any(m["panesFired"] for n, m in metrics if not n)
    # Batches in which no key group ran report no channels; the last one that did, all idle.
    last = [m for _, m in metrics if m["channels"] is not None][-1]
    assert all(c["idle"] for c in last["channels"]) and last["watermark"] == 200_000 - BOUND - 1


def test_a_restarted_query_resumes_the_channel_watermarks_where_it_stopped(spark, tmp_path):
    batches = _lagging(8)
    whole = runStream(spark, tmp_path / "whole", SCHEMA, lambda df: _pipeline(df), batches)
    cp = tmp_path / "split" / "checkpoint"
    first = runStream(
        spark, tmp_path / "split", SCHEMA, lambda df: _pipeline(df), batches[:3], checkpoint=cp
    )
    second = runStream(
        spark,
        tmp_path / "split",
        SCHEMA,
        lambda df: _pipeline(df),
        batches[3:],
        checkpoint=cp,
        startFile=3,
    )
    for tag in ("main", "late", "errors"):
        both = first.outputs.get(tag, []) + second.outputs.get(tag, [])
        assert canonical(both) == canonical(whole.outputs.get(tag, [])), tag
    assert whole.outputs["main"]


def _slowFirstRead(batches: int = 5) -> list[list[dict]]:
    """Partitions 0 and 1 run at real time; 2 and 3 replay 12 and 10 minutes behind, but their
    first records are read a batch after 0's and 1's (a slow fetch, a broker failover)."""
    out = []
    for b in range(batches):
        rows = []
        for part, behind in ((0, 0), (1, 0), (2, 12 * MIN), (3, 10 * MIN)):
            if b == 0 and behind:
                continue
            for i in range(3):
                ts = 20 * MIN + b * 30_000 + i * 9_000 - behind
                rows.append({"user": f"u{(b + i) % 2}", "amount": 1, "ts": ts, "part": part})
        out.append(rows)
    return out


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "from first data"])
def test_declared_channels_hold_the_watermark_back_until_their_first_records(
    spark, tmp_path, declared
):
    """Flink's Kafka source knows its partitions before they deliver: with channels= declared,
    partitions 2 and 3 hold the watermark back until their first records, so none is late.
    Counted from their first data, they join behind a watermark the fast partitions moved."""
    batches = _slowFirstRead()
    channels = [0, 1, 2, 3] if declared else None
    result = runStream(
        spark, tmp_path, SCHEMA, lambda df: _pipeline(df, channels=channels), batches
    )
    model = _pipeline(spark.createDataFrame([], SCHEMA), channels=channels)
    expected = _compare(model, result, batches)
    assert expected["main"]
    late = {r["part"] for r in expected["late"]}
    assert late == (set() if declared else {2, 3})
    first = next(p for p in result.progress if p["numInputRows"])["observedMetrics"]["sparkwin"]
    if declared:  # the first batch already lists the silent partitions, holding the valve
        assert [(c["channel"], c["watermark"]) for c in first["channels"]][2:] == [
            ("2", None),
            ("3", None),
        ]
        assert first["watermark"] is None


def test_a_row_without_a_channel_goes_to_the_error_output(spark, tmp_path):
    batches = [
        [
            {"user": "a", "amount": 1, "ts": 5_000, "part": None},
            {"user": "a", "amount": 2, "ts": 6_000, "part": 1},
        ]
    ]
    for late in (True, False):
        result = runStream(
            spark,
            tmp_path / str(late),
            SCHEMA,
            lambda df, late=late: _pipeline(df, late=late),
            batches,
        )
        assert [(r["amount"], r["error"]) for r in result.outputs["errors"]] == [
            (1, "the channel is null")
        ]


def test_bad_channel_arguments_are_named_in_python(spark, tmp_path):
    stream = spark.readStream.schema("ts long, part int, tags map<string,int>, x double").json(
        str(tmp_path)
    )
    strategy = sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
    with pytest.raises(ValueError, match="channel: 'nope' is not a column"):
        sw.stream(stream, "ts", channel="nope", watermark=strategy)
    with pytest.raises(TypeError, match="channel: column 'tags' is map"):
        sw.stream(stream, "ts", channel="tags", watermark=strategy)
    with pytest.raises(TypeError, match="channel: column 'x' is double"):
        sw.stream(stream, "ts", channel="x", watermark=strategy)
    with pytest.raises(ValueError, match="watermark: channel= on a streaming DataFrame"):
        sw.stream(stream, "ts", channel="part")
    with pytest.raises(ValueError, match="channels: declares the values of the channel column"):
        sw.stream(stream, "ts", channels=range(4), watermark=strategy)
    with pytest.raises(TypeError, match="channels must be a list"):
        sw.stream(stream, "ts", channel="part", channels="0123", watermark=strategy)
    with pytest.raises(TypeError, match="channels: '1' is not a int value of column 'part'"):
        sw.stream(stream, "ts", channel="part", channels=[0, "1"], watermark=strategy)
    with pytest.raises(ValueError, match="channels: 2 is declared twice"):
        sw.stream(stream, "ts", channel="part", channels=[1, 2, 2], watermark=strategy)
    with pytest.raises(ValueError, match="channels: give at least one channel"):
        sw.stream(stream, "ts", channel="part", channels=[], watermark=strategy)
    structs = stream.withColumn("tp", F.struct(F.lit("t").alias("topic"), "part"))
    with pytest.raises(TypeError, match="channels: column 'tp' is struct.*F.concat_ws"):
        sw.stream(structs, "ts", channel="tp", channels=[0], watermark=strategy)
    declared = sw.stream(stream, "ts", channel="part", channels=range(3), watermark=strategy)
    assert "channels=['0', '1', '2']" in repr(declared)
    marked = spark.readStream.schema("ts long, part int, m boolean").json(str(tmp_path))
    with pytest.raises(ValueError, match="punctuated watermarks cannot be generated per channel"):
        sw.stream(marked, "ts", channel="part", watermark=sw.WatermarkStrategy.forPunctuated("m"))


@pytest.mark.parametrize(
    "trigger", [None, {"processingTime": "200 milliseconds"}], ids=["default", "interval"]
)
def test_an_idle_query_goes_quiet_once_idleness_has_fired_what_it_holds(spark, tmp_path, trigger):
    """Channels that go idle act as processing time passes, but a query must not run a batch
    per interval for it: sparkwin's clock starts a micro-batch only when a channel's idle
    deadline comes. Partition 2 delivers once, far behind; once it is idle the valve moves and
    once all are, it flushes. After that nothing is due and no batch runs at all, with or
    without an interval trigger (processAllAvailable() returns)."""
    rows = [{"user": "u", "amount": 1, "ts": 10_000 * i, "part": i % 2} for i in range(14)]
    rows.append({"user": "v", "amount": 5, "ts": 0, "part": 2})
    linger = 4.0
    result = runStream(
        spark,
        tmp_path,
        SCHEMA,
        lambda df: _pipeline(df, idle=1_000),
        [rows],
        trigger=trigger,
        linger=linger,
    )
    fired = sorted((r["user"], r["window_start"], r["count"]) for r in result.outputs["main"])
    assert fired == [("u", 0, 6), ("u", MIN, 6), ("v", 0, 1)]
    # One batch reads the data, one more marks the channels idle and fires; then quiet. An
    # interval trigger alone would have run a batch every 200 ms of the lingering seconds.
    assert len(result.progress) == 2, [dataRows(p) for p in result.progress]
    assert dataRows(result.progress[0]) == len(rows) and dataRows(result.progress[1]) == 0
    assert result.progress[-1]["observedMetrics"]["sparkwin"]["panesFired"] == 3
