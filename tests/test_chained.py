"""Chained windows on a stream: a pipeline on a sparkwin result inherits the upstream watermark,
as Flink's downstream operators do, in one query that restarts from its checkpoint."""

from __future__ import annotations

import pytest
from sparkstreams import StreamResult, runQuery, writeBatches

import sparkwin as sw
from sparkwin._support import lineFor
from sparkwin.errors import UnsupportedSparkError

SCHEMA = "user string, amount long, ts long"
MIN = 60_000
BOUND = 1_000


def _first(df) -> sw.Pipeline:
    strategy = sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND)
    return (
        sw.stream(df, "ts", watermark=strategy)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(MIN))
        .aggregate(sw.agg.sum("amount"))
    )


def _chained(df) -> sw.Pipeline:
    # The best user of each minute: an upstream window's result has its largest timestamp as
    # event time (window_time), so it falls in the same minute downstream, as in Flink.
    return (
        sw.stream(_first(df).toDF(), "window_time")
        .windowAll(sw.TumblingEventTimeWindows.of(MIN))
        .aggregate(sw.agg.max("sum_amount"), sw.agg.count())
    )


def _batches() -> list[list[dict]]:
    return [
        [
            {"user": f"u{i % 3}", "amount": b * 10 + i, "ts": b * 30_000 + i * 4_000}
            for i in range(6)
        ]
        for b in range(8)
    ]


def _expected(batches) -> list[tuple[int, int, int]]:
    rows = [r for b in batches for r in b]
    watermark = max(r["ts"] for r in rows) - BOUND - 1
    sums: dict[tuple[int, str], int] = {}
    for r in rows:
        start = r["ts"] // MIN * MIN
        sums[(start, r["user"])] = sums.get((start, r["user"]), 0) + r["amount"]
    out = []
    for start in sorted({s for s, _ in sums}):
        # Fired upstream and downstream in the same micro-batch, once time passed the minute.
        if start + MIN - 1 <= watermark:
            users = [v for (s, _), v in sums.items() if s == start]
            out.append((start, max(users), len(users)))
    return out


@pytest.mark.compat
def test_a_window_of_windows_on_a_stream_restarted_midway(spark, tmp_path) -> None:
    if not lineFor(spark.version).chained:  # Spark 3.5: refused before a query starts
        source = spark.readStream.schema(SCHEMA).json(str(tmp_path))
        with pytest.raises(UnsupportedSparkError, match=r"chained windows\) needs Spark 4\.0"):
            _chained(source).toDF()
        return
    batches = _batches()
    writeBatches(tmp_path / "source", batches[:4])
    checkpoint = tmp_path / "checkpoint"

    def run() -> StreamResult:
        source = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1)
        pipeline = _chained(source.json(str(tmp_path / "source")))
        return runQuery(pipeline, checkpoint, lambda q: q.processAllAvailable())

    first = run()
    writeBatches(tmp_path / "source", batches[4:], start=4)
    result = StreamResult.resumed(first, run())
    got = [(r["window_start"], r["max_sum_amount"], r["count"]) for r in result.outputs["main"]]
    assert sorted(got) == _expected(batches)
    assert len(got) >= 2 and result.outputs.get("errors", []) == []


def test_a_second_watermark_on_a_result_is_refused(spark, tmp_path) -> None:
    results = _first(spark.readStream.schema(SCHEMA).json(str(tmp_path))).toDF()
    with pytest.raises(ValueError, match="inherits the upstream watermark"):
        sw.stream(
            results, "window_time", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
        )
    with pytest.raises(ValueError, match="give channel= to the upstream pipeline"):
        sw.stream(results, "window_time", channel="user")
    # A bound is not the result's event time: the next minute's window would count it.
    for bound in ("window_end", "window_start"):
        with pytest.raises(ValueError, match=r"its event time is 'window_time'"):
            sw.stream(results, bound)
    marked = [f.name for f in results.schema.fields if f.metadata.get("sparkwin.eventTime")]
    assert marked == ["window_time"]
    chained = _chained(spark.readStream.schema(SCHEMA).json(str(tmp_path)))
    assert chained.describe()["watermarks"].startswith("inherited")


@pytest.mark.compat
def test_a_watermark_of_its_own_over_a_result_is_refused_when_built(spark, tmp_path) -> None:
    # With the event-time mark dropped, a strategy of its own passes Python's check; run, its
    # watermark would hold Spark's one (the least) at 0 and no window would fire (Spark 3.5
    # fails the query at its start instead).
    results = _first(spark.readStream.schema(SCHEMA).json(str(tmp_path))).toDF()
    unmarked = results.drop("window_time")
    own = (
        sw.stream(
            unmarked, "window_end", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(0)
        )
        .windowAll(sw.TumblingEventTimeWindows.of(MIN))
        .aggregate(sw.agg.count())
    )
    if lineFor(spark.version).chained:
        with pytest.raises(
            sw.errors.PlanError,
            match=r"has a watermark strategy of its own.*Give sw\.stream\(\) no watermark=",
        ):
            own.toDF()
    else:
        with pytest.raises(UnsupportedSparkError, match=r"chained windows\) needs Spark 4\.0"):
            own.toDF()


def test_a_chain_over_a_flatmapgroupswithstate_pipeline_is_refused_naming_the_fix(
    spark, tmp_path
) -> None:
    # Spark takes no stateful operator after that one; run past its check, this pipeline's input
    # would be dropped as late. An upstream gets it from spark.sparkwin.operator or a checkpoint.
    if not lineFor(spark.version).chained:
        pytest.skip("Spark 3.5 refuses every chain (the test above)")
    source = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    over = "reads the results of a pipeline on flatMapGroupsWithState"
    try:
        spark.conf.set("spark.sparkwin.operator", "flatMapGroupsWithState")
        with pytest.raises(sw.errors.PlanError, match=over + r".*operator is set to flatMapG"):
            _chained(source).toDF()
        spark.conf.set("spark.sparkwin.operator", "transformWithState")
        _chained(source).toDF()  # the fix the message names
    finally:
        spark.conf.unset("spark.sparkwin.operator")
    upstream = _first(source).toDF(checkpointLocation=str(tmp_path / "chk"))
    downstream = tmp_path / "down"
    with pytest.raises(sw.errors.PlanError, match=over + r".*toDF\(\) without checkpointLocation"):
        sw.stream(upstream, "window_time").windowAll(sw.TumblingEventTimeWindows.of(MIN)).aggregate(
            sw.agg.count()
        ).toDF(checkpointLocation=str(downstream))
    assert not downstream.exists()  # refused before its checkpoint keeps anything
    _chained(source).toDF()  # without either: transformWithState upstream, as before
