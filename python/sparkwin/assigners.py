"""Window assigners: which windows an element belongs to. Flink's assigners under Flink's names,
plus Storm's count-or-duration windows.

Each assigner is an immutable value that knows whether it works in event time, whether its
windows merge (sessions), which trigger it gets by default, and how it is written in the
ASSIGNER part of the plan (`docs/plan.md`). Assigners never assign anything in Python and never
reach the JVM; a dynamic session gap column is checked against the schema by `sparkwin.stream`.

Example::

    from datetime import timedelta
    from sparkwin import TumblingEventTimeWindows, EventTimeSessionWindows, StormWindows, Count
    TumblingEventTimeWindows.of(timedelta(minutes=1))
    EventTimeSessionWindows.withGap(timedelta(seconds=30))
    StormWindows.of(Count(3), timedelta(seconds=10)).withLag(5_000)
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Self

from sparkwin._plan.durations import toMillis
from sparkwin.triggers import EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger, Trigger

__all__ = [
    "CalendarWindows",
    "ComputedWindows",
    "Count",
    "EventTimeSessionWindows",
    "GlobalWindows",
    "ProcessingTimeSessionWindows",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "StormWindows",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "WindowAssigner",
]


class WindowAssigner(ABC):
    """Base class of the assigners; build them with their factories (`of`, `withGap`,
    `create`).
    """

    @property
    @abstractmethod
    def isEventTime(self) -> bool:
        """True when windows follow event time (watermarks and lateness apply).

        Example::

            TumblingEventTimeWindows.of(60_000).isEventTime  # True
        """

    @property
    def isMerging(self) -> bool:
        """True for session windows, whose windows merge; they need triggers that can merge.

        Example::

            EventTimeSessionWindows.withGap(30_000).isMerging  # True
        """
        return False

    @property
    def defaultTrigger(self) -> Trigger:
        """The trigger used when the pipeline names none, as in Flink: `EventTimeTrigger` for
        event time, `ProcessingTimeTrigger` for processing time, `NeverTrigger` for
        `GlobalWindows`.

        Example::

            TumblingProcessingTimeWindows.of(1_000).defaultTrigger
            # ProcessingTimeTrigger.create()
        """
        return EventTimeTrigger.create() if self.isEventTime else ProcessingTimeTrigger.create()

    @property
    def referencedColumns(self) -> frozenset[str]:
        """The input columns the assigner reads: a dynamic session gap column, if any.

        Example::

            EventTimeSessionWindows.withDynamicGap("gap_ms").referencedColumns
            # frozenset({'gap_ms'})
        """
        return frozenset()

    @abstractmethod
    def jsonValue(self) -> dict[str, Any]:
        """The ASSIGNER fragment of the plan, as a JSON-ready dict.

        Example::

            TumblingEventTimeWindows.of(60_000).jsonValue()
            # {'kind': 'tumbling', 'sizeMs': 60000, 'offsetMs': 0, 'eventTime': True}
        """

    @abstractmethod
    def __repr__(self) -> str: ...


def _offsetSuffix(offsetMs: int) -> str:
    return f", offset={offsetMs}" if offsetMs else ""


# ---------------------------------------------------------------------------------------------
# Tumbling


@dataclass(frozen=True, repr=False)
class _Tumbling(WindowAssigner):
    sizeMs: int
    offsetMs: int = 0
    _eventTime: ClassVar[bool]

    @classmethod
    def of(cls, size: Any, offset: Any = 0) -> Self:
        """Windows of `size` (``timedelta`` or int milliseconds, > 0) aligned to the epoch
        shifted by `offset` (|offset| < size; e.g. a time-zone shift for daily windows).

        Example::

            TumblingEventTimeWindows.of(timedelta(days=1), offset=timedelta(hours=-8))
        """
        sizeMs = toMillis(size, "size")
        offsetMs = toMillis(offset, "offset", allowNegative=True)
        if abs(offsetMs) >= sizeMs:
            raise ValueError(
                f"offset must be smaller than size in absolute value (|offset| < size), got "
                f"offset {offsetMs} ms for size {sizeMs} ms; use offset % size instead"
            )
        return cls(sizeMs, offsetMs)

    @property
    def isEventTime(self) -> bool:
        return self._eventTime

    def jsonValue(self) -> dict[str, Any]:
        return {
            "kind": "tumbling",
            "sizeMs": self.sizeMs,
            "offsetMs": self.offsetMs,
            "eventTime": self._eventTime,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}.of({self.sizeMs}{_offsetSuffix(self.offsetMs)})"


class TumblingEventTimeWindows(_Tumbling):
    """Fixed, non-overlapping windows of event time: ``[start, start + size)``."""

    _eventTime = True


class TumblingProcessingTimeWindows(_Tumbling):
    """Fixed, non-overlapping windows of processing time: ``[start, start + size)``."""

    _eventTime = False


# ---------------------------------------------------------------------------------------------
# Sliding

# Windows per element a sliding assigner gives unless asked for more. The JVM's own limit for
# every plan is its rule's (PlanRules, asked when the window is set), not a copy here.
MAX_WINDOWS_PER_ELEMENT = 10_000


@dataclass(frozen=True, repr=False)
class _Sliding(WindowAssigner):
    sizeMs: int
    slideMs: int
    offsetMs: int = 0
    _eventTime: ClassVar[bool]

    @classmethod
    def of(
        cls,
        size: Any,
        slide: Any,
        offset: Any = 0,
        *,
        maxWindowsPerElement: int = MAX_WINDOWS_PER_ELEMENT,
    ) -> Self:
        """Windows of `size` starting every `slide` (both ``timedelta`` or int milliseconds,
        > 0; size need not be a multiple of slide), aligned to the epoch shifted by `offset`
        (|offset| < slide).

        Each element belongs to ``ceil(size / slide)`` windows, and each costs work and state:
        more than `maxWindowsPerElement` (default 10,000) is refused, so a typo such as a slide
        of 1 ms cannot stall a job. A larger `maxWindowsPerElement` allows more, up to the JVM's
        own limit for every plan (a million), which refuses the window when it is set.

        Example::

            SlidingEventTimeWindows.of(timedelta(minutes=10), timedelta(minutes=1))
        """
        sizeMs = toMillis(size, "size")
        slideMs = toMillis(slide, "slide")
        offsetMs = toMillis(offset, "offset", allowNegative=True)
        if isinstance(maxWindowsPerElement, bool) or not isinstance(maxWindowsPerElement, int):
            raise TypeError(
                f"maxWindowsPerElement must be an int, got {type(maxWindowsPerElement).__name__}"
            )
        if maxWindowsPerElement < 1:
            raise ValueError(f"maxWindowsPerElement must be 1 or more, got {maxWindowsPerElement}")
        perElement = -(-sizeMs // slideMs)
        if perElement > maxWindowsPerElement:
            raise ValueError(
                f"size {sizeMs} ms and slide {slideMs} ms give {perElement:,} windows per "
                f"element, more than maxWindowsPerElement={maxWindowsPerElement:,}: use a larger "
                "slide (or a smaller size), or pass a larger maxWindowsPerElement if you mean it"
            )
        if abs(offsetMs) >= slideMs:
            raise ValueError(
                f"offset must be smaller than slide in absolute value (|offset| < slide), got "
                f"offset {offsetMs} ms for slide {slideMs} ms; use offset % slide instead"
            )
        return cls(sizeMs, slideMs, offsetMs)

    @property
    def isEventTime(self) -> bool:
        return self._eventTime

    def jsonValue(self) -> dict[str, Any]:
        return {
            "kind": "sliding",
            "sizeMs": self.sizeMs,
            "slideMs": self.slideMs,
            "offsetMs": self.offsetMs,
            "eventTime": self._eventTime,
        }

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}.of({self.sizeMs}, {self.slideMs}{_offsetSuffix(self.offsetMs)})"
        )


class SlidingEventTimeWindows(_Sliding):
    """Overlapping windows of event time: every ``[s, s + size)`` with ``s`` stepping by slide."""

    _eventTime = True


class SlidingProcessingTimeWindows(_Sliding):
    """Overlapping windows of processing time, stepping by slide."""

    _eventTime = False


# ---------------------------------------------------------------------------------------------
# Sessions


@dataclass(frozen=True, repr=False)
class _Session(WindowAssigner):
    gapMs: int | None
    gapColumn: str | None = None
    _eventTime: ClassVar[bool]

    @classmethod
    def withGap(cls, gap: Any) -> Self:
        """Sessions that close after `gap` (``timedelta`` or int milliseconds, > 0) without
        elements; each element opens ``[t, t + gap)`` and overlapping windows merge.

        Example::

            keyed.window(EventTimeSessionWindows.withGap(timedelta(minutes=30)))
        """
        return cls(toMillis(gap, "gap"), None)

    @classmethod
    def withDynamicGap(cls, column: str) -> Self:
        """Sessions whose gap is read per element from `column`, an integral column of
        milliseconds (a non-positive gap sends the row to the error output).

        Example::

            keyed.window(EventTimeSessionWindows.withDynamicGap("gap_ms"))
        """
        if not isinstance(column, str):
            raise TypeError(
                f"column must be the name (str) of an integral column of milliseconds, got "
                f"{type(column).__name__} {column!r}"
            )
        if not column:
            raise ValueError("column must be a non-empty column name")
        return cls(None, column)

    @property
    def isEventTime(self) -> bool:
        return self._eventTime

    @property
    def isMerging(self) -> bool:
        return True

    @property
    def referencedColumns(self) -> frozenset[str]:
        return frozenset() if self.gapColumn is None else frozenset({self.gapColumn})

    def jsonValue(self) -> dict[str, Any]:
        return {
            "kind": "session",
            "gapMs": self.gapMs,
            "gapColumn": self.gapColumn,
            "eventTime": self._eventTime,
        }

    def __repr__(self) -> str:
        if self.gapColumn is not None:
            return f"{type(self).__name__}.withDynamicGap({self.gapColumn!r})"
        return f"{type(self).__name__}.withGap({self.gapMs})"


class EventTimeSessionWindows(_Session):
    """Session windows in event time: activity separated by gaps of inactivity."""

    _eventTime = True


class ProcessingTimeSessionWindows(_Session):
    """Session windows in processing time."""

    _eventTime = False


# ---------------------------------------------------------------------------------------------
# Global


@dataclass(frozen=True, repr=False)
class GlobalWindows(WindowAssigner):
    """Every element in one global window per key; it fires only through a trigger you set
    (its default trigger never fires).
    """

    @staticmethod
    def create() -> GlobalWindows:
        """The global window assigner.

        Example::

            keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(100))
        """
        return GlobalWindows()

    @property
    def isEventTime(self) -> bool:
        return False

    @property
    def defaultTrigger(self) -> Trigger:
        return NeverTrigger.create()

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "global"}

    def __repr__(self) -> str:
        return "GlobalWindows.create()"


# ---------------------------------------------------------------------------------------------
# Calendar


@dataclass(frozen=True, repr=False)
class CalendarWindows(WindowAssigner):
    """Windows of one calendar unit (a day, an ISO week from Monday, a month, a year) in a named
    time zone, starting at the local midnight that begins the unit, as Spark's ``date_trunc``
    gives it under that session time zone: across daylight saving a day is 23 or 25 hours.
    """

    unit: str
    zone: str
    eventTime: bool = True

    @staticmethod
    def days(zone: str = "UTC", *, eventTime: bool = True) -> CalendarWindows:
        """A window per calendar day in `zone` (a region ID such as ``"Europe/Amsterdam"``, an
        offset such as ``"+01:00"``); `eventTime` False: by processing time.

        Example::

            keyed.window(CalendarWindows.days("Europe/Amsterdam"))
        """
        return CalendarWindows._of("day", zone, eventTime)

    @staticmethod
    def weeks(zone: str = "UTC", *, eventTime: bool = True) -> CalendarWindows:
        """A window per ISO week (Monday to Sunday) in `zone`.

        Example::

            keyed.window(CalendarWindows.weeks("America/New_York"))
        """
        return CalendarWindows._of("week", zone, eventTime)

    @staticmethod
    def months(zone: str = "UTC", *, eventTime: bool = True) -> CalendarWindows:
        """A window per calendar month in `zone`.

        Example::

            keyed.window(CalendarWindows.months("Europe/Amsterdam"))
        """
        return CalendarWindows._of("month", zone, eventTime)

    @staticmethod
    def years(zone: str = "UTC", *, eventTime: bool = True) -> CalendarWindows:
        """A window per calendar year in `zone`.

        Example::

            keyed.window(CalendarWindows.years("Asia/Tokyo"))
        """
        return CalendarWindows._of("year", zone, eventTime)

    @staticmethod
    def _of(unit: str, zone: object, eventTime: object) -> CalendarWindows:
        if not isinstance(zone, str) or not zone:
            raise TypeError(
                f"CalendarWindows.{unit}s(zone): zone must be a time zone's name such as "
                f"'Europe/Amsterdam', got {type(zone).__name__} {zone!r}"
            )
        if not isinstance(eventTime, bool):
            raise TypeError(
                f"CalendarWindows.{unit}s(eventTime): eventTime must be a bool, got "
                f"{type(eventTime).__name__} {eventTime!r}"
            )
        return CalendarWindows(unit, zone, eventTime)  # the JVM checks the zone

    @property
    def isEventTime(self) -> bool:
        return self.eventTime

    def jsonValue(self) -> dict[str, Any]:
        return {
            "kind": "calendar",
            "unit": self.unit,
            "zone": self.zone,
            "eventTime": self.eventTime,
        }

    def __repr__(self) -> str:
        more = "" if self.eventTime else ", eventTime=False"
        return f"CalendarWindows.{self.unit}s({self.zone!r}{more})"


# ---------------------------------------------------------------------------------------------
# Computed from the row


@dataclass(frozen=True, repr=False)
class ComputedWindows(WindowAssigner):
    """Event-time windows computed from each row by Spark Columns: one window from a start and
    an end timestamp, or several from an array of ``struct<start, end>``. Spark computes them
    before the engine (no Python per event); the windows do not merge.
    """

    start: Any = None
    end: Any = None
    windows: Any = None
    # The hidden column of bounds the builder adds (``array<bigint>``), once it is built.
    column: str | None = None

    @staticmethod
    def of(start: Any, end: Any) -> ComputedWindows:
        """One window ``[start, end)`` per element, from two timestamp Columns (or column
        names); an empty window or a null bound sends the element to the ``errors`` output.

        Example::

            shift = F.col("shift_start")
            keyed.window(ComputedWindows.of(shift, shift + F.expr("INTERVAL 8 HOURS")))
        """
        return ComputedWindows(_timestampInput(start, "start"), _timestampInput(end, "end"))

    @staticmethod
    def ofMany(windows: Any) -> ComputedWindows:
        """Several windows per element: `windows` is an array of ``struct<start, end>`` of
        timestamps (an empty array: in no window, a counted drop).

        Example::

            pair = F.struct(F.col("a").alias("start"), F.col("b").alias("end"))
            keyed.window(ComputedWindows.ofMany(F.array(pair)))
        """
        return ComputedWindows(windows=_timestampInput(windows, "windows"))

    @property
    def isEventTime(self) -> bool:
        return True

    def jsonValue(self) -> dict[str, Any]:
        return {"kind": "computed", "column": self.column}

    def __repr__(self) -> str:
        if self.windows is not None:
            return f"ComputedWindows.ofMany({self.windows})"
        return f"ComputedWindows.of({self.start}, {self.end})"


def _timestampInput(value: Any, param: str) -> Any:
    from sparkwin._plan.columns import isColumn

    if isinstance(value, str) and value:
        return value
    if isColumn(value):
        return value
    raise TypeError(
        f"ComputedWindows: {param} must be a column name or a Spark Column, got "
        f"{type(value).__name__} {value!r}"
    )


# ---------------------------------------------------------------------------------------------
# Storm


@dataclass(frozen=True, repr=False)
class Count:
    """A Storm window length or sliding interval counted in elements (tuples), n > 0.

    Example::

        StormWindows.of(Count(100), Count(10))
    """

    n: int

    def __post_init__(self) -> None:
        if not isinstance(self.n, numbers.Integral) or isinstance(self.n, bool):
            raise TypeError(f"Count(n) needs an int n, got {type(self.n).__name__} {self.n!r}")
        if self.n <= 0:
            raise ValueError(f"Count(n) needs a positive n, got {self.n}")
        object.__setattr__(self, "n", int(self.n))

    def jsonValue(self) -> dict[str, Any]:
        """The plan's form of a count: ``{"count": n}``.

        Example::

            Count(3).jsonValue()  # {'count': 3}
        """
        return {"count": self.n}

    def __repr__(self) -> str:
        return f"Count({self.n})"


def _stormSize(value: Any, name: str) -> Count | int:
    """A Count, or a positive duration in milliseconds."""
    if isinstance(value, Count):
        return value
    try:
        return toMillis(value, name)
    except TypeError:
        raise TypeError(
            f"{name} must be Count(n) for a number of elements or a duration "
            f"(datetime.timedelta or int milliseconds), got {type(value).__name__} {value!r}"
        ) from None


def _stormSizeJson(size: Count | int) -> dict[str, Any]:
    return size.jsonValue() if isinstance(size, Count) else {"durationMs": size}


@dataclass(frozen=True, repr=False)
class StormWindows(WindowAssigner):
    """Storm's windows: a length and a sliding interval, each a `Count` of elements or a
    duration, with a lag that lets elements up to `lagMs` behind wait for a later window.
    Each window fires once, by Storm's own policy: Storm pipelines take no trigger, evictor
    or allowed lateness. On a stream with a timestamp they run in event time (Storm with a
    timestamp field); on one without (``sparkwin.stream(df)``), in arrival order: a count slide
    fires as its tuples arrive, a duration slide every interval of processing time, over the
    last `length` tuples or those that arrived in the last `length` ms (Storm's default mode).
    """

    length: Count | int
    slide: Count | int | None = None
    lagMs: int = 0
    # Set by a stream without a timestamp: Storm's default mode (arrival order, processing time).
    arrivalOrder: bool = False

    @staticmethod
    def of(length: Any, slide: Any = None) -> StormWindows:
        """Windows of `length` sliding by `slide` (None: tumbling, slide = length); each is a
        `Count(n)` or a duration (``timedelta`` or int milliseconds, > 0).

        Example::

            keyed.window(StormWindows.of(Count(3), timedelta(seconds=10)))
        """
        return StormWindows(
            _stormSize(length, "length"), None if slide is None else _stormSize(slide, "slide")
        )

    def withLag(self, lag: Any) -> StormWindows:
        """A copy whose windows let elements up to `lag` (``timedelta`` or int milliseconds,
        >= 0) out of order; it is also the default watermark's lag.

        Example::

            StormWindows.of(timedelta(minutes=1)).withLag(timedelta(seconds=5))
        """
        return replace(self, lagMs=toMillis(lag, "lag", allowZero=True))

    @property
    def isEventTime(self) -> bool:
        return not self.arrivalOrder

    def jsonValue(self) -> dict[str, Any]:
        return {
            "kind": "storm",
            "length": _stormSizeJson(self.length),
            "slide": None if self.slide is None else _stormSizeJson(self.slide),
            "lagMs": self.lagMs,
            "eventTime": not self.arrivalOrder,
        }

    def __repr__(self) -> str:
        text = f"StormWindows.of({self.length!r}"
        if self.slide is not None:
            text += f", {self.slide!r}"
        text += ")"
        if self.lagMs:
            text += f".withLag({self.lagMs})"
        return text
