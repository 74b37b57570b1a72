"""Spark's real-time mode (``trigger={"realTime": "5 minutes"}``): what it can run, checked
before a query starts, and the one query that writes every output row by row.

A real-time batch runs every source partition and every shuffle partition as a task at once
and hands rows over as they arrive; its sinks are Kafka and ``foreach`` (no micro-batches, so
no directories, tables or ``foreachBatch`` functions). How sparkwin moves time inside such a
batch is the JVM's (``TimePolicy``; docs/DESIGN.md, "Real-time mode").
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F  # noqa: N812
from pyspark.sql.streaming import StreamingQuery

from sparkwin import _transport as transport
from sparkwin._plan.contract import ERROR_COLUMN, ERRORS_TAG, KIND, LATE, RESULT, kindOf
from sparkwin._support import requireFeature
from sparkwin.outputs import (
    DeltaOutput,
    FunctionOutput,
    KafkaOutput,
    Output,
    PathOutput,
    RowOutput,
    TableOutput,
)

__all__ = ["REAL_TIME", "isRealTime", "refuse", "requireRealTime", "start"]

REAL_TIME = "realTime"


def isRealTime(trigger: Mapping[str, Any] | None) -> bool:
    """Whether a ``writeStream`` trigger asks for real-time mode."""
    return trigger is not None and REAL_TIME in trigger


def requireRealTime(spark: Any, what: str) -> None:
    """Refuses real-time mode where it cannot run: Spark Connect, or a Spark line that does not
    run a stateful operator in it (the support table's ``realTime``)."""
    transport.of(spark).requireClassic(
        what,
        "real-time mode's query is built by the classic (Py4J) runtime",
        "Run it from a classic SparkSession (sparkwin.session()).",
    )
    requireFeature(
        spark.version,
        "realTime",
        what,
        "run the query in micro-batch mode (trigger={'processingTime': ...}), or use "
        "PySpark 4.3 or newer",
    )


# How PlanRules names each kind of output (plan/RealTimeQuery.scala).
_KINDS: tuple[tuple[type[Output] | tuple[type[Output], ...], str], ...] = (
    (KafkaOutput, "kafka"),
    (RowOutput, "row"),
    (PathOutput, "directory"),
    ((TableOutput, DeltaOutput), "table"),
    (FunctionOutput, "function"),
)


def refuse(
    df: DataFrame,
    planJson: str,
    targets: Mapping[str, Output],
    foreachOutput: Any,
    trigger: Mapping[str, Any],
) -> type[Output]:
    """Asks ``PlanRules`` whether real-time mode can run this query (the plan, its trigger, its
    outputs, the task slots it needs), raising its refusal as a ``PlanError``; else the kind of
    output every target shares (KafkaOutput or RowOutput)."""
    spark = df.sparkSession
    interval = trigger[REAL_TIME]
    outputs = []
    for tag, out in targets.items():
        kind = next((k for cls, k in _KINDS if isinstance(out, cls)), "other")
        outputs.append({"tag": tag, "kind": kind, "written": getattr(out, "path", repr(out))})
    sinks = {
        (o.bootstrapServers, o.options) for o in targets.values() if isinstance(o, KafkaOutput)
    }
    facts: dict[str, Any] = {
        "interval": interval if isinstance(interval, str) else None,
        "intervalGiven": repr(interval),
        "foreachOutput": foreachOutput is not None,
        "outputs": outputs,
        "kafkaSinks": len(sinks),
        "shufflePartitions": int(spark.conf.get("spark.sql.shuffle.partitions", "200") or "200"),
    }
    if foreachOutput is None and outputs and all(o["kind"] in ("kafka", "row") for o in outputs):
        sources = _sourcePartitions(spark, df)  # asks the brokers: only for a query that may run
        if sources is not None:
            facts["sources"] = {"count": sources[0], "described": sources[1]}
        slots = _taskSlots(spark)
        if slots is not None:
            facts["taskSlots"] = slots
    transport.of(spark).refuseRealTime(planJson, df.isStreaming, json.dumps(facts))
    return type(next(iter(targets.values())))


def _taskSlots(spark: SparkSession) -> int | None:
    """How many tasks the cluster runs at once now (Spark's own count), else its parallelism."""
    sc = spark.sparkContext
    try:
        jsc = sc._jsc.sc()  # type: ignore[union-attr]
        profile = jsc.resourceProfileManager().defaultResourceProfile()
        return int(jsc.maxNumConcurrentTasks(profile))
    except Exception:  # noqa: BLE001 - a Spark without the internal call: estimate instead
        return int(sc.defaultParallelism)


def _sourcePartitions(spark: SparkSession, df: DataFrame) -> tuple[int, str] | None:
    """The number of partitions the query's Kafka sources read, and what they are in words; None
    when they cannot be counted (Spark then checks what it can when the query starts)."""
    sources = transport.of(spark).streamingSources(df)
    total, words = 0, []
    for options in sources:
        if options.get("format") != "kafka":
            return None
        counted = _kafkaPartitions(spark, options)
        if counted is None:
            return None
        minimum = int(options.get("minpartitions", "0") or "0")
        n = max(counted, minimum)
        total += n
        words.append(f"{n} Kafka partitions")
    return (total, " + ".join(words)) if words else None


def _kafkaPartitions(spark: SparkSession, options: dict[str, str]) -> int | None:
    """Partitions of the topics a Kafka source reads, asked of its brokers with the Admin
    client in Spark's JVM (the connector brings it)."""
    assign = options.get("assign")
    if assign:
        return sum(len(parts) for parts in json.loads(assign).values())
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    props = jvm.java.util.Properties()
    for k, v in options.items():
        if k.startswith("kafka."):
            props.setProperty(k[len("kafka.") :], v)
    props.setProperty("client.id", f"sparkwin-realtime-check-{os.getpid()}")
    try:
        admin = jvm.org.apache.kafka.clients.admin.AdminClient.create(props)
    except Exception:  # noqa: BLE001 - no Kafka client on this JVM: nothing to count with
        return None
    try:
        seconds = jvm.java.util.concurrent.TimeUnit.SECONDS
        if options.get("subscribe"):
            topics = [t.strip() for t in options["subscribe"].split(",") if t.strip()]
        elif options.get("subscribepattern"):
            pattern = re.compile(options["subscribepattern"])
            names = admin.listTopics().names().get(30, seconds)
            topics = [t for t in names if pattern.fullmatch(t)]
        else:
            return None
        found = admin.describeTopics(topics).allTopicNames().get(30, seconds)
        return sum(found.get(t).partitions().size() for t in topics)
    except Exception:  # noqa: BLE001 - brokers unreachable: Spark reports that itself
        return None
    finally:
        admin.close()


def start(
    unioned: DataFrame,
    *,
    targets: Mapping[str, Output],
    kind: type[Output],
    checkpointLocation: str,
    trigger: Mapping[str, Any],
    queryName: str | None,
    observe: Callable[[DataFrame], DataFrame],
) -> StreamingQuery:
    """One real-time query over the union of every output: a Kafka sink whose rows carry their
    output's topic, or one ``foreach`` that hands each row to its output's function."""
    rows = observe(unioned)
    kinds = {tag: kindOf(tag) for tag in targets}
    rows = rows.where(F.col(KIND).isin(list(kinds.values())))
    if kind is KafkaOutput:
        kafka = {tag: out for tag, out in targets.items() if isinstance(out, KafkaOutput)}
        first = next(iter(kafka.values()))
        records = _kafkaRecords(rows, kafka)
        writer = records.writeStream.format("kafka").options(**first.sinkOptions())
    else:
        functions = {
            kinds[tag]: out.fn for tag, out in targets.items() if isinstance(out, RowOutput)
        }
        writer = rows.select(KIND, "result", "input", ERROR_COLUMN).writeStream.foreach(
            _rowDispatcher(functions)
        )
    writer = writer.outputMode("update").option("checkpointLocation", checkpointLocation)
    if queryName:
        writer = writer.queryName(queryName)
    # PySpark's stubs do not list realTime among trigger's overloads yet.
    return writer.trigger(realTime=trigger[REAL_TIME]).start()  # type: ignore[call-overload]


def _kafkaRecords(rows: DataFrame, kafka: Mapping[str, KafkaOutput]) -> DataFrame:
    """Each union row as the Kafka record of its output: topic, key and value (JSON)."""

    def columnsOf(tag: str) -> list[Column]:
        if tag == "main":
            return [F.col("result").getField(f.name).alias(f.name) for f in _fields(rows, "result")]
        inputs = [F.col("input").getField(f.name).alias(f.name) for f in _fields(rows, "input")]
        return [*inputs, F.col(ERROR_COLUMN)] if tag == ERRORS_TAG else inputs

    topic: Column | None = None
    key: Column | None = None
    value: Column | None = None
    for tag, out in kafka.items():
        columns = columnsOf(tag)
        struct = "result" if tag == "main" else "input"
        k = (
            F.to_json(F.struct(*[F.col(struct).getField(c).alias(c) for c in out.key]))
            if out.key
            else F.lit(None).cast("string")
        )
        v = F.to_json(F.struct(*columns))
        match = F.col(KIND) == kindOf(tag)
        topic = F.when(match, F.lit(out.topic)) if topic is None else topic.when(match, out.topic)
        key = F.when(match, k) if key is None else key.when(match, k)
        value = F.when(match, v) if value is None else value.when(match, v)
    assert topic is not None and key is not None and value is not None
    return rows.select(topic.alias("topic"), key.alias("key"), value.alias("value"))


def _fields(rows: DataFrame, column: str) -> list[Any]:
    return list(rows.schema[column].dataType.fields)  # type: ignore[attr-defined]


def _rowDispatcher(functions: dict[int, Callable[[Row], None]]) -> Callable[[Row], None]:
    """The ``foreach`` function: each union row, as its output's row, to its output's function."""

    def dispatch(row: Row) -> None:
        kind = row[KIND]
        fn = functions.get(kind)
        if fn is None:
            return
        if kind == RESULT:
            fn(row["result"])
        elif kind == LATE:
            fn(row["input"])
        else:
            fn(Row(**row["input"].asDict(), **{ERROR_COLUMN: row[ERROR_COLUMN]}))

    return dispatch
