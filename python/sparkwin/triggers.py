"""Triggers: when a window's pane is emitted. Flink's triggers and Beam's composable ones.

Every trigger is an immutable value: it compares equal to a trigger built the same way, prints
as the code that built it, knows whether it can merge its state (session windows need that)
and which input columns it reads, and turns into the TRIGGER part of the plan
(`docs/plan.md`). Triggers here never decide anything at run time and never call Spark or the
JVM; the JVM builds the executors from the plan.

Example::

    from sparkwin import AfterWatermark, AfterPane, PurgingTrigger, CountTrigger
    PurgingTrigger.of(CountTrigger.of(100))
    AfterWatermark.pastEndOfWindow().withEarlyFirings(AfterPane.elementCountAtLeast(2))
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from sparkwin._plan.columns import ColumnOrName, columnInput, columnInputs, shown
from sparkwin._plan.contract import listLimit
from sparkwin._plan.durations import toBool, toColumnNames, toCount, toMillis, toThreshold
from sparkwin.agg import PaneCondition

__all__ = [
    "AfterAll",
    "AfterEach",
    "AfterFirst",
    "AfterPane",
    "AfterProcessingTime",
    "AfterWatermark",
    "AggregateTrigger",
    "ConditionTrigger",
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountTrigger",
    "DeltaTrigger",
    "EventTimeTrigger",
    "NeverTrigger",
    "OrFinally",
    "ProcessingTimeTrigger",
    "ProcessingTimeoutTrigger",
    "PurgingTrigger",
    "Repeatedly",
    "Trigger",
]

# AfterAll keeps one bit per child in a long on the JVM: the contract says how many.
_AFTER_ALL_MAX: int = listLimit("trigger", "afterAll", "triggers")[1] or 62


class Trigger(ABC):
    """Base class of every trigger. Build triggers with their factories (`CountTrigger.of`,
    `AfterWatermark.pastEndOfWindow`, ...), not with their constructors.
    """

    @property
    def children(self) -> tuple[Trigger, ...]:
        """The triggers this one wraps or combines, in plan order (empty for leaf triggers).

        Example::

            PurgingTrigger.of(CountTrigger.of(3)).children  # (CountTrigger.of(3),)
        """
        return ()

    @property
    def canMerge(self) -> bool:
        """True when the trigger can merge its state, as session (merging) windows require.

        Leaf triggers can, except `DeltaTrigger` and `ProcessingTimeoutTrigger`; a trigger that
        wraps or combines others can when all of them can.

        Example::

            DeltaTrigger.of(5.0, "x").canMerge                    # False
            PurgingTrigger.of(CountTrigger.of(3)).canMerge        # True
        """
        return all(child.canMerge for child in self.children)

    @property
    def referencedColumns(self) -> frozenset[str]:
        """The input columns this trigger (or any trigger inside it) reads.

        Example::

            AfterFirst.of(DeltaTrigger.of(1.0, "x"), CountTrigger.of(9)).referencedColumns
            # frozenset({'x'})
        """
        columns: frozenset[str] = frozenset()
        for child in self.children:
            columns = columns | child.referencedColumns
        return columns

    def orFinally(self, until: Trigger) -> OrFinally:
        """Beam's ``orFinally``: fire as this trigger does until `until` fires, then fire a last
        time and finish the window.

        Example::

            Repeatedly.forever(AfterPane.elementCountAtLeast(10)).orFinally(
                AfterWatermark.pastEndOfWindow())
        """
        return OrFinally(self, _checkTrigger(until, "until"))

    @abstractmethod
    def jsonValue(self) -> dict[str, Any]:
        """The TRIGGER fragment of the plan, as a JSON-ready dict.

        Example::

            CountTrigger.of(100).jsonValue()  # {'kind': 'count', 'count': 100}
        """

    @abstractmethod
    def __repr__(self) -> str: ...


def _checkTrigger(value: object, name: str) -> Trigger:
    if not isinstance(value, Trigger):
        raise TypeError(
            f"{name} must be a sparkwin trigger such as CountTrigger.of(100) or "
            f"AfterWatermark.pastEndOfWindow(), got {type(value).__name__} {value!r}"
        )
    return value


def _checkTriggers(values: tuple[object, ...], name: str, factory: str) -> tuple[Trigger, ...]:
    if len(values) == 1 and isinstance(values[0], list | tuple):
        raise TypeError(
            f"{factory} takes its triggers as separate arguments, e.g. "
            f"{factory}(AfterPane.elementCountAtLeast(2), AfterWatermark.pastEndOfWindow()); "
            f"unpack the list with *{name}"
        )
    if len(values) < 2:
        raise ValueError(
            f"{factory} needs at least two {name}, got {len(values)}; with one trigger use it "
            "directly"
        )
    return tuple(_checkTrigger(v, f"{name}[{i}]") for i, v in enumerate(values))


# ---------------------------------------------------------------------------------------------
# Flink


@dataclass(frozen=True, repr=False)
class EventTimeTrigger(Trigger):
    """Fires once the watermark passes the window's end, and again for every element that
    arrives within the allowed lateness: the default trigger of event-time windows.
    """

    @staticmethod
    def create() -> EventTimeTrigger:
        """Flink's ``EventTimeTrigger.create()``.

        Example::

            stream.keyBy("user").window(TumblingEventTimeWindows.of(60_000)).trigger(
                EventTimeTrigger.create())
        """
        return EventTimeTrigger()

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "eventTime"}

    def __repr__(self) -> str:
        return "EventTimeTrigger.create()"


@dataclass(frozen=True, repr=False)
class ProcessingTimeTrigger(Trigger):
    """Fires when processing time passes the window's end: the default trigger of
    processing-time windows.
    """

    @staticmethod
    def create() -> ProcessingTimeTrigger:
        """Flink's ``ProcessingTimeTrigger.create()``.

        Example::

            windowed.trigger(ProcessingTimeTrigger.create())
        """
        return ProcessingTimeTrigger()

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "processingTime"}

    def __repr__(self) -> str:
        return "ProcessingTimeTrigger.create()"


@dataclass(frozen=True, repr=False)
class NeverTrigger(Trigger):
    """Never fires: the default trigger of `GlobalWindows`."""

    @staticmethod
    def create() -> NeverTrigger:
        """A trigger that never fires (Flink's ``GlobalWindows.NeverTrigger``).

        Example::

            windowed.trigger(NeverTrigger.create())
        """
        return NeverTrigger()

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "never"}

    def __repr__(self) -> str:
        return "NeverTrigger.create()"


@dataclass(frozen=True, repr=False)
class CountTrigger(Trigger):
    """Fires every time the window has received `count` more elements."""

    count: int

    @staticmethod
    def of(count: int) -> CountTrigger:
        """Fire at every `count`-th element of a window (`count` > 0).

        Example::

            keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(100))
        """
        return CountTrigger(toCount(count, "count"))

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "count", "count": self.count}

    def __repr__(self) -> str:
        return f"CountTrigger.of({self.count})"


@dataclass(frozen=True, repr=False)
class ConditionTrigger(Trigger):
    """Fires when an element satisfies a condition: a boolean column, or a Spark Column that
    Spark computes for every element before the engine sees it (no Python runs per event)."""

    column: str
    # The condition when it is a Spark Column: (hidden column name, Column, what), else empty.
    computed: tuple[tuple[str, Any, str], ...] = field(default=(), compare=False)

    @staticmethod
    def of(condition: ColumnOrName) -> ConditionTrigger:
        """Fire the window when an element arrives whose `condition` is true (false and null do
        not fire): a "checkout", an end-of-batch marker, an amount over a limit. It keeps no
        state, so it merges (sessions) and nests anywhere: as early firings of
        `AfterWatermark`, inside `Repeatedly`, `AfterFirst`, `orFinally`; wrap it in
        `PurgingTrigger` to purge.

        Example::

            keyed.window(EventTimeSessionWindows.withGap(1_800_000)).trigger(
                ConditionTrigger.of(F.col("event") == "checkout"))
        """
        column, computed = columnInput(
            condition, "ConditionTrigger.of(condition)", "F.col('event') == 'checkout'"
        )
        return ConditionTrigger(column, computed)

    @property
    def referencedColumns(self) -> frozenset[str]:
        return frozenset({self.column})

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "condition", "column": self.column}

    def __repr__(self) -> str:
        return f"ConditionTrigger.of({shown(self.column, self.computed)})"


@dataclass(frozen=True, repr=False)
class AggregateTrigger(Trigger):
    """Fires when a running aggregate of the window's elements since this trigger's last firing
    satisfies a comparison: ``sw.agg.sum("amount") >= 1000``. The JVM keeps the aggregate as
    trigger state (no Python per event); it restarts after each firing."""

    condition: PaneCondition

    @staticmethod
    def of(condition: PaneCondition) -> AggregateTrigger:
        """Fire when `condition`, a comparison of ``sw.agg.count``, ``sum``, ``min``, ``max`` or
        ``avg`` (of a name or a Spark Column, with an optional ``filter=``) with a number,
        holds after an element; the aggregate then starts again. ``sw.agg.count() >= 100``
        fires as ``CountTrigger.of(100)``; ``sw.agg.sum("amount") >= 1000`` each time another
        1000 has come in. An element the aggregate does not take (filtered out, null) does not
        fire. Merged sessions add their running aggregates up, so it works on sessions; it
        nests anywhere (early firings, ``Repeatedly``, ``AfterFirst``, ``orFinally``).

        Example::

            keyed.window(TumblingEventTimeWindows.of(3_600_000)).trigger(
                AggregateTrigger.of(sw.agg.sum(F.col("price") * F.col("qty")) >= 10_000))
        """
        if not isinstance(condition, PaneCondition):
            raise TypeError(
                "AggregateTrigger.of(condition): condition must compare an aggregate with a "
                "number, e.g. sw.agg.sum('amount') >= 1000, got "
                f"{type(condition).__name__} {condition!r}"
            )
        return AggregateTrigger(condition)

    @property
    def computed(self) -> tuple[tuple[str, Any, str], ...]:
        """The Spark Columns its aggregate reads, for the builder to add."""
        return self.condition.aggregate.computed

    @property
    def referencedColumns(self) -> frozenset[str]:
        return frozenset(column for _, column in self.condition.aggregate.inputs)

    def jsonValue(self) -> dict[str, Any]:
        a = self.condition.aggregate
        return {
            "kind": "aggregate",
            "fn": a.fn,
            "column": a.column,
            "filter": a.where,
            "op": self.condition.op,
            "threshold": self.condition.threshold,
        }

    def __repr__(self) -> str:
        return f"AggregateTrigger.of({self.condition!r})"


@dataclass(frozen=True, repr=False)
class ContinuousEventTimeTrigger(Trigger):
    """Fires every `intervalMs` of event time (watermark progress) while the window is open."""

    intervalMs: int

    @staticmethod
    def of(interval: Any) -> ContinuousEventTimeTrigger:
        """Fire every `interval` of event time (``timedelta`` or int milliseconds, > 0).

        Example::

            windowed.trigger(ContinuousEventTimeTrigger.of(timedelta(seconds=10)))
        """
        return ContinuousEventTimeTrigger(toMillis(interval, "interval"))

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "continuousEventTime", "intervalMs": self.intervalMs}

    def __repr__(self) -> str:
        return f"ContinuousEventTimeTrigger.of({self.intervalMs})"


@dataclass(frozen=True, repr=False)
class ContinuousProcessingTimeTrigger(Trigger):
    """Fires every `intervalMs` of processing time while the window is open."""

    intervalMs: int

    @staticmethod
    def of(interval: Any) -> ContinuousProcessingTimeTrigger:
        """Fire every `interval` of processing time (``timedelta`` or int milliseconds, > 0).

        Example::

            windowed.trigger(ContinuousProcessingTimeTrigger.of(timedelta(seconds=10)))
        """
        return ContinuousProcessingTimeTrigger(toMillis(interval, "interval"))

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "continuousProcessingTime", "intervalMs": self.intervalMs}

    def __repr__(self) -> str:
        return f"ContinuousProcessingTimeTrigger.of({self.intervalMs})"


@dataclass(frozen=True, repr=False)
class DeltaTrigger(Trigger):
    """Fires when an element is more than `threshold` away from the element of the last
    firing: the absolute difference of one numeric column or Spark Column, the Euclidean
    distance over several, or with `relative` one value's change as a fraction of its value at
    the last firing. It cannot merge, so it does not work with session windows.
    """

    threshold: float
    columns: tuple[str, ...]
    relative: bool = False
    # The Spark Columns among `columns`: (hidden column name, Column, what).
    computed: tuple[tuple[str, Any, str], ...] = field(default=(), compare=False)

    @staticmethod
    def of(threshold: float, *columns: ColumnOrName, relative: bool = False) -> DeltaTrigger:
        """Fire when the distance over the numeric `columns` (names or Spark Columns) exceeds
        `threshold` (>= 0); with `relative`, when one column's value moved by more than
        `threshold` times its value at the last firing (0.05: 5%).

        Example::

            keyed.window(GlobalWindows.create()).trigger(DeltaTrigger.of(5.0, "price"))
            keyed.window(GlobalWindows.create()).trigger(
                DeltaTrigger.of(0.05, F.col("bid") + F.col("ask"), relative=True))
        """
        names, computed = columnInputs(columns, "DeltaTrigger.of(columns)")
        names = toColumnNames(names, "columns", "DeltaTrigger.of")
        if toBool(relative, "relative") and len(names) != 1:
            raise ValueError(
                f"DeltaTrigger.of(relative=True) reads one column, got {len(names)}; give one "
                "value, e.g. DeltaTrigger.of(0.05, 'price', relative=True)"
            )
        return DeltaTrigger(toThreshold(threshold, "threshold"), names, relative, computed)

    @property
    def canMerge(self) -> bool:
        return False

    @property
    def referencedColumns(self) -> frozenset[str]:
        return frozenset(self.columns)

    def jsonValue(self) -> dict[str, Any]:
        value = {"kind": "delta", "threshold": self.threshold, "columns": list(self.columns)}
        return {**value, "relative": True} if self.relative else value

    def __repr__(self) -> str:
        args = ", ".join([repr(self.threshold), *(shown(c, self.computed) for c in self.columns)])
        return f"DeltaTrigger.of({args}{', relative=True' if self.relative else ''})"


@dataclass(frozen=True, repr=False)
class PurgingTrigger(Trigger):
    """Turns every firing of `nested` into fire-and-purge: each pane starts empty."""

    nested: Trigger

    @staticmethod
    def of(trigger: Trigger) -> PurgingTrigger:
        """Purge the window's contents whenever `trigger` fires.

        Example::

            keyed.window(GlobalWindows.create()).trigger(PurgingTrigger.of(CountTrigger.of(100)))
        """
        return PurgingTrigger(_checkTrigger(trigger, "trigger"))

    @property
    def children(self) -> tuple[Trigger, ...]:
        return (self.nested,)

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "purging", "nested": self.nested.jsonValue()}

    def __repr__(self) -> str:
        return f"PurgingTrigger.of({self.nested!r})"


@dataclass(frozen=True, repr=False)
class ProcessingTimeoutTrigger(Trigger):
    """Wraps `nested` and also fires once `timeoutMs` of processing time has passed since the
    first element after the last firing (or since the latest element, with
    `resetTimerOnNewRecord`). It cannot merge, so it does not work with session windows.
    """

    nested: Trigger
    timeoutMs: int
    resetTimerOnNewRecord: bool = False
    shouldClearOnTimeout: bool = True

    @staticmethod
    def of(
        trigger: Trigger,
        timeout: Any,
        resetTimerOnNewRecord: bool = False,
        shouldClearOnTimeout: bool = True,
    ) -> ProcessingTimeoutTrigger:
        """Flink's ``ProcessingTimeoutTrigger.of``: `trigger`, plus a firing after `timeout`
        (``timedelta`` or int milliseconds, > 0) of processing time.

        Example::

            windowed.trigger(ProcessingTimeoutTrigger.of(CountTrigger.of(100),
                                                         timedelta(seconds=30)))
        """
        return ProcessingTimeoutTrigger(
            _checkTrigger(trigger, "trigger"),
            toMillis(timeout, "timeout"),
            toBool(resetTimerOnNewRecord, "resetTimerOnNewRecord"),
            toBool(shouldClearOnTimeout, "shouldClearOnTimeout"),
        )

    @property
    def children(self) -> tuple[Trigger, ...]:
        return (self.nested,)

    @property
    def canMerge(self) -> bool:
        return False

    def jsonValue(self) -> dict[str, Any]:
        return {
            "kind": "processingTimeout",
            "nested": self.nested.jsonValue(),
            "timeoutMs": self.timeoutMs,
            "resetTimerOnNewRecord": self.resetTimerOnNewRecord,
            "shouldClearOnTimeout": self.shouldClearOnTimeout,
        }

    def __repr__(self) -> str:
        args = [repr(self.nested), str(self.timeoutMs)]
        if self.resetTimerOnNewRecord:
            args.append("resetTimerOnNewRecord=True")
        if not self.shouldClearOnTimeout:
            args.append("shouldClearOnTimeout=False")
        return f"ProcessingTimeoutTrigger.of({', '.join(args)})"


# ---------------------------------------------------------------------------------------------
# Beam


@dataclass(frozen=True, repr=False)
class AfterWatermark(Trigger):
    """Beam's ``AfterWatermark``: the on-time pane when the watermark passes the window's end,
    with optional early firings before it and late firings after it (each repeats).
    """

    early: Trigger | None = None
    late: Trigger | None = None

    @staticmethod
    def pastEndOfWindow() -> AfterWatermark:
        """Fire when the watermark passes the end of the window.

        Example::

            windowed.trigger(AfterWatermark.pastEndOfWindow())
        """
        return AfterWatermark()

    def withEarlyFirings(self, trigger: Trigger) -> AfterWatermark:
        """A copy that also fires whenever `trigger` fires before the on-time pane.

        Example::

            AfterWatermark.pastEndOfWindow().withEarlyFirings(AfterPane.elementCountAtLeast(2))
        """
        return AfterWatermark(_checkTrigger(trigger, "trigger"), self.late)

    def withLateFirings(self, trigger: Trigger) -> AfterWatermark:
        """A copy that also fires whenever `trigger` fires after the on-time pane (late data
        within the allowed lateness).

        Example::

            AfterWatermark.pastEndOfWindow().withLateFirings(AfterPane.elementCountAtLeast(1))
        """
        return AfterWatermark(self.early, _checkTrigger(trigger, "trigger"))

    @property
    def children(self) -> tuple[Trigger, ...]:
        return tuple(t for t in (self.early, self.late) if t is not None)

    def jsonValue(self) -> dict[str, Any]:
        return {
            "kind": "afterWatermark",
            "early": None if self.early is None else self.early.jsonValue(),
            "late": None if self.late is None else self.late.jsonValue(),
        }

    def __repr__(self) -> str:
        text = "AfterWatermark.pastEndOfWindow()"
        if self.early is not None:
            text += f".withEarlyFirings({self.early!r})"
        if self.late is not None:
            text += f".withLateFirings({self.late!r})"
        return text


@dataclass(frozen=True, repr=False)
class AfterProcessingTime(Trigger):
    """Beam's ``AfterProcessingTime``: fires once processing time reaches the arrival of the
    pane's first element plus `delayMs`.
    """

    delayMs: int = 0

    @staticmethod
    def pastFirstElementInPane() -> AfterProcessingTime:
        """Fire once the pane's first element has arrived (add a delay with `plusDelayOf`).

        Example::

            windowed.trigger(AfterProcessingTime.pastFirstElementInPane().plusDelayOf(60_000))
        """
        return AfterProcessingTime()

    def plusDelayOf(self, delay: Any) -> AfterProcessingTime:
        """A copy that waits `delay` longer (``timedelta`` or int milliseconds, >= 0); delays
        add up, as in Beam.

        Example::

            AfterProcessingTime.pastFirstElementInPane().plusDelayOf(timedelta(minutes=1))
        """
        return AfterProcessingTime(self.delayMs + toMillis(delay, "delay", allowZero=True))

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "afterProcessingTime", "delayMs": self.delayMs}

    def __repr__(self) -> str:
        text = "AfterProcessingTime.pastFirstElementInPane()"
        if self.delayMs:
            text += f".plusDelayOf({self.delayMs})"
        return text


@dataclass(frozen=True, repr=False)
class AfterPane(Trigger):
    """Beam's ``AfterPane``: fires once the pane holds at least `count` elements."""

    count: int

    @staticmethod
    def elementCountAtLeast(count: int) -> AfterPane:
        """Fire once the pane has at least `count` (> 0) elements.

        Example::

            windowed.trigger(Repeatedly.forever(AfterPane.elementCountAtLeast(2)))
        """
        return AfterPane(toCount(count, "count"))

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "afterPane", "count": self.count}

    def __repr__(self) -> str:
        return f"AfterPane.elementCountAtLeast({self.count})"


@dataclass(frozen=True, repr=False)
class Repeatedly(Trigger):
    """Beam's ``Repeatedly``: fires whenever `nested` fires, restarting it each time it
    finishes; never finishes by itself.
    """

    nested: Trigger

    @staticmethod
    def forever(trigger: Trigger) -> Repeatedly:
        """Repeat `trigger` for the whole life of the window.

        Example::

            windowed.trigger(Repeatedly.forever(AfterPane.elementCountAtLeast(10)))
        """
        return Repeatedly(_checkTrigger(trigger, "trigger"))

    @property
    def children(self) -> tuple[Trigger, ...]:
        return (self.nested,)

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "repeatedly", "nested": self.nested.jsonValue()}

    def __repr__(self) -> str:
        return f"Repeatedly.forever({self.nested!r})"


@dataclass(frozen=True, repr=False)
class AfterEach(Trigger):
    """Beam's ``AfterEach``: runs its triggers one after another, moving to the next when the
    current one finishes; finishes after the last.
    """

    triggers: tuple[Trigger, ...]

    @staticmethod
    def inOrder(*triggers: Trigger) -> AfterEach:
        """Run the (at least two) `triggers` in order.

        Example::

            AfterEach.inOrder(AfterPane.elementCountAtLeast(2), AfterWatermark.pastEndOfWindow())
        """
        return AfterEach(_checkTriggers(triggers, "triggers", "AfterEach.inOrder"))

    @property
    def children(self) -> tuple[Trigger, ...]:
        return self.triggers

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "afterEach", "triggers": [t.jsonValue() for t in self.triggers]}

    def __repr__(self) -> str:
        return f"AfterEach.inOrder({', '.join(repr(t) for t in self.triggers)})"


@dataclass(frozen=True, repr=False)
class AfterFirst(Trigger):
    """Beam's ``AfterFirst``: fires and finishes as soon as any of its triggers fires."""

    triggers: tuple[Trigger, ...]

    @staticmethod
    def of(*triggers: Trigger) -> AfterFirst:
        """Fire when the first of the (at least two) `triggers` fires.

        Example::

            AfterFirst.of(AfterPane.elementCountAtLeast(100),
                          AfterProcessingTime.pastFirstElementInPane().plusDelayOf(60_000))
        """
        return AfterFirst(_checkTriggers(triggers, "triggers", "AfterFirst.of"))

    @property
    def children(self) -> tuple[Trigger, ...]:
        return self.triggers

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "afterFirst", "triggers": [t.jsonValue() for t in self.triggers]}

    def __repr__(self) -> str:
        return f"AfterFirst.of({', '.join(repr(t) for t in self.triggers)})"


@dataclass(frozen=True, repr=False)
class AfterAll(Trigger):
    """Beam's ``AfterAll``: fires and finishes once every one of its triggers has fired."""

    triggers: tuple[Trigger, ...]

    @staticmethod
    def of(*triggers: Trigger) -> AfterAll:
        """Fire once all of the (at least two, at most 62) `triggers` have fired.

        Example::

            AfterAll.of(AfterPane.elementCountAtLeast(10), AfterWatermark.pastEndOfWindow())
        """
        checked = _checkTriggers(triggers, "triggers", "AfterAll.of")
        if len(checked) > _AFTER_ALL_MAX:
            raise ValueError(
                f"AfterAll.of takes at most {_AFTER_ALL_MAX} triggers, got {len(checked)}; "
                "nest AfterAll.of(...) inside another to combine more"
            )
        return AfterAll(checked)

    @property
    def children(self) -> tuple[Trigger, ...]:
        return self.triggers

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "afterAll", "triggers": [t.jsonValue() for t in self.triggers]}

    def __repr__(self) -> str:
        return f"AfterAll.of({', '.join(repr(t) for t in self.triggers)})"


@dataclass(frozen=True, repr=False)
class OrFinally(Trigger):
    """Beam's ``orFinally``: fires as `main` does until `until` fires, then fires a last time
    and finishes. Build it with ``main.orFinally(until)``.
    """

    main: Trigger
    until: Trigger

    @property
    def children(self) -> tuple[Trigger, ...]:
        return (self.main, self.until)

    def jsonValue(self) -> dict[str, Any]:
        return {
            "kind": "orFinally",
            "main": self.main.jsonValue(),
            "until": self.until.jsonValue(),
        }

    def __repr__(self) -> str:
        return f"{self.main!r}.orFinally({self.until!r})"
