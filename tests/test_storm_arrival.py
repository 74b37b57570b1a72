"""Storm's default mode, without a timestamp field: ``sw.stream(df)`` has no event time and its
Storm windows run in arrival order, counts firing as tuples arrive and durations in processing
time, in the harness, on a bounded DataFrame and on a stream restarted from its checkpoint."""

from __future__ import annotations

import pytest
from sparkstreams import StreamResult, millis, runQuery, runStream, writeBatches

import sparkwin as sw
from sparkwin.testing import WindowHarness

SCHEMA = "user string, id long"


def _counts(df, length: int = 5, slide: int = 2) -> sw.Pipeline:
    return (
        sw.stream(df)
        .keyBy("user")
        .window(sw.StormWindows.of(sw.Count(length), sw.Count(slide)))
        .aggregate(sw.agg.collectList("id"))
    )


def test_count_windows_fire_as_the_tuples_arrive(spark) -> None:
    # Storm's own example: Count(5) sliding by Count(2) over 8 tuples gives 4 windows.
    h = WindowHarness(_counts(spark.createDataFrame([], SCHEMA)))
    fired = []
    for i in range(1, 9):
        h.processElement({"user": "a", "id": i})
        fired.append([r["collect_list_id"] for r in h.extractOutput()])
    assert fired == [[], [[1, 2]], [], [[1, 2, 3, 4]], [], [[2, 3, 4, 5, 6]], [], [[4, 5, 6, 7, 8]]]
    assert h.metrics()["droppedLate"] == 0


def test_duration_windows_fire_on_processing_time(spark) -> None:
    pipeline = (
        sw.stream(spark.createDataFrame([], SCHEMA))
        .windowAll(sw.StormWindows.of(10_000, 5_000))
        .aggregate(sw.agg.collectList("id"))
    )
    assert pipeline.plan["timestamp"] is None and pipeline.plan["watermark"] is None
    h = WindowHarness(pipeline)
    for now, i in ((1_000, 1), (4_000, 2), (7_000, 3)):
        h.setProcessingTime(now)
        h.processElement({"user": "a", "id": i})
    h.setProcessingTime(30_000)
    assert [
        (r["window_start"], r["window_end"], r["collect_list_id"]) for r in h.extractOutput()
    ] == [
        (-5_000, 5_000, [1, 2]),
        (0, 10_000, [1, 2, 3]),
        (5_000, 15_000, [3]),
    ]
    assert h.numStateEntries() == 0


def test_a_stream_without_a_timestamp_takes_only_storm_windows(spark) -> None:
    df = spark.createDataFrame([], SCHEMA)
    with pytest.raises(ValueError, match="timestamp: .* needs an event-time column"):
        sw.stream(df).keyBy("user").window(sw.TumblingEventTimeWindows.of(1_000))
    with pytest.raises(ValueError, match="watermark: a stream without a timestamp"):
        sw.stream(df, watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0))
    with pytest.raises(ValueError, match="a lag is for event time"):
        sw.stream(df).keyBy("user").window(sw.StormWindows.of(sw.Count(2)).withLag(5))
    with pytest.raises(ValueError, match="replay\\(\\) needs event time"):
        _counts(df).replay()
    assert "arrival order" in _counts(df).describe()["operator"]


def test_a_bounded_dataframe_keeps_each_keys_arrival_order(spark) -> None:
    rows = [{"user": "a" if i % 3 else "b", "id": i} for i in range(1, 13)]
    df = spark.createDataFrame(rows, SCHEMA).coalesce(1)
    got = sorted((r["user"], r["collect_list_id"]) for r in _counts(df, 3, 3).toDF().collect())
    a = [i for i in range(1, 13) if i % 3]
    b = [i for i in range(1, 13) if not i % 3]
    assert got == sorted([("a", a[0:3]), ("a", a[3:6]), ("b", b[0:3])])


def test_a_stream_restarted_midway_gives_each_window_once(spark, tmp_path) -> None:
    batches = [[{"user": "a", "id": b * 10 + i} for i in range(3)] for b in range(4)]
    checkpoint = tmp_path / "checkpoint"
    source = tmp_path / "source"

    def run() -> StreamResult:
        sdf = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
        return runQuery(_counts(sdf, 4, 4), checkpoint, lambda q: q.processAllAvailable())

    writeBatches(source, batches[:2])
    first = run()
    writeBatches(source, batches[2:], start=2)
    result = StreamResult.resumed(first, run())
    ids = [i for b in batches for r in b for i in [r["id"]]]
    assert [r["collect_list_id"] for r in result.outputs["main"]] == [ids[0:4], ids[4:8], ids[8:12]]


def test_duration_windows_fire_on_spark_processing_time(spark, tmp_path) -> None:
    # Wall-clock processing time: which tuples share a window depends on when batches run, so
    # check what holds for any timing: windows at multiples of the slide, of the length, each
    # tuple in one window at least, none emitted empty, and the query needs no event time.
    pipeline = lambda df: (  # noqa: E731
        sw.stream(df)
        .keyBy("user")
        .window(sw.StormWindows.of(2_000, 1_000))
        .aggregate(sw.agg.collectList("id"), sw.agg.count())
    )
    batches = [[{"user": "a", "id": b * 10 + i} for i in range(2)] for b in range(3)]
    result = runStream(
        spark,
        tmp_path,
        SCHEMA,
        pipeline,
        batches,
        trigger={"processingTime": "500 milliseconds"},
        linger=3.0,
    )
    rows = result.outputs["main"]
    assert rows and all(r["count"] > 0 for r in rows)
    for r in rows:
        end = millis(r["window_end"])
        assert end % 1_000 == 0 and end - millis(r["window_start"]) == 2_000
    seen = {i for r in rows for i in r["collect_list_id"]}
    assert seen == {r["id"] for b in batches for r in b}
