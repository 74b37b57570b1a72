"""How many key groups a streaming query has: chosen when its checkpoint is new (the session's
``spark.sparkwin.keyGroups``, else a default from ``spark.sql.shuffle.partitions``), kept in
the checkpoint so a restart never changes it, and 128 for checkpoints from before it was kept.
Each test runs real queries on the shared session, with conftest's explicit setting unset.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from sparkstreams import writeBatches
from test_spark_streaming import SCHEMA, SCRIPT, tumbling

import sparkwin as sw
from sparkwin.errors import PlanError

KEPT = "kept in the checkpoint (sparkwin/keyGroups)"


@pytest.fixture
def session(spark: SparkSession) -> Iterator[SparkSession]:
    """The shared session without an explicit key-group count, restored afterwards."""
    spark.conf.unset("spark.sparkwin.keyGroups")
    try:
        yield spark
    finally:
        spark.conf.set("spark.sparkwin.keyGroups", "2")
        spark.conf.set("spark.sql.shuffle.partitions", "2")


class _Query:
    """The tumbling pipeline over a directory of batch files, with its checkpoint."""

    def __init__(self, spark: SparkSession, root: Path) -> None:
        self.spark, self.source, self.checkpoint = spark, root / "source", root / "checkpoint"
        self.main = root / "main"

    def pipeline(self) -> sw.Pipeline:
        reader = self.spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1)
        return tumbling(reader.json(str(self.source)))

    def run(self, batches: list, start: int = 0) -> int:
        """Runs ``batches`` to the end; the number of window results they emitted."""
        writeBatches(self.source, batches, start)
        q = self.pipeline().writeStream(str(self.checkpoint), {"main": str(self.main)})
        try:
            q.processAllAvailable()
        finally:
            q.stop()
        if not any(self.main.glob("batch_id=*")):
            return 0
        return self.spark.read.parquet(str(self.main)).where(f"batch_id >= {start}").count()

    def kept(self) -> str:
        return (self.checkpoint / "sparkwin" / "keyGroups").read_text()


def test_a_restart_with_other_shuffle_partitions_keeps_the_chosen_count(
    session: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    query = _Query(session, tmp_path)
    session.conf.set("spark.sql.shuffle.partitions", "3")
    query.run(SCRIPT[:1])
    assert query.kept() == "keyGroups=129\n"  # the smallest multiple of 3 from 128
    session.conf.set("spark.sql.shuffle.partitions", "5")  # a new checkpoint would get 130
    pipeline = query.pipeline()
    assert pipeline.describe()["keyGroups"] == {
        "count": 130,
        "origin": "default for spark.sql.shuffle.partitions=5",
    }
    assert pipeline.describe(checkpointLocation=str(query.checkpoint))["keyGroups"] == {
        "count": 129,
        "origin": KEPT,
    }
    pipeline.explain(checkpointLocation=str(query.checkpoint))
    assert f"  key groups: 129 ({KEPT})" in capsys.readouterr().out
    # Every group with state wakes: under another count its record would stop the query.
    assert query.run(SCRIPT[5:], start=1) > 0
    assert query.kept() == "keyGroups=129\n"


def test_an_explicit_count_against_the_kept_one_is_refused_before_the_query_starts(
    session: SparkSession, tmp_path: Path
) -> None:
    query = _Query(session, tmp_path)
    query.run(SCRIPT[:1])
    assert query.kept() == "keyGroups=128\n"
    planned = sorted(p.name for p in (query.checkpoint / "offsets").iterdir())
    session.conf.set("spark.sparkwin.keyGroups", "64")
    with pytest.raises(PlanError, match=r"keeps 128 key groups .*keyGroups is 64: unset"):
        query.run(SCRIPT[1:2], start=1)
    assert sorted(p.name for p in (query.checkpoint / "offsets").iterdir()) == planned
    session.conf.set("spark.sparkwin.keyGroups", "128")  # the kept number itself is welcome
    assert query.pipeline().describe(checkpointLocation=str(query.checkpoint))["keyGroups"] == {
        "count": 128,
        "origin": KEPT,
    }


def test_toDF_keeps_the_count_in_the_checkpoint_it_is_given(
    session: SparkSession, tmp_path: Path
) -> None:
    query = _Query(session, tmp_path)
    query.source.mkdir()
    session.conf.set("spark.sql.shuffle.partitions", "200")
    query.pipeline().toDF(checkpointLocation=str(query.checkpoint))
    assert query.kept() == "keyGroups=200\n"
    with pytest.raises(TypeError, match="checkpointLocation must be a non-empty path string"):
        query.pipeline().toDF(checkpointLocation="")


def test_a_checkpoint_from_before_the_count_was_kept_resumes_with_128_groups(
    session: SparkSession, tmp_path: Path
) -> None:
    query = _Query(session, tmp_path)
    query.run(SCRIPT[:1])
    shutil.rmtree(query.checkpoint / "sparkwin")  # as every checkpoint before this change
    session.conf.set("spark.sql.shuffle.partitions", "200")  # a new checkpoint would get 200
    described = query.pipeline().describe(checkpointLocation=str(query.checkpoint))
    assert described["keyGroups"]["count"] == 128
    assert query.run(SCRIPT[5:], start=1) > 0
    # Its count is not kept (sparkwin cannot know it without reading state); the manifest of
    # this release's start is.
    assert not (query.checkpoint / "sparkwin" / "keyGroups").exists()
    assert (query.checkpoint / "sparkwin" / "manifest.json").exists()
