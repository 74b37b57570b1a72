"""The demo's per-partition part: what it prints is what happened."""

from __future__ import annotations

from sparkwin.demo import laggingPartitions


def test_the_lagging_partition_loses_events_to_spark_and_none_to_sparkwin(spark, tmp_path):
    lag = laggingPartitions(spark, str(tmp_path), batches=4)
    assert lag["lagging"] == 16
    # Spark's watermark follows the three fast partitions: once it moved (it trails by a batch
    # or two), the lagging one's events are behind it.
    assert 0 < lag["nativeDropped"] <= lag["lagging"]
    assert lag["sparkwinLate"] == 0
