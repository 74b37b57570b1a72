"""The builder's internal, immutable state, and the plan it writes (`docs/plan.md`).

`Source` is what ``sparkwin.stream(...)`` was given, `Windowing` everything from ``keyBy`` or
``windowAll`` on; each step of the public builder (`sparkwin.stream`) makes a new one and asks
the JVM's rules about the plan so far (`sparkwin._plan.refusal`). Where the user chose no watermark
the plan so far leaves it out, and the whole plan carries the one the JVM decided
(``PlanDecoder.defaultWatermark``: Storm's lag watermark for Storm windows in event time on a
bounded input). This module writes plans only: it checks no argument of a public call beyond
the columns an assigner reads, never runs a query, and never decides what the JVM decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import ArrayType, StructType, TimestampType

from sparkwin import _transport as transport
from sparkwin._plan import schema as _schema
from sparkwin._plan.columns import computedName
from sparkwin._plan.contract import PLAN_VERSION
from sparkwin._plan.durations import toCount
from sparkwin._plan.refusal import ask
from sparkwin.assigners import ComputedWindows, GlobalWindows, StormWindows, WindowAssigner
from sparkwin.errors import PlanError
from sparkwin.evictors import CountEvictor, Evictor
from sparkwin.jvm import JvmAssigner, resolvedAssigner
from sparkwin.triggers import CountTrigger, PurgingTrigger, Trigger
from sparkwin.watermark import WatermarkStrategy

# A plan's watermark that nobody chose yet: left out of the plan, for the JVM to decide.
UNDECIDED: Any = object()

# Beam's names and the plan's.
COMBINERS = {"END_OF_WINDOW": "endOfWindow", "EARLIEST": "earliest", "LATEST": "latest"}
COMBINER_NAMES = {v: k for k, v in COMBINERS.items()}


@dataclass(frozen=True)
class Source:
    df: DataFrame
    timestamp: str | None  # None: no event time (Storm's windows in arrival order)
    watermark: WatermarkStrategy | None
    arrival: str | None
    channel: str | None
    # Channels known before they deliver (a topic's partitions), as the JVM compares them.
    channels: tuple[str, ...] | None = None
    # df.isStreaming, asked once (on Spark Connect it is a round trip).
    streaming: bool = False
    # The hidden columns `df` has for the pipeline's Spark Columns: (name, Column), in order.
    computed: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    def plan(self, keys: tuple[str, ...] | None = None, decided: Any = UNDECIDED) -> dict[str, Any]:
        """The stream's part of the plan (and the keys, once keyBy gave them). The watermark is
        the user's strategy (``noWatermarks()``: null); without one, `decided` (the JVM's choice
        for the whole plan), else left out for the JVM's decoder to decide."""
        watermark = decided if self.watermark is None else self.watermark.jsonValue()
        plan = {
            "planVersion": PLAN_VERSION,
            "inputSchema": self.df.schema.jsonValue(),
            "timestamp": self.timestamp,
            **({} if keys is None else {"keys": list(keys)}),
            "watermark": watermark,
            "arrival": self.arrival,
            "channel": self.channel,
            "channels": None if self.channels is None else list(self.channels),
        }
        if watermark is UNDECIDED:
            del plan["watermark"]
        return plan

    def ask(self, plan: dict[str, Any], pieces: Iterable[Any]) -> dict[str, Any]:
        """The JVM's answer on `plan` (built on this source): a PlanError, or its defaults."""
        return ask(self.df.sparkSession, self.streaming, plan, pieces)

    def checked(self) -> Source:
        """This source, once the JVM's rules accept it."""
        self.ask(self.plan(), [self.watermark] if self.watermark is not None else [])
        return self

    def describe(self) -> str:
        args = [repr(self.df)] + ([] if self.timestamp is None else [repr(self.timestamp)])
        if self.watermark is not None:
            args.append(f"watermark={self.watermark!r}")
        if self.arrival is not None:
            args.append(f"arrival={self.arrival!r}")
        if self.channel is not None:
            args.append(f"channel={self.channel!r}")
        if self.channels is not None:
            args.append(f"channels={list(self.channels)!r}")
        return f"stream({', '.join(args)})"


@dataclass(frozen=True)
class Windowing:
    source: Source
    keys: tuple[str, ...] | None  # None: windowAll
    assigner: WindowAssigner
    trigger: Trigger | None = None
    evictor: Evictor | None = None
    allowedLatenessMs: int = 0
    lateOutputTag: str | None = None
    accumulationMode: str = "accumulating"
    timestampCombiner: str = "endOfWindow"

    def describe(self) -> str:
        text = self.source.describe()
        if self.keys is None:
            text += f".windowAll({self.assigner!r})"
        else:
            text += f".keyBy({', '.join(repr(k) for k in self.keys)}).window({self.assigner!r})"
        if self.trigger is not None:
            text += f".trigger({self.trigger!r})"
        if self.evictor is not None:
            text += f".evictor({self.evictor!r})"
        if self.allowedLatenessMs:
            text += f".allowedLateness({self.allowedLatenessMs})"
        if self.lateOutputTag is not None:
            text += f".sideOutputLateData({self.lateOutputTag!r})"
        if self.accumulationMode != "accumulating":
            text += f".accumulationMode({self.accumulationMode!r})"
        if self.timestampCombiner != "endOfWindow":
            text += f".withTimestampCombiner({COMBINER_NAMES[self.timestampCombiner]!r})"
        return text

    def plan(
        self, function: dict[str, Any] | None = None, decided: Any = UNDECIDED
    ) -> dict[str, Any]:
        """The plan so far; with ``function``, the whole plan; `decided`: the watermark the JVM
        decided for it where the user chose none (see `Source.plan`)."""
        plan = {
            **self.source.plan(self.keys or (), decided),
            "assigner": self.assigner.jsonValue(),
            "trigger": None if self.trigger is None else self.trigger.jsonValue(),
            "evictor": None if self.evictor is None else self.evictor.jsonValue(),
            "allowedLatenessMs": self.allowedLatenessMs,
            "lateOutputTag": self.lateOutputTag,
            "accumulationMode": self.accumulationMode,
        }
        if function is not None:
            plan["function"] = function
        elif self.timestampCombiner != "endOfWindow":  # what aggregate() or process() will get
            plan["function"] = {"timestampCombiner": self.timestampCombiner}
        return plan

    def checked(self, function: dict[str, Any] | None = None, *more: Any) -> Windowing:
        """This windowing, once the JVM's rules accept it (with ``function``: the whole plan,
        ``more`` the pieces of it the function adds, such as its aggregates)."""
        self.decided(function, *more)
        return self

    def decided(self, function: dict[str, Any] | None = None, *more: Any) -> dict[str, Any]:
        """What the JVM decides where the plan is silent (``{"watermark": ...}``), once its rules
        accept the plan (arguments as in `checked`; asked once per plan, so both cost one ask)."""
        source = self.source
        pieces = [source.watermark, self.assigner, *walk(self.trigger), self.evictor, *more]
        return source.ask(self.plan(function), [p for p in pieces if p is not None])


def countWindowing(
    source: Source, keys: tuple[str, ...] | None, size: int, slide: int | None
) -> Windowing:
    """Flink's expansion of count windows onto global windows."""
    sizeN = toCount(size, "size")
    if slide is None:
        return Windowing(
            source, keys, GlobalWindows.create(), trigger=PurgingTrigger.of(CountTrigger.of(sizeN))
        ).checked()
    slideN = toCount(slide, "slide")
    return Windowing(
        source,
        keys,
        GlobalWindows.create(),
        trigger=CountTrigger.of(slideN),
        evictor=CountEvictor.of(sizeN),
    ).checked()


def window(source: Source, keys: tuple[str, ...] | None, assigner: object) -> Windowing:
    if not isinstance(assigner, WindowAssigner):
        raise TypeError(
            "assigner must be a sparkwin window assigner such as "
            "TumblingEventTimeWindows.of(60_000) or EventTimeSessionWindows.withGap(30_000), "
            f"got {type(assigner).__name__} {assigner!r}"
        )
    if source.timestamp is None:
        # Storm's windows without a timestamp run in arrival order (Storm's default mode).
        if isinstance(assigner, StormWindows):
            assigner = replace(assigner, arrivalOrder=True)
        return Windowing(source, keys, assigner).checked()
    if isinstance(assigner, JvmAssigner):  # the class says whether it works in event time
        assigner = resolvedAssigner(source.df, source.timestamp, assigner)
    if isinstance(assigner, ComputedWindows):
        source, assigner = _computedWindows(source, assigner)
    schema = source.df.schema
    for column in sorted(assigner.referencedColumns):
        what = f"{type(assigner).__name__}.withDynamicGap(column)"
        _schema.requireType(
            _schema.columnOf(schema, column, what),
            _schema.INTEGRAL_TYPES,
            what,
            "a dynamic gap needs an integral column of milliseconds (byte, short, int or long)",
        )
    return Windowing(source, keys, assigner).checked()


def withComputed(source: Source, computed: Iterable[tuple[str, Any, str]]) -> Source:
    """`source` over its input with the Spark Columns of `computed` ((hidden name, Column, what
    takes it)) added as hidden columns (``__sparkwin_...``), which Spark computes before the
    engine reads them; `source` itself when there are none new."""
    df = source.df
    known = {name for name, _ in source.computed}
    new = {name: (e, what) for name, e, what in computed if name not in known}
    if not new:
        return source
    taken = [n for n in new if n in df.columns]
    if taken:
        raise ValueError(
            f"the input has columns named {taken}, which sparkwin's computed inputs use; "
            "rename them"
        )
    withColumns = df
    for name, (expression, what) in new.items():
        try:
            # On Spark Connect the schema is what resolves it (a round trip per column, once).
            withColumns = withColumns.withColumn(name, expression)
            withColumns.schema  # noqa: B018
        except Exception as e:  # Spark's analysis error, whichever session raised it
            raise ValueError(
                f"{what}: the Column {expression} does not resolve against the input's "
                f"columns {df.columns}: {_firstLine(e)}"
            ) from e
    # Spark runs a micro-batch again after a failure: a Column that changes is refused now.
    changing = transport.of(withColumns).nondeterministic(withColumns)
    for name, (expression, what) in new.items():
        if name in changing:
            raise PlanError(
                f"{what}: the Column {expression} is not deterministic ({changing[name]}): a "
                "micro-batch Spark runs again after a failure, and a replay, must give the same "
                "panes; compute a deterministic value instead (e.g. a hash of the row's columns)"
            )
    added = tuple((name, e) for name, (e, _) in new.items())
    return replace(source, df=withColumns, computed=source.computed + added)


def _computedWindows(source: Source, assigner: ComputedWindows) -> tuple[Source, ComputedWindows]:
    """The source with the hidden column of `assigner`'s bounds (``array<bigint>`` of epoch
    milliseconds, start and end by turns), which Spark computes from the user's Columns, and
    the assigner naming it."""
    F = transport.of(source.df).functions()  # Columns of the DataFrame's kind: classic or Connect

    def column(value: Any) -> Any:
        return F.col(value) if isinstance(value, str) else value

    many = assigner.windows is not None
    given = (
        {"windows": assigner.windows} if many else {"start": assigner.start, "end": assigner.end}
    )
    signature = "ComputedWindows.ofMany(windows)" if many else "ComputedWindows.of(start, end)"
    try:
        types = source.df.select(*[column(v).alias(k) for k, v in given.items()]).schema
    except Exception as e:  # Spark's analysis error, whichever session raised it
        raise ValueError(
            f"{signature}: the Columns do not resolve against the input's columns "
            f"{source.df.columns}: {_firstLine(e)}"
        ) from e
    for name in given:
        dataType = types[name].dataType
        wanted = (
            isinstance(dataType, ArrayType)
            and isinstance(dataType.elementType, StructType)
            and all(
                f in dataType.elementType.fieldNames()
                and isinstance(dataType.elementType[f].dataType, TimestampType)
                for f in ("start", "end")
            )
            if many
            else isinstance(dataType, TimestampType)
        )
        if not wanted:
            need = "an array of struct<start: timestamp, end: timestamp>" if many else "a timestamp"
            raise TypeError(
                f"{signature}: {name} is {dataType.simpleString()}, but it must be {need}; make "
                "milliseconds timestamps with F.timestamp_millis(...), a date one with "
                "F.to_timestamp(...)"
            )
    if many:
        bounds = F.flatten(
            F.transform(
                column(assigner.windows),
                lambda w: F.array(F.unix_millis(w["start"]), F.unix_millis(w["end"])),
            )
        )
    else:
        bounds = F.array(F.unix_millis(column(assigner.start)), F.unix_millis(column(assigner.end)))
    name = computedName(bounds)
    source = withComputed(source, [(name, bounds, signature)])
    return source, replace(assigner, column=name)


def walk(trigger: Trigger | None) -> list[Trigger]:
    """`trigger` and every trigger inside it, outermost first."""
    if trigger is None:
        return []
    out = [trigger]
    for child in trigger.children:
        out.extend(walk(child))
    return out


def ansi(df: DataFrame) -> bool:
    """Spark's ANSI mode when the pipeline is built (as Spark fixes it when it analyses a
    query): it decides what an overflowing sum gives.
    """
    return str(df.sparkSession.conf.get("spark.sql.ansi.enabled", "true")).lower() == "true"


def _firstLine(error: Exception) -> str:
    """An error's first line (Spark's analysis errors run on for pages), or its type's name."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
