"""Where ``Pipeline.writeStream`` writes each output: a directory, a catalog table, a Kafka
topic, or the user's own function (per micro-batch, or per row).

Spark's foreachBatch is at-least-once: a micro-batch that wrote its outputs and then died before
its commit (``<checkpoint>/commits/<n>``) runs again after a restart, with the same id and the
same rows. Each kind of output therefore writes one micro-batch so that writing it twice leaves
what writing it once does: a directory and a table keep each batch apart (``batch_id``) and
replace that batch's rows; a Delta table records each batch's transaction and skips it when it
comes again; a function is called again with the same id and must do the same.

This module only writes DataFrames it is handed; it knows nothing of windows.
"""

from __future__ import annotations

import inspect
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F  # noqa: N812
from pyspark.sql.types import LongType, StructField, StructType

from sparkwin._spark import delta as _delta

__all__ = [
    "BatchFunction",
    "DeltaOutput",
    "KafkaOutput",
    "Output",
    "OutputSpec",
    "RowFunction",
    "RowOutput",
    "forEachRow",
    "toDelta",
    "toKafka",
    "toTable",
]

# A function output: fn(df, batchId), the user's foreachBatch code for one output.
BatchFunction = Callable[[DataFrame, int], None]
# A per-row function output: fn(row), called on the executors for each row of one output.
RowFunction = Callable[[Row], None]

BATCH_COLUMN = "batch_id"


class Output:
    """Where one output of a streaming pipeline goes; see ``toTable`` and ``writeStream``."""

    def prepare(self, spark: SparkSession, schema: StructType, tag: str) -> None:
        """Runs once before the query starts: refuses a target that cannot hold ``schema`` (a
        ValueError naming ``outputs[tag]``) and creates what the first batch needs."""

    def write(self, df: DataFrame, batchId: int) -> None:
        """Writes one micro-batch's rows; a replayed ``batchId`` replaces what it wrote."""
        raise NotImplementedError

    def forQuery(self, checkpointLocation: str, tag: str) -> Output:
        """This output as the query with ``checkpointLocation`` writes it as ``tag``."""
        return self


# What a writeStream outputs entry may be.
OutputSpec = str | Output | BatchFunction


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
    """A catalog table partitioned by ``batch_id``; each micro-batch replaces its own partition.

    Why a partition per batch: a plain table (parquet, ORC in Spark's session catalog) has no
    transactions and no DELETE, so "append, then record the batch id" can fail between the two
    steps and append again on the replay; overwriting one static partition
    (``INSERT OVERWRITE ... PARTITION (batch_id = n)``) is the one write such a table offers that
    gives the same table whether it runs once or twice. It names the partition in the statement,
    so no session setting (``partitionOverwriteMode``) is changed for other writes, and it selects
    the columns by name, so a table whose columns are in another order is still written right.
    The cost is a partition per micro-batch that has rows: compact old partitions, or use a
    longer trigger, on long-running queries.
    """

    name: str
    format: str = "parquet"

    def prepare(self, spark: SparkSession, schema: StructType, tag: str) -> None:
        where = f"outputs[{tag!r}]: toTable({self.name!r})"
        if BATCH_COLUMN in schema.fieldNames():
            raise ValueError(
                f"{where} adds a {BATCH_COLUMN!r} column, and the output already has one; "
                "rename it before the pipeline, or write this output with a function"
            )
        if not spark.catalog.tableExists(self.name):
            empty = spark.createDataFrame([], _withBatchColumn(schema))
            empty.write.format(self.format).partitionBy(BATCH_COLUMN).saveAsTable(self.name)
            return
        columns = {c.name: c.isPartition for c in spark.catalog.listColumns(self.name)}
        data = {c for c, isPartition in columns.items() if not isPartition}
        if columns.get(BATCH_COLUMN) is not True or data != set(schema.fieldNames()):
            raise ValueError(
                f"{where}: the table exists but cannot be written exactly once: it needs "
                f"exactly the output's columns and a partition column {BATCH_COLUMN!r} (it has "
                f"{sorted(columns)}, the output has {sorted(schema.fieldNames())}); drop it "
                "(sparkwin then creates it) or write to another table"
            )

    def write(self, df: DataFrame, batchId: int) -> None:
        spark = df.sparkSession
        columns = [c.name for c in spark.catalog.listColumns(self.name) if not c.isPartition]
        view = f"sparkwin_batch_{uuid.uuid4().hex}"
        df.createOrReplaceTempView(view)
        try:
            spark.sql(
                f"INSERT OVERWRITE TABLE {self.name} PARTITION ({BATCH_COLUMN} = {int(batchId)}) "
                f"SELECT {', '.join(_quoted(c) for c in columns)} FROM {view}"
            )
        finally:
            spark.catalog.dropTempView(view)


@dataclass(frozen=True)
class FunctionOutput(Output):
    """The user's ``fn(df, batchId)``. A replayed batch calls it again with the same id: make it
    idempotent (replace what that id wrote), as Spark's own foreachBatch asks."""

    fn: BatchFunction

    def write(self, df: DataFrame, batchId: int) -> None:
        self.fn(df, batchId)


@dataclass(frozen=True)
class DeltaOutput(Output):
    """A Delta table, at a path or in the catalog; each micro-batch is one Delta transaction.

    Exactly once the way Delta documents it for batch writers in a stream: every write carries
    ``txnAppId`` (this output of this query) and ``txnVersion`` (the micro-batch id), and Delta
    skips a write whose version for that app id it has already committed. So a batch Spark
    replays after a crash between the write and the query's commit writes nothing twice, and
    the table keeps the output's own columns (no ``batch_id``). The app id is taken from the
    checkpoint location and the output's tag unless ``appId`` is given: give one if the
    checkpoint may move.
    """

    path: str | None = None
    table: str | None = None
    appId: str | None = None

    def _where(self, tag: str) -> str:
        target = f"{self.path!r}" if self.path is not None else f"table={self.table!r}"
        return f"outputs[{tag!r}]: toDelta({target})"

    def forQuery(self, checkpointLocation: str, tag: str) -> DeltaOutput:
        if self.appId is not None:
            return self
        key = f"sparkwin:{_normalPath(checkpointLocation)}#{tag}"
        return replace(self, appId=str(uuid.uuid5(uuid.NAMESPACE_URL, key)))

    def prepare(self, spark: SparkSession, schema: StructType, tag: str) -> None:
        where = self._where(tag)
        _delta.requireDelta(spark, where, table=self.table is not None)
        existing = self._existingSchema(spark, where)
        if existing is None:  # the output's schema, before the first batch
            self._saveWith(spark.createDataFrame([], schema).write.format("delta").mode("append"))
            return
        if _columns(existing) != _columns(schema):
            raise ValueError(
                f"{where}: the Delta table exists with other columns than the output's "
                f"(it has {existing.simpleString()}, the output has {schema.simpleString()}); "
                "write to another table, or drop it and sparkwin creates it"
            )

    def _saveWith(self, writer: Any) -> None:
        if self.table is not None:
            writer.saveAsTable(self.table)
        else:
            writer.save(self.path)

    def _existingSchema(self, spark: SparkSession, where: str) -> StructType | None:
        if self.table is not None:
            if not spark.catalog.tableExists(self.table):
                return None
            found = spark.table(self.table)
        else:
            try:
                found = spark.read.format("delta").load(self.path)
                found.schema  # noqa: B018 - reading the schema is what fails for no table
            except AnalysisException as exc:
                if _noTableAt(exc):
                    return None
                raise ValueError(
                    f"{where}: cannot read the Delta table at {self.path}: {exc}"
                ) from None
        return found.schema

    def write(self, df: DataFrame, batchId: int) -> None:
        if self.appId is None:
            raise ValueError("a DeltaOutput writes micro-batches only as a query's output")
        writer = (
            df.write.format("delta")
            .mode("append")
            .option("txnAppId", self.appId)
            .option("txnVersion", str(int(batchId)))
        )
        self._saveWith(writer)

    def save(self, df: DataFrame, mode: str = "append") -> None:
        """Writes a bounded result (``pipeline.toDF()``, a side output) to this Delta table,
        with the same checks as a stream's output: Delta on this Spark, the table's columns.

        Example::

            sw.toDelta("/data/sessions").save(pipeline.toDF())
        """
        if df.isStreaming:
            raise ValueError("save() writes a bounded DataFrame; streams use writeStream")
        if mode not in ("append", "overwrite"):
            raise ValueError(f"mode must be 'append' or 'overwrite', got {mode!r}")
        if mode == "append":
            self.prepare(df.sparkSession, df.schema, "save")
        else:
            _delta.requireDelta(df.sparkSession, self._where("save"), self.table is not None)
        self._saveWith(df.write.format("delta").mode(mode))


@dataclass(frozen=True)
class KafkaOutput(Output):
    """A Kafka topic: each row one record, its value the row as JSON and its key the JSON of
    ``key``'s columns (none: no key). The output of ``toKafka``; real-time mode writes it with
    Spark's Kafka sink, micro-batch mode with a batch write per micro-batch.

    Kafka writes are at least once (Spark's Kafka sink is): a micro-batch or real-time batch Spark
    runs again after a failure writes its records again. Consumers that must see each result once
    deduplicate by the key and window (``window_start``, ``pane_index``).
    """

    topic: str
    bootstrapServers: str
    options: tuple[tuple[str, str], ...] = ()
    key: tuple[str, ...] = ()

    def records(self, df: DataFrame, topic: Any = None) -> DataFrame:
        """``df`` as the Kafka sink's rows: ``topic`` (this output's unless given as a Column),
        ``key`` and ``value``."""
        value = F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns]))
        key = (
            F.to_json(F.struct(*[F.col(f"`{c}`") for c in self.key]))
            if self.key
            else F.lit(None).cast("string")
        )
        return df.select(
            (topic if topic is not None else F.lit(self.topic)).alias("topic"),
            key.alias("key"),
            value.alias("value"),
        )

    def sinkOptions(self) -> dict[str, str]:
        """The Kafka sink's options: the servers, then the user's (``kafka.*`` settings)."""
        return {"kafka.bootstrap.servers": self.bootstrapServers, **dict(self.options)}

    def prepare(self, spark: SparkSession, schema: StructType, tag: str) -> None:
        missing = [c for c in self.key if c not in schema.fieldNames()]
        if missing:
            raise ValueError(
                f"outputs[{tag!r}]: toKafka(key=...) names columns {missing} that the output "
                f"does not have; it has {schema.fieldNames()}"
            )

    def write(self, df: DataFrame, batchId: int) -> None:
        self.records(df).write.format("kafka").options(**self.sinkOptions()).save()


@dataclass(frozen=True)
class RowOutput(Output):
    """The user's ``fn(row)``, called for each row of one output on the executors (Spark's
    ``foreach``). The output of ``forEachRow``; the one kind of function real-time mode takes."""

    fn: RowFunction

    def write(self, df: DataFrame, batchId: int) -> None:
        df.foreach(self.fn)


def toKafka(
    topic: str,
    bootstrapServers: str,
    *,
    key: str | list[str] | tuple[str, ...] = (),
    options: dict[str, str] | None = None,
) -> KafkaOutput:
    """An output written to the Kafka ``topic`` at ``bootstrapServers``: one record per row,
    the row as JSON in the value and ``key``'s columns (e.g. the pipeline's key) as JSON in the
    key, so one key's results stay in one partition, in order. ``options`` are the Kafka sink's
    (``{"kafka.acks": "all"}``, security settings). At least once, as Spark's Kafka sink is.
    Works in both modes; with ``trigger={"realTime": ...}`` it is what results go to.

    Example::

        query = pipeline.writeStream("/chk", {"main": sw.toKafka("sessions", "broker:9092",
                                                                  key="user")},
                                     trigger={"realTime": "5 minutes"})
    """
    if not isinstance(topic, str) or not topic.strip():
        raise TypeError(f"toKafka(topic): topic must be a topic name, got {topic!r}")
    if not isinstance(bootstrapServers, str) or not bootstrapServers.strip():
        raise TypeError(
            "toKafka(bootstrapServers): give the brokers as 'host:port[,host:port]', "
            f"got {bootstrapServers!r}"
        )
    keys = (key,) if isinstance(key, str) else tuple(key)
    if not all(isinstance(k, str) and k for k in keys):
        raise TypeError(f"toKafka(key): key must be a column name or a list of them, got {key!r}")
    given = dict(options or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in given.items()):
        raise TypeError("toKafka(options): options must map option names to string values")
    clash = sorted(k for k in given if k.lower() in ("topic", "kafka.bootstrap.servers"))
    if clash:
        raise ValueError(
            f"toKafka(options): {clash} are set by toKafka's topic and bootstrapServers; "
            "leave them out of options"
        )
    return KafkaOutput(topic.strip(), bootstrapServers.strip(), tuple(sorted(given.items())), keys)


def forEachRow(fn: RowFunction) -> RowOutput:
    """An output written by calling ``fn(row)`` for each of its rows, on the executors, as
    Spark's ``foreach`` does: the function output real-time mode takes (a function
    ``fn(df, batchId)`` needs micro-batches). In real-time mode Spark 4.3 hands the rows to Python
    at the batch's end: write to ``toKafka`` where latency matters. A batch Spark runs again after
    a failure calls it again for the same rows: make it idempotent.

    Example::

        query = pipeline.writeStream("/chk", {"main": sw.forEachRow(print)},
                                     trigger={"realTime": "5 minutes"})
    """
    if not callable(fn):
        raise TypeError(f"forEachRow(fn): fn must be callable as fn(row), got {fn!r}")
    return RowOutput(fn)


def toTable(name: str, format: str = "parquet") -> TableOutput:
    """An output written to the catalog table ``name``, exactly once across restarts.

    The table is created when the query starts if it does not exist, with the output's columns
    and a ``batch_id`` partition column; each micro-batch replaces its own partition, so a batch
    Spark replays after a restart replaces what it wrote. An existing table must have the
    output's columns and be partitioned by ``batch_id``. ``format`` is the data source of a
    table sparkwin creates.

    Example::

        query = pipeline.writeStream("/chk", {"main": sw.toTable("analytics.sessions"),
                                              "late": "/data/late"})
        spark.table("analytics.sessions").where("batch_id > 10").show()
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


def toDelta(
    path: str | None = None, *, table: str | None = None, appId: str | None = None
) -> DeltaOutput:
    """An output written to a Delta table, at ``path`` or the catalog table ``table``, exactly
    once across restarts.

    Each micro-batch is appended as one Delta transaction tagged with this output and the batch
    id, which Delta skips when Spark replays the batch after a crash. The table is created when
    the query starts if it does not exist, with the output's columns; an existing one must have
    them. Needs a session with Delta Lake (``sparkwin.session(delta=True)``) on a Spark line
    Delta has a release for (4.0, 4.1, 4.2); elsewhere the query is refused before it starts.
    ``appId`` names the output to Delta (default: from the checkpoint location and the tag).
    ``sw.toDelta(...).save(df)`` writes a bounded result.

    Example::

        spark = sw.session(delta=True)
        query = pipeline.writeStream("/chk", {"main": sw.toDelta("/data/sessions"),
                                              "late": sw.toDelta(table="analytics.late")})
    """
    if (path is None) == (table is None):
        raise TypeError(
            "toDelta needs exactly one of path (toDelta('/data/t')) or table "
            "(toDelta(table='db.t'))"
        )
    for name, value in (("path", path), ("table", table), ("appId", appId)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise TypeError(f"toDelta({name}): {name} must be a non-empty string, got {value!r}")
    return DeltaOutput(path=path, table=table.strip() if table is not None else None, appId=appId)


def outputOf(value: Any, tag: str, format: str, options: dict[str, str]) -> Output:
    """The output a ``writeStream`` outputs entry stands for, or a TypeError naming the tag."""
    if isinstance(value, Output):
        return value
    if isinstance(value, str) and value:
        return PathOutput(value, format, tuple(sorted(options.items())))
    if callable(value):
        try:
            inspect.signature(value).bind(None, 0)
        except TypeError:
            raise TypeError(
                f"outputs[{tag!r}]: a function output is called as fn(df, batchId); "
                f"{getattr(value, '__name__', value)!s} cannot take those two arguments"
            ) from None
        except ValueError:  # no signature to check (some builtins): trust it
            pass
        return FunctionOutput(value)
    raise TypeError(
        f"outputs[{tag!r}] must be a directory path, sw.toTable('db.name'), sw.toDelta(path), "
        "sw.toKafka(topic, servers), sw.forEachRow(fn) or a function "
        f"fn(df, batchId), got {type(value).__name__} {value!r}"
    )


def _withBatchColumn(schema: StructType) -> StructType:
    return StructType([*schema.fields, StructField(BATCH_COLUMN, LongType())])


def _columns(schema: StructType) -> dict[str, str]:
    """Columns by lower-case name (Delta's are case-insensitive) and type, nullability aside."""
    return {f.name.lower(): f.dataType.simpleString() for f in schema.fields}


def _noTableAt(exc: AnalysisException) -> bool:
    # No such path, or a directory without a Delta log (Delta then starts its log there).
    # getCondition is PySpark 4's name of 3.5's getErrorClass.
    condition = getattr(exc, "getCondition", None) or exc.getErrorClass
    return condition() in ("PATH_NOT_FOUND", "DELTA_TABLE_NOT_FOUND")


def _normalPath(location: str) -> str:
    """A checkpoint location as one string for the same place: local paths made absolute."""
    if "://" in location or location.startswith("file:"):
        return location.rstrip("/")
    return os.path.abspath(location)


def _quoted(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"
