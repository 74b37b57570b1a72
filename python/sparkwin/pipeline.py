"""`Pipeline`: a validated windowing pipeline, ready to hand to the JVM.

A Pipeline is what the builder (`sparkwin.stream`) ends in: the input DataFrame, the plan
(`docs/plan.md`) as a dict, and for `process()` pipelines the Python window function and its
output schema. It does no validation of its own (the builder did that) and holds no JVM state.
Running it (`toDF`, `getSideOutput`, `writeStream`) hands the plan to the JVM through
`sparkwin._spark.runtime`; this class only forwards and checks arguments. On a bounded input it
keeps one thing: the engine's result, shared by every output (see ``Pipeline.unpersist``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

from sparkwin import explain
from sparkwin._plan.contract import ERRORS_TAG
from sparkwin._spark import realtime as _realtime
from sparkwin._spark import runtime as _runtime
from sparkwin._spark.pane_aggregates import PaneAggregates
from sparkwin.outputs import (
    BatchFunction,
    FunctionOutput,
    KafkaOutput,
    Output,
    OutputSpec,
    PathOutput,
    RowOutput,
    outputOf,
)
from sparkwin.replay import Replay, replay

__all__ = ["Pipeline"]

_TRIGGER_KEYS = ("processingTime", "once", "availableNow", "continuous", _realtime.REAL_TIME)

ProcessFunction = Callable[[Any, Any, Any], Any]


class Pipeline:
    """A windowing pipeline: input DataFrame plus plan (and, for ``process()``, the function
    and its output schema). Made by ``WindowedStream.aggregate`` or ``WindowedStream.process``;
    not meant to be built by hand.

    Attributes:
        df: the input DataFrame.
        plan: the plan of ``docs/plan.md`` as a JSON-ready dict. Treat it as read-only.
        processFunction: the ``fn(key, window, pdf)`` of a ``process()`` pipeline, else None.
        outputSchema: the StructType ``processFunction`` returns, else None.
    """

    def __init__(
        self,
        df: DataFrame,
        plan: dict[str, Any],
        processFunction: ProcessFunction | None = None,
        outputSchema: StructType | None = None,
        description: str | None = None,
        computed: dict[str, Any] | None = None,
        paneAggregates: PaneAggregates | None = None,
    ) -> None:
        self.df = df
        # The hidden input columns Spark computes from the aggregates' Columns (name -> Column),
        # which `df` already has; the harness computes them for each element it is given.
        self.computed: dict[str, Any] = dict(computed or {})
        self.plan = plan
        self.processFunction = processFunction
        self.outputSchema = outputSchema
        # The pandas aggregates (sw.agg.pandas), computed in Python once per fired pane.
        self.paneAggregates = paneAggregates
        self._description = description
        # A bounded input's union of every output, computed once and shared: (plan, union).
        self._shared: tuple[str, DataFrame] | None = None
        self._streaming: bool | None = None  # df.isStreaming, asked once (Connect: a round trip)

    def planJson(self) -> str:
        """The plan as the JSON string the JVM decodes.

        Example::

            pipeline = sparkwin.stream(df, "ts").keyBy("user").window(
                TumblingEventTimeWindows.of(60_000)).aggregate(sw.agg.count())
            print(pipeline.planJson())
        """
        return json.dumps(self.plan)

    def __repr__(self) -> str:
        if self._description is not None:
            return f"Pipeline({self._description})"
        return f"Pipeline({self.planJson()})"

    # -----------------------------------------------------------------------------------------
    # Running

    @property
    def lateOutputTag(self) -> str | None:
        """The late side output's tag, or None when late elements are dropped (and counted)."""
        tag = self.plan.get("lateOutputTag")
        return str(tag) if tag is not None else None

    def sideOutputTags(self) -> list[str]:
        """The side outputs this pipeline has: its late tag (if any) and ``errors``."""
        return [t for t in (self.lateOutputTag, ERRORS_TAG) if t]

    def schemas(self) -> dict[str, StructType]:
        """The output schemas: ``main`` and one per side output.

        Example::

            pipeline.schemas()["main"].simpleString()
        """
        described = _runtime.describe(self.df.sparkSession, self.planJson())
        main = self.outputSchema if self.processFunction is not None else described["result"]
        if self.paneAggregates is not None:
            main = self.paneAggregates.schema(described["result"])
        out = {"main": main, ERRORS_TAG: described["errors"]}
        if self.lateOutputTag is not None:
            out[self.lateOutputTag] = self.df.schema
        return out

    def describe(
        self, realTime: bool = False, checkpointLocation: str | None = None
    ) -> dict[str, Any]:
        """What this pipeline will run: the builder chain, the runtime and its mode (micro-batch,
        or Spark's real-time mode with ``realTime``), where watermarks come from, the engine's
        operator (algorithm, state layout and why), Spark's time mode, a stream's key groups
        (how many and why; with ``checkpointLocation``, what that checkpoint resumes with) and
        every output's schema, as plain values.

        Example::

            pipeline.describe()["operator"]   # 'sliced/keyed (aligned event-time windows, sliced)'
            pipeline.describe(realTime=True)["mode"]   # 'real-time'
            pipeline.describe(checkpointLocation="/chk")["keyGroups"]
            # {'count': 200, 'origin': 'kept in the checkpoint (sparkwin/keyGroups)'}
        """
        _checkLocation(checkpointLocation, optional=True)
        return explain.describe(self, realTime, checkpointLocation)

    def explain(self, realTime: bool = False, checkpointLocation: str | None = None) -> None:
        """Prints ``describe()`` as text, as ``DataFrame.explain()`` prints Spark's plan."""
        print(explain.render(self.describe(realTime, checkpointLocation)))

    def _isStreaming(self) -> bool:
        if self._streaming is None:
            self._streaming = bool(self.df.isStreaming)
        return self._streaming

    def _union(self, realTime: bool = False, checkpointLocation: str | None = None) -> DataFrame:
        if realTime:
            _realtime.requireRealTime(self.df.sparkSession, "real-time mode")
        if self._isStreaming() or realTime:  # PlanRules refuses real time on a bounded input
            unioned = _runtime.union(self.df, self.planJson(), realTime, checkpointLocation)
            if checkpointLocation is not None:  # refused before the query starts, or recorded
                _runtime.admit(unioned, checkpointLocation)
            return unioned
        planJson = self.planJson()
        if self._shared is None or self._shared[0] != planJson:
            self.unpersist()  # a plan changed by hand: the old result is not this plan's
            self._shared = (planJson, _runtime.shared(_runtime.union(self.df, planJson)))
        return self._shared[1]

    def unpersist(self, blocking: bool = False) -> Pipeline:
        """Releases the result a bounded pipeline's outputs share, and returns the pipeline.

        On a bounded input the engine runs once for every output: the first read of ``toDF()``,
        ``getSideOutput(tag)`` (late elements, ``errors``) computes the union of all outputs and
        keeps it (``persist(MEMORY_AND_DISK)``), and each output filters it, so the main output
        and the late output of a backfill cost one pass over the data, not one each. It is kept
        until ``unpersist()`` (or the session ends): the outputs read afterwards run the engine
        again, on the input as it is then. A stream's outputs keep nothing (each ``toDF()`` is
        its own query; ``writeStream`` writes every output from one).

        Example::

            result = pipeline.toDF()
            late = pipeline.getSideOutput("late")
            result.write.parquet("/out/main")   # the engine runs here, once
            late.write.parquet("/out/late")     # reads what that run kept
            pipeline.unpersist()
        """
        shared, self._shared = self._shared, None
        if shared is not None:
            shared[1].unpersist(blocking)
        return self

    def toDF(self, realTime: bool = False, checkpointLocation: str | None = None) -> DataFrame:
        """The window results as a DataFrame: streaming if the input is, batch otherwise.

        Columns: the key columns, ``window_start``, ``window_end``, ``window_time`` (the result's
        event time), the aggregates and the pane columns (``pane_timing``, ``pane_index``,
        ``pane_is_first``, ``pane_is_last``); for a
        ``process()`` pipeline, the function's output schema. On a stream this query does not
        include the side outputs: use ``writeStream`` to get every output from one query.

        ``realTime=True`` builds the stream for Spark's real-time mode, for your own sink: start
        it with ``.outputMode("update").trigger(realTime="5 minutes")`` and a sink real-time
        mode takes (Kafka, ``foreach``). Windows then fire while a batch runs, as soon as the
        watermark passes their end.

        ``checkpointLocation``: the one you give Spark's ``writeStream``, so that the stream's
        number of key groups is kept there, as ``writeStream`` keeps it. Without it the count is
        ``spark.sparkwin.keyGroups``, else a default that follows
        ``spark.sql.shuffle.partitions`` (at least 128); a restart that would change it stops
        with an error naming the value to set.

        On a bounded input the result is computed once and kept for every output of the
        pipeline (``getSideOutput`` reads the same run); ``unpersist()`` releases it.

        Example::

            pipeline.toDF().show()
            (pipeline.toDF(realTime=True).selectExpr("to_json(struct(*)) AS value")
             .writeStream.format("kafka").option("topic", "out")
             .option("kafka.bootstrap.servers", "broker:9092")
             .option("checkpointLocation", "/chk").outputMode("update")
             .trigger(realTime="5 minutes").start())
        """
        _checkLocation(checkpointLocation, optional=True)
        return _runtime.mainOutput(
            self._union(realTime, checkpointLocation),
            self.planJson(),
            self.processFunction,
            self.outputSchema,
            self.paneAggregates,
        )

    def getSideOutput(
        self, tag: str, realTime: bool = False, checkpointLocation: str | None = None
    ) -> DataFrame:
        """A side output: late elements (the tag given to ``sideOutputLateData``), with the
        input's schema, or ``errors``: records the engine could not process (null timestamp,
        bad dynamic gap) with an ``error`` column. ``realTime`` and ``checkpointLocation`` as
        in ``toDF``. On a bounded input it reads the one run that ``toDF()`` reads too (see
        ``unpersist``).

        Example::

            pipeline.getSideOutput("late").show()
        """
        if not isinstance(tag, str):
            raise TypeError(f"tag must be a string, got {type(tag).__name__}")
        _checkLocation(checkpointLocation, optional=True)
        return _runtime.sideOutput(
            self._union(realTime, checkpointLocation), tag, self.lateOutputTag
        )

    def replay(self, endOfInput: bool = False) -> Replay:
        """Runs a bounded DataFrame as the live stream that delivered it would have run.

        Needs ``sw.stream(df, ..., arrival="column", channel="column", watermark=...)``: the
        arrival column (epoch milliseconds or a timestamp) orders the input and is the clock of
        periodic watermark emission and idleness; the channel column splits it into input
        channels whose watermarks meet in a valve. Results carry ``fired_at``. With
        ``endOfInput`` the watermark finally jumps to +infinity, as when a stream ends.

        Example::

            replayed = (sw.stream(history, "ts", arrival="offset", channel="partition",
                                  watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(5000))
                        .keyBy("user").window(sw.TumblingEventTimeWindows.of(60000))
                        .sideOutputLateData("late").aggregate(sw.agg.count())
                        .replay())
            replayed.toDF().show()
        """
        return replay(self, endOfInput)

    def writeStream(
        self,
        checkpointLocation: str,
        outputs: Mapping[str, OutputSpec] | None = None,
        *,
        paths: Mapping[str, OutputSpec] | None = None,
        foreachOutput: _runtime.OutputWriter | None = None,
        format: str = "parquet",
        options: dict[str, str] | None = None,
        trigger: dict[str, Any] | None = None,
        queryName: str | None = None,
    ) -> StreamingQuery:
        """Starts one streaming query that writes every output from one copy of state.

        ``outputs`` maps ``"main"``, the late tag and ``"errors"`` to where each goes (an output
        left out is not written):

        - a directory: each micro-batch's rows go to ``<path>/batch_id=<n>`` in ``format``
          with ``options``;
        - ``sw.toTable("db.name")``: a catalog table, created when the query starts if it does
          not exist, partitioned by ``batch_id``, each batch replacing its own partition;
        - ``sw.toDelta(path)`` or ``sw.toDelta(table="db.name")``: a Delta table, each batch one
          Delta transaction that Delta skips when the batch is replayed;
        - ``sw.toKafka(topic, servers, key=...)``: a Kafka topic, each row a JSON record;
        - ``sw.forEachRow(fn)``: ``fn(row)`` for each row, on the executors;
        - a function ``fn(df, batchId)``: your own foreachBatch code for that output.

        ``trigger={"realTime": "5 minutes"}`` runs the query in Spark's real-time mode (Spark
        4.3+, a Kafka source): batches of that length whose rows are processed as they arrive,
        and windows fire while a batch runs, as soon as the watermark passes their end. Its
        outputs are Kafka topics or ``sw.forEachRow`` functions (all of one kind), and it needs
        a task slot for every Kafka partition and every shuffle partition at once; what it
        cannot run is refused before the query starts. See README, "Real-time mode".

        Spark runs a micro-batch again after a restart when it wrote and then failed before
        its commit; directories and tables replace what that batch wrote and Delta skips it, so
        every output is written exactly once. A function gets the same ``batchId`` again: make
        it idempotent per batch id. ``paths`` is the old name of ``outputs``;
        ``foreachOutput(tag, df, batchId)`` instead writes every output with one function.
        Per-batch counters appear in
        ``query.lastProgress["observedMetrics"]["sparkwin"]`` (with ``channel=``, also the
        valve's ``watermark`` and each channel's ``channels``). Pipelines with processing-time
        timers or idle channels read sparkwin's clock as a second source: it starts a
        micro-batch when a timer or idle deadline is due, and none otherwise.

        Example::

            q = pipeline.writeStream("/tmp/ckpt", {"main": sw.toTable("analytics.sessions"),
                                                   "late": "/tmp/late",
                                                   "errors": lambda df, batchId: df.show()})
            q.awaitTermination()
        """
        if not self.df.isStreaming:
            raise ValueError(
                "writeStream needs a streaming input; for a bounded DataFrame use toDF() and "
                "getSideOutput() and write them as usual"
            )
        _checkLocation(checkpointLocation)
        given = [n for n, v in [("outputs", outputs), ("paths", paths)] if v is not None]
        if len(given) + (foreachOutput is not None) != 1:
            raise ValueError(
                "give exactly one of outputs (a dict tag -> directory, sw.toTable(...) or "
                "fn(df, batchId)) or foreachOutput; paths is the old name of outputs"
            )
        tags = ["main", *self.sideOutputTags()]
        if not isinstance(format, str) or not format:
            raise TypeError("format must be a data source name such as 'parquet'")
        targets: dict[str, Output] = {}
        if given:
            name, spec = given[0], outputs if outputs is not None else paths
            if not isinstance(spec, Mapping) or not all(isinstance(k, str) for k in spec):
                raise TypeError(
                    f"{name} must be a dict of output tag -> directory path, "
                    "sw.toTable('db.name') or function fn(df, batchId)"
                )
            unknown = sorted(set(spec) - set(tags))
            if unknown:
                raise ValueError(f"{name} has unknown outputs {unknown}; this pipeline has {tags}")
            targets = {
                t: outputOf(v, t, format, dict(options or {})).forQuery(checkpointLocation, t)
                for t, v in spec.items()
            }
        if foreachOutput is not None:
            if not callable(foreachOutput):
                raise TypeError("foreachOutput must be callable as foreachOutput(tag, df, batchId)")
            targets = {t: FunctionOutput(_tagged(foreachOutput, t)) for t in tags}
        if trigger is not None:
            if (
                not isinstance(trigger, dict)
                or len(trigger) != 1
                or next(iter(trigger)) not in _TRIGGER_KEYS
            ):
                raise ValueError(
                    f"trigger must be a one-entry dict with a key in {list(_TRIGGER_KEYS)}, "
                    "e.g. {'processingTime': '1 second'}"
                )
        if _realtime.isRealTime(trigger):
            assert trigger is not None
            return self._startRealTime(
                checkpointLocation, targets, foreachOutput, trigger, queryName
            )
        if any(
            not isinstance(o, PathOutput | FunctionOutput | RowOutput) for o in targets.values()
        ):
            schemas = self.schemas()
            for t, o in targets.items():
                o.prepare(self.df.sparkSession, schemas[t], t)
        return _runtime.startQuery(
            self._union(checkpointLocation=checkpointLocation),
            _runtime.splitOutputs(
                self.planJson(),
                self.processFunction,
                self.outputSchema,
                self.lateOutputTag,
                self.paneAggregates,
            ),
            isProcess=self.processFunction is not None,
            checkpointLocation=checkpointLocation,
            targets=targets,
            trigger=trigger,
            queryName=queryName,
        )

    def _startRealTime(
        self,
        checkpointLocation: str,
        targets: dict[str, Output],
        foreachOutput: Any,
        trigger: dict[str, Any],
        queryName: str | None,
    ) -> StreamingQuery:
        """``writeStream`` in real-time mode: every check before the query starts."""
        spark = self.df.sparkSession
        _realtime.requireRealTime(spark, "writeStream(trigger={'realTime': ...})")
        # PlanRules judges the plan, the trigger, the outputs and the task slots; asked before
        # planning on the checkpoint, which keeps its key-group count there.
        kind = _realtime.refuse(self.df, self.planJson(), targets, foreachOutput, trigger)
        if kind is KafkaOutput:
            schemas = self.schemas()
            for t, o in targets.items():
                o.prepare(spark, schemas[t], t)
        # refuses what real-time mode cannot run, and a checkpoint the query cannot resume
        unioned = self._union(True, checkpointLocation)
        return _realtime.start(
            unioned,
            targets=targets,
            kind=kind,
            checkpointLocation=checkpointLocation,
            trigger=trigger,
            queryName=queryName,
            observe=_runtime.observed,
        )


def _checkLocation(checkpointLocation: Any, optional: bool = False) -> None:
    """A checkpoint location is a non-empty path string (or None where ``optional``)."""
    if optional and checkpointLocation is None:
        return
    if not isinstance(checkpointLocation, str) or not checkpointLocation:
        raise TypeError("checkpointLocation must be a non-empty path string")


def _tagged(writeAll: _runtime.OutputWriter, tag: str) -> BatchFunction:
    """``foreachOutput(tag, df, batchId)`` as one output's ``fn(df, batchId)``."""

    def write(df: DataFrame, batchId: int) -> None:
        writeAll(tag, df, batchId)

    return write
