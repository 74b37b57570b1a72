"""Where ``Pipeline.writeStream`` writes each output: a directory, a catalog table, or the
user's own function. Each kind writes one micro-batch so that a batch Spark replays after a
restart (it wrote, then failed before its commit) is not written twice.

This module only writes DataFrames it is handed; it knows nothing of windows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame

# A function output: fn(df, batchId), the user's foreachBatch code for one output.
BatchFunction = Callable[[DataFrame, int], None]

BATCH_COLUMN = "batch_id"


class Output:
    """Where one output of a streaming pipeline goes; see ``toTable`` and ``writeStream``."""

    def write(self, df: DataFrame, batchId: int) -> None:
        raise NotImplementedError

    def check(self, columns: list[str], tag: str) -> None:
        """Refuses, before the query starts, an output that cannot hold these columns."""


@dataclass(frozen=True)
class PathOutput(Output):
    """Files under ``path``, one directory per micro-batch (``batch_id=<n>``), overwritten when
    a batch is replayed."""

    path: str
    format: str = "parquet"
    options: tuple[tuple[str, str], ...] = ()

    def write(self, df: DataFrame, batchId: int) -> None:
        (
            df.write.mode("overwrite")
            .format(self.format)
            .options(**dict(self.options))
            .save(f"{self.path.rstrip('/')}/{BATCH_COLUMN}={batchId}")
        )


@dataclass(frozen=True)
class TableOutput(Output):
    """A catalog table partitioned by ``batch_id``: a micro-batch replaces its own partition
    (Spark's dynamic partition overwrite), so a replayed batch replaces what it wrote before."""

    name: str
    format: str = "parquet"

    def check(self, columns: list[str], tag: str) -> None:
        if BATCH_COLUMN in columns:
            raise ValueError(
                f"outputs[{tag!r}]: toTable({self.name!r}) adds a {BATCH_COLUMN!r} column, and "
                f"the output already has one; rename it before the pipeline, or write it with a "
                "function output"
            )

    def write(self, df: DataFrame, batchId: int) -> None:
        from pyspark.sql import functions as F  # noqa: N812

        spark = df.sparkSession
        rows = df.withColumn(BATCH_COLUMN, F.lit(batchId).cast("long"))
        if not spark.catalog.tableExists(self.name):
            rows.write.format(self.format).partitionBy(BATCH_COLUMN).saveAsTable(self.name)
            return
        # Only this batch's partition is replaced; the query's session is its own clone.
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        rows.write.insertInto(self.name, overwrite=True)


@dataclass(frozen=True)
class FunctionOutput(Output):
    """The user's ``fn(df, batchId)``. A replayed batch calls it again with the same id: make it
    idempotent (replace what that id wrote), as Spark's own foreachBatch asks."""

    fn: BatchFunction

    def write(self, df: DataFrame, batchId: int) -> None:
        self.fn(df, batchId)


def toTable(name: str, format: str = "parquet") -> TableOutput:
    """An output written to the catalog table `name` (created if missing, partitioned by
    ``batch_id``), exactly once across restarts.

    Example::

        pipeline.writeStream("/chk", {"main": sw.toTable("analytics.sessions"),
                                      "late": "/data/late"})
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(
            f"toTable(name): name must be a table name such as 'db.sessions', got {name!r}"
        )
    if not isinstance(format, str) or not format:
        raise TypeError(
            f"toTable(format): format must be a data source such as 'parquet', got {format!r}"
        )
    return TableOutput(name.strip(), format)


def outputOf(value: Any, tag: str, format: str, options: dict[str, str]) -> Output:
    """The output a ``writeStream`` outputs entry stands for, or a TypeError naming the tag."""
    if isinstance(value, Output):
        return value
    if isinstance(value, str) and value:
        return PathOutput(value, format, tuple(sorted(options.items())))
    if callable(value):
        return FunctionOutput(value)
    raise TypeError(
        f"outputs[{tag!r}] must be a directory path, sw.toTable('db.name') or a function "
        f"fn(df, batchId), got {type(value).__name__} {value!r}"
    )
