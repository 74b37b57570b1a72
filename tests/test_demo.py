"""The demo's per-partition part: what it prints is what happened."""

from __future__ import annotations

from sparkwin.demo import laggingPartitions


def test_the_lagging_partition_loses_events_to_spark_and_none_to_sparkwin(spark, tmp_path):
    lag = laggingPartitions(spark, str(tmp_path), batches=4)
    assert lag["lagging"] == 16
    # Spark's watermark follows the three fast partitions: after the first batch or two,
    # every event of the lagging one is behind it.
    assert lag["lagging"] // 2 <= lag["nativeDropped"] <= lag["lagging"]
    assert lag["sparkwinLate"] == 0
