"""The pipeline builder: ``stream(df, ...)`` -> `DataStream` -> `KeyedStream` ->
`WindowedStream` -> `Pipeline`, laid out like Flink's DataStream windowing API.

Every step checks its own arguments (types, values, columns of the input DataFrame) in Python
and raises TypeError or ValueError naming the parameter and saying how to fix it. How the
pieces of a plan combine (a session window and its trigger, a stream and its watermark) is
the JVM's to say: after every step the builder asks its rules (``PlanRules``) about the plan so
far and raises their refusal as a PlanError (a ValueError), the plan's pieces named as the user
wrote them; a user's own classes (`sparkwin.jvm`) are checked by the JVM too, which alone can
load them. Builders are immutable: each method returns a new object.

This module is the public builder: ``stream`` and the three builder classes, each method a few
lines that check its arguments and make the next state. Their schema checks are
`sparkwin._plan.schema`'s, the state and the plan it writes `sparkwin._plan.builder`'s, asking
the JVM's rules and rendering their refusals `sparkwin._plan.refusal`'s. It builds the plan
(`docs/plan.md`) and nothing else: it never starts a query and never runs Python per event.

Example::

    from datetime import timedelta
    import sparkwin as sw
    pipeline = (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(5_000))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(timedelta(minutes=1)))
        .allowedLateness(timedelta(seconds=30))
        .sideOutputLateData("late")
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )
    print(pipeline.planJson())
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import BooleanType, LongType, MapType, StructType, TimestampType

from sparkwin import agg as sw_agg
from sparkwin._plan import schema as _schema
from sparkwin._plan.builder import (
    COMBINERS,
    Source,
    Windowing,
    ansi,
    countWindowing,
    walk,
    window,
    withComputed,
)
from sparkwin._plan.columns import shown
from sparkwin._plan.contract import ERRORS_TAG, OUTPUT_COLUMNS, validatePlan
from sparkwin._plan.durations import toMillis
from sparkwin._spark.pane_aggregates import PANE_COUNT, PaneAggregates
from sparkwin.agg import Aggregate, PandasAggregate
from sparkwin.assigners import WindowAssigner
from sparkwin.evictors import ConditionEvictor, DeltaEvictor, Evictor
from sparkwin.jvm import PROBE_FUNCTION, checkPlan, namesClasses
from sparkwin.pipeline import Pipeline
from sparkwin.triggers import ConditionTrigger, DeltaTrigger, Trigger
from sparkwin.watermark import WatermarkStrategy

__all__ = ["OUTPUT_COLUMNS", "DataStream", "KeyedStream", "WindowedStream", "stream"]

# The side output the engine writes rejected rows to; a late-data tag must not take its name.
ERROR_OUTPUT_TAG = ERRORS_TAG
ACCUMULATION_MODES = ("accumulating", "discarding")


def stream(
    df: DataFrame,
    timestamp: str | None = None,
    watermark: WatermarkStrategy | None = None,
    arrival: str | None = None,
    channel: str | None = None,
    channels: Iterable[int] | Iterable[str] | None = None,
) -> DataStream:
    """Start a windowing pipeline over `df`, whose event time is the column `timestamp`
    (TimestampType, or LongType of epoch milliseconds). Without `timestamp` the stream has no
    event time and takes only ``StormWindows``, which then run as Storm's do without a timestamp
    field: in arrival order, counts as tuples arrive and durations in processing time.

    `watermark` says how event time advances (required for event-time windows on a streaming
    DataFrame). `channel` names the column that says which input channel a row came from (Kafka's
    ``partition``, a shard id, or a struct of topic and partition): each channel then gets its
    own watermark from the strategy, and a valve takes the minimum over the channels that are not
    idle, as Flink does per Kafka partition. On a live stream that happens at every micro-batch;
    ``withIdleness`` makes a quiet channel stop holding the others back. A channel counts from
    its first row, unless `channels` declares it: the values the channel column will take (a
    topic's partitions, ``range(8)``; ints for an integer column, strings for a string one).
    Declared channels hold the watermark back from the stream's first data until they deliver
    or go idle, as Flink's Kafka source holds it for every partition it was assigned, so a slow
    partition's first records are not late because a fast one was read first. `arrival` is for
    replaying a bounded DataFrame as a live stream would have seen it: the column giving arrival
    order (see ``Pipeline.replay``).

    Example::

        import sparkwin as sw
        events = sw.stream(df, "ts",
                           watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(5_000))
        perPartition = sw.stream(kafka, "ts", channel="partition", channels=range(8),
                                 watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(5_000)
                                                             .withIdleness(60_000))
    """
    if not isinstance(df, DataFrame):
        raise TypeError(
            f"df must be a pyspark.sql.DataFrame, got {type(df).__name__}; build one with "
            "spark.createDataFrame(...), spark.read or spark.readStream"
        )
    schema = df.schema
    if timestamp is None:
        return _arrivalOrder(df, watermark, arrival, channel, channels)
    timestamp = _schema.columnName(timestamp, "timestamp")
    _schema.requireType(
        _schema.columnOf(schema, timestamp, "timestamp"),
        (TimestampType, LongType),
        "timestamp",
        "the event-time column must be a timestamp (TimestampType) or a long of epoch "
        "milliseconds (LongType); convert it, e.g. with F.col(...).cast('timestamp')",
    )
    if watermark is not None and not isinstance(watermark, WatermarkStrategy):
        raise TypeError(
            "watermark must be a WatermarkStrategy such as "
            "WatermarkStrategy.forBoundedOutOfOrderness(5_000), or None, got "
            f"{type(watermark).__name__} {watermark!r}"
        )
    if watermark is not None and watermark.markerColumn is not None:
        what = "WatermarkStrategy.forPunctuated(markerColumn)"
        _schema.requireType(
            _schema.columnOf(schema, watermark.markerColumn, what),
            (BooleanType,),
            what,
            "the marker column must be boolean (BooleanType)",
        )
    if arrival is not None:
        _schema.columnOf(schema, _schema.columnName(arrival, "arrival"), "arrival")
    declared = None
    if channel is not None:
        field = _schema.columnOf(schema, _schema.columnName(channel, "channel"), "channel")
        _schema.checkChannel(field)
        if channels is not None:
            declared = _schema.declaredChannels(field, channels)
    elif channels is not None:
        declared = _schema.looseChannels(channels)  # for the JVM to say they need channel=
    source = Source(
        df, timestamp, watermark, arrival, channel, channels=declared, streaming=df.isStreaming
    )
    return DataStream(source.checked())


def _arrivalOrder(
    df: DataFrame, watermark: object, arrival: object, channel: object, channels: object
) -> DataStream:
    """A stream without event time: no watermarks, channels or replay, which all need one (the
    JVM's rules say so, naming the argument)."""
    if watermark is not None and not isinstance(watermark, WatermarkStrategy):
        raise TypeError(
            "watermark must be a WatermarkStrategy such as "
            "WatermarkStrategy.forBoundedOutOfOrderness(5_000), or None, got "
            f"{type(watermark).__name__} {watermark!r}"
        )
    source = Source(
        df,
        None,
        watermark,
        None if arrival is None else _schema.columnName(arrival, "arrival"),
        None if channel is None else _schema.columnName(channel, "channel"),
        channels=None if channels is None else _schema.looseChannels(channels),
        streaming=df.isStreaming,
    ).checked()
    # What the rules let through is no event-time input at all (noWatermarks() at most).
    return DataStream(replace(source, watermark=None))


class DataStream:
    """A stream of events with an event-time column: key it with `keyBy`, or window all of it
    with `windowAll`. Made by `sparkwin.stream`.
    """

    __slots__ = ("_source",)

    def __init__(self, source: Source) -> None:
        self._source = source

    @property
    def df(self) -> DataFrame:
        """The input DataFrame.

        Example::

            sw.stream(df, "ts").df is df  # True
        """
        return self._source.df

    @property
    def timestamp(self) -> str | None:
        """The event-time column (None: a stream without event time, in arrival order).

        Example::

            sw.stream(df, "ts").timestamp  # 'ts'
        """
        return self._source.timestamp

    @property
    def watermark(self) -> WatermarkStrategy | None:
        """The watermark strategy the stream was built with, or None.

        Example::

            sw.stream(df, "ts").watermark  # None
        """
        return self._source.watermark

    def keyBy(self, *columns: str) -> KeyedStream:
        """Partition the stream by one or more key columns; windows are kept per key.

        Example::

            sw.stream(df, "ts").keyBy("user", "device")
        """
        if len(columns) == 1 and isinstance(columns[0], list | tuple):
            columns = tuple(columns[0])
        if not columns:
            raise ValueError(
                "keyBy(columns) needs at least one column, e.g. keyBy('user'); to window the "
                "whole stream without keys use windowAll(assigner)"
            )
        schema = self._source.df.schema
        seen: set[str] = set()
        for i, column in enumerate(columns):
            _schema.columnName(column, f"keyBy(columns)[{i}]")
            if column in seen:
                raise ValueError(f"keyBy(columns) names {column!r} twice; list each key once")
            seen.add(column)
            field = _schema.columnOf(schema, column, "keyBy(columns)")
            if isinstance(field.dataType, MapType):
                raise TypeError(
                    f"keyBy(columns): column {column!r} is {field.dataType.simpleString()}; "
                    "maps cannot be grouping keys, key by a column of another type"
                )
        keys = tuple(columns)
        self._source.ask(self._source.plan(keys), [])
        return KeyedStream(self._source, keys)

    def windowAll(self, assigner: WindowAssigner) -> WindowedStream:
        """Window the whole stream without keys (one parallel instance, as in Flink).

        Example::

            sw.stream(df, "ts").windowAll(TumblingEventTimeWindows.of(60_000))
        """
        return WindowedStream(window(self._source, None, assigner))

    def countWindowAll(self, size: int, slide: int | None = None) -> WindowedStream:
        """Windows of `size` elements over the whole stream, sliding by `slide` elements (None:
        tumbling). Expanded like `KeyedStream.countWindow`.

        Example::

            sw.stream(df, "ts").countWindowAll(100).aggregate(sw.agg.count())
        """
        return WindowedStream(countWindowing(self._source, None, size, slide))

    def __repr__(self) -> str:
        return self._source.describe()


class KeyedStream:
    """A stream partitioned by key columns: window it with `window` or `countWindow`."""

    __slots__ = ("_keys", "_source")

    def __init__(self, source: Source, keys: tuple[str, ...]) -> None:
        self._source = source
        self._keys = keys

    @property
    def keys(self) -> tuple[str, ...]:
        """The key columns.

        Example::

            sw.stream(df, "ts").keyBy("user").keys  # ('user',)
        """
        return self._keys

    def window(self, assigner: WindowAssigner) -> WindowedStream:
        """Window each key's elements with `assigner`.

        Example::

            sw.stream(df, "ts").keyBy("user").window(EventTimeSessionWindows.withGap(30_000))
        """
        return WindowedStream(window(self._source, self._keys, assigner))

    def countWindow(self, size: int, slide: int | None = None) -> WindowedStream:
        """Windows of `size` elements per key, sliding by `slide` elements (None: tumbling).

        As in Flink this is global windows with ``PurgingTrigger.of(CountTrigger.of(size))``
        (tumbling), or with ``CountTrigger.of(slide)`` and ``CountEvictor.of(size)`` (sliding).

        Example::

            sw.stream(df, "ts").keyBy("user").countWindow(100, 10).aggregate(sw.agg.avg("x"))
        """
        return WindowedStream(countWindowing(self._source, self._keys, size, slide))

    def __repr__(self) -> str:
        return f"{self._source.describe()}.keyBy({', '.join(repr(k) for k in self._keys)})"


class WindowedStream:
    """A windowed stream: refine it with `trigger`, `evictor`, `allowedLateness`,
    `sideOutputLateData` and `accumulationMode` (each returns a new WindowedStream), then end it
    with `aggregate` or `process`, which return a `Pipeline`.
    """

    __slots__ = ("_w",)

    def __init__(self, windowing: Windowing) -> None:
        self._w = windowing

    @property
    def assigner(self) -> WindowAssigner:
        """The window assigner.

        Example::

            windowed.assigner  # TumblingEventTimeWindows.of(60000)
        """
        return self._w.assigner

    @property
    def keys(self) -> tuple[str, ...]:
        """The key columns; empty for `windowAll`.

        Example::

            windowed.keys  # ('user',)
        """
        return self._w.keys or ()

    def trigger(self, trigger: Trigger) -> WindowedStream:
        """Replace the assigner's default trigger. Session windows need a trigger that can
        merge (not `DeltaTrigger` or `ProcessingTimeoutTrigger`).

        Example::

            keyed.window(GlobalWindows.create()).trigger(PurgingTrigger.of(CountTrigger.of(3)))
        """
        if not isinstance(trigger, Trigger):
            raise TypeError(
                "trigger must be a sparkwin trigger such as CountTrigger.of(100) or "
                f"AfterWatermark.pastEndOfWindow(), got {type(trigger).__name__} {trigger!r}"
            )
        conditions = [t for t in walk(trigger) if isinstance(t, ConditionTrigger)]
        target = self._withComputed([c for t in walk(trigger) for c in getattr(t, "computed", ())])
        schema = target._w.source.df.schema
        for t in walk(trigger):
            if isinstance(t, DeltaTrigger):
                _schema.checkDeltaColumns(schema, t.columns, "DeltaTrigger.of")
        for t in conditions:
            _requireCondition(schema, t.column, t.computed, "ConditionTrigger.of(condition)")
        chosen = WindowedStream(replace(target._w, trigger=trigger).checked())
        if namesClasses(trigger.jsonValue()):
            chosen._plan(PROBE_FUNCTION)  # the JVM builds the user's classes, or says why not
        return chosen

    def evictor(self, evictor: Evictor) -> WindowedStream:
        """Evict elements of a fired window before (or after) the window function runs. The
        window then keeps its elements rather than running aggregates.

        Example::

            keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(2)).evictor(
                CountEvictor.of(5))
        """
        if not isinstance(evictor, Evictor):
            raise TypeError(
                "evictor must be a sparkwin evictor such as CountEvictor.of(100), "
                f"TimeEvictor.of(1_000) or DeltaEvictor.of(5.0, 'x'), got "
                f"{type(evictor).__name__} {evictor!r}"
            )
        target = self._withComputed(list(getattr(evictor, "computed", ())))
        if isinstance(evictor, ConditionEvictor):
            _requireCondition(
                target._w.source.df.schema,
                evictor.column,
                evictor.computed,
                "ConditionEvictor.of(condition)",
            )
        if isinstance(evictor, DeltaEvictor):
            schema = target._w.source.df.schema
            _schema.checkDeltaColumns(schema, evictor.columns, "DeltaEvictor.of")
        chosen = WindowedStream(replace(target._w, evictor=evictor).checked())
        if namesClasses(evictor.jsonValue()):
            chosen._plan(PROBE_FUNCTION)  # the JVM builds the user's classes, or says why not
        return chosen

    def allowedLateness(self, lateness: Any) -> WindowedStream:
        """Keep event-time windows for `lateness` (``timedelta`` or int milliseconds, >= 0)
        past their end; elements arriving in that time fire the window again.

        Example::

            windowed.allowedLateness(timedelta(minutes=1))
        """
        millis = toMillis(lateness, "lateness", allowZero=True)
        return WindowedStream(replace(self._w, allowedLatenessMs=millis).checked())

    def sideOutputLateData(self, tag: str) -> WindowedStream:
        """Send late elements (every window of theirs already closed) to the side output
        `tag` instead of dropping them; the side output has the input schema.

        Example::

            windowed.sideOutputLateData("late")
        """
        if not isinstance(tag, str):
            raise TypeError(f"tag must be a str such as 'late', got {type(tag).__name__} {tag!r}")
        if not tag:
            raise ValueError("tag must be a non-empty name such as 'late'")
        if tag == ERROR_OUTPUT_TAG:
            raise ValueError(
                f"tag {tag!r} is the name of the error side output; choose another, e.g. 'late'"
            )
        return WindowedStream(replace(self._w, lateOutputTag=tag).checked())

    def accumulationMode(self, mode: str) -> WindowedStream:
        """Beam's accumulation mode: with ``"accumulating"`` (the default) each pane carries
        everything so far, with ``"discarding"`` only what arrived since the last firing.

        Example::

            windowed.trigger(Repeatedly.forever(AfterPane.elementCountAtLeast(10))
                             ).accumulationMode("discarding")
        """
        if not isinstance(mode, str):
            raise TypeError(
                f"mode must be 'accumulating' or 'discarding', got {type(mode).__name__} {mode!r}"
            )
        if mode not in ACCUMULATION_MODES:
            raise ValueError(f"mode must be 'accumulating' or 'discarding', got {mode!r}")
        return WindowedStream(replace(self._w, accumulationMode=mode).checked())

    def withTimestampCombiner(self, combiner: str) -> WindowedStream:
        """Beam's timestamp combiner: which event time a result's ``window_time`` carries.

        ``"END_OF_WINDOW"`` (the default) is the window's largest timestamp, as Flink's results
        carry: marked as event time, a pipeline on the results inherits the upstream watermark.
        ``"EARLIEST"`` and ``"LATEST"`` are the earliest and latest event time among the pane's
        elements; Beam holds its watermark back for them, sparkwin does not, so such results are
        data, not event time downstream (a chained pipeline on them is refused).

        Example::

            windowed.withTimestampCombiner("LATEST").aggregate(sw.agg.count())
        """
        if not isinstance(combiner, str) or combiner.upper() not in COMBINERS:
            raise ValueError(
                "combiner must be 'END_OF_WINDOW', 'EARLIEST' or 'LATEST' (Beam's "
                f"TimestampCombiner), got {combiner!r}"
            )
        return WindowedStream(
            replace(self._w, timestampCombiner=COMBINERS[combiner.upper()]).checked()
        )

    def aggregate(self, *aggregates: Aggregate | PandasAggregate) -> Pipeline:
        """End the pipeline with declarative aggregates (at least one), computed by the JVM, and
        pandas aggregates (``sw.agg.pandas``), computed in Python once per fired pane.

        Output columns: the keys, ``window_start``, ``window_end``, ``window_time`` (the window's
        largest timestamp: the result's event time downstream), the aggregates' aliases in
        this order, then ``pane_timing``, ``pane_index``, ``pane_is_first``, ``pane_is_last``.

        Example::

            windowed.aggregate(sw.agg.count(), sw.agg.sum("amount").alias("total"))
        """
        if len(aggregates) == 1 and isinstance(aggregates[0], list | tuple):
            aggregates = tuple(aggregates[0])
        if not aggregates:
            raise ValueError(
                "aggregate(aggregates) needs at least one aggregate, e.g. "
                "aggregate(sw.agg.count()); use process(fn, schema) for a Python function"
            )
        for i, a in enumerate(aggregates):
            if not isinstance(a, Aggregate | PandasAggregate):
                raise TypeError(
                    f"aggregates[{i}] must be an aggregate such as sw.agg.sum('amount'), got "
                    f"{type(a).__name__} {a!r}"
                )
        target = self._withComputed([c for a in aggregates for c in a.computed])
        schema = target._w.source.df.schema
        panes = _paneAggregates(aggregates, schema, self.keys)
        jvmOnes = tuple(a for a in aggregates if isinstance(a, Aggregate))
        if panes is not None and not jvmOnes:
            jvmOnes = (sw_agg.count().alias(PANE_COUNT),)  # a result row per pane
        for a in jvmOnes:
            for param, column in a.inputs:
                what = f"agg.{a.fn}({param})"
                field = _schema.columnOf(schema, column, what)
                if not a.acceptsType(field.dataType, param):
                    raise TypeError(
                        f"{what}: {param} {a.describeInput(column)} is "
                        f"{field.dataType.simpleString()}, but agg.{a.fn} needs "
                        f"{a.typeRequirementOf(param)}"
                        + (f" for {param}" if param != "column" else "")
                        + a.typeFix(param)
                    )
        function: dict[str, Any] = {
            "kind": "aggregate",
            "aggregates": [a.jsonValue() for a in jvmOnes],
        }
        if self._w.timestampCombiner != "endOfWindow":  # absent: the default, END_OF_WINDOW
            function["timestampCombiner"] = self._w.timestampCombiner
        if panes is not None:
            function["elements"] = True  # the JVM emits each pane's elements after its result
        description = f"{self._w.describe()}.aggregate({', '.join(repr(a) for a in aggregates)})"
        plan = target._plan(function, *jvmOnes)
        computed = dict(target._w.source.computed)
        return Pipeline(
            target._w.source.df,
            plan,
            description=description,
            computed=computed,
            paneAggregates=panes,
        )

    def _withComputed(self, computed: list[tuple[str, Any, str]]) -> WindowedStream:
        """This stream over its input with the Spark Columns of `computed` added."""
        source = withComputed(self._w.source, computed)
        return self if source is self._w.source else WindowedStream(replace(self._w, source=source))

    def process(self, fn: Callable[[Any, Any, Any], Any], schema: StructType | str) -> Pipeline:
        """End the pipeline with a Python function called once per fired pane as
        ``fn(key, window, pdf)`` (`pdf` a pandas DataFrame of the pane's elements), returning a
        pandas DataFrame of `schema` (a StructType or a DDL string such as
        ``"user string, n long"``).

        Example::

            def summarise(key, window, pdf):
                return pd.DataFrame({"user": [key[0]], "n": [len(pdf)]})

            windowed.process(summarise, "user string, n long")
        """
        if not callable(fn):
            raise TypeError(
                "fn must be a callable fn(key, window, pdf) returning a pandas DataFrame, got "
                f"{type(fn).__name__} {fn!r}"
            )
        try:
            signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):  # builtins without a signature: trust them
            signature = None
        if signature is not None:
            try:
                signature.bind(None, None, None)
            except TypeError:
                raise TypeError(
                    "fn must accept three positional arguments (key, window, pdf); "
                    f"{getattr(fn, '__name__', repr(fn))}{signature} does not"
                ) from None
        outputSchema = _schema.outputSchema(schema)
        function: dict[str, Any] = {"kind": "process", "outputSchema": outputSchema.jsonValue()}
        if self._w.timestampCombiner != "endOfWindow":  # for the JVM's rules to refuse
            self._w.checked({**function, "timestampCombiner": self._w.timestampCombiner})
        name = getattr(fn, "__qualname__", None) or repr(fn)
        description = f"{self._w.describe()}.process({name}, {outputSchema.simpleString()!r})"
        return Pipeline(
            self._w.source.df,
            self._plan(function),
            processFunction=fn,
            outputSchema=outputSchema,
            description=description,
            computed=dict(self._w.source.computed),
        )

    def _plan(self, function: dict[str, Any], *pieces: Any) -> dict[str, Any]:
        """The whole plan, once the JVM's rules accept it (``pieces``: what ``function`` adds),
        with the watermark the JVM decided where the user chose none."""
        decided = self._w.decided(function, *pieces)
        plan = self._w.plan(decided=decided.get("watermark"))
        plan.pop("function", None)  # a combiner's placeholder: `function` carries it now
        plan.update(ansi=ansi(self._w.source.df), function=function)
        validatePlan(plan)  # the contract the jar holds plans to (contract.json)
        checkPlan(self._w.source.df, plan)  # a user's classes: the JVM builds them, or says why not
        return plan

    def __repr__(self) -> str:
        return self._w.describe()


def _requireCondition(
    schema: StructType, column: str, computed: tuple[tuple[str, Any, str], ...], what: str
) -> None:
    """Refuses a condition (a trigger's, an evictor's) whose column is not boolean."""
    field = _schema.columnOf(schema, column, what)
    if not isinstance(field.dataType, BooleanType):
        raise TypeError(
            f"{what}: {shown(column, computed)} is {field.dataType.simpleString()}, but a "
            "condition must be boolean; compare it, e.g. F.col('event') == 'checkout'"
        )


def _paneAggregates(
    aggregates: tuple[Any, ...], schema: StructType, keys: tuple[str, ...]
) -> PaneAggregates | None:
    """The pandas aggregates among `aggregates` (None without any), their columns checked and
    their aliases apart from every other output column's."""
    pandasOnes = tuple(a for a in aggregates if isinstance(a, PandasAggregate))
    if not pandasOnes:
        return None
    for a in pandasOnes:
        for column in a.columns:
            _schema.columnOf(schema, column, "agg.pandas(function, *columns)")
    order = tuple(a.outputAlias for a in aggregates)
    for a in pandasOnes:
        name = a.outputAlias
        if name in OUTPUT_COLUMNS or name in keys or order.count(name) > 1:
            raise ValueError(
                f"{a!r}: its alias {a.outputAlias!r} is another output column's too; give it "
                "another with .alias(name)"
            )
    return PaneAggregates(pandasOnes, order)
