"""The pipeline families whose checkpoints every sparkwin release from 0.4.0 on writes, and which
every later release must resume with an uninterrupted run's results (docs/DESIGN.md, "State
outlives releases"; tests/test_compat.py).

Each family is a pipeline over one input schema and a script of micro-batches (one JSON file a
batch, read one at a time), of which a release runs the first ``stopAt`` and stops: windows open,
timers pending, late data still to come. Only the public API of the oldest release that writes a
family may be used here (``since``), since that release's package runs this file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sparkwin as sw

SCHEMA = "user string, amount long, ts long, part int"


def row(user: str, amount: int, ts: int | None, part: int = 0) -> dict[str, Any]:
    return {"user": user, "amount": amount, "ts": ts, "part": part}


# Out of order, late within allowed lateness and beyond it, a bad record, and a last row far
# ahead that closes everything. The first three batches leave windows of 10-20 s open with their
# timers pending; the rest brings late rows for windows that fired before the stop.
EVENTS = [
    [row("a", 1, 1000), row("b", 2, 1500), row("a", 3, 2500)],
    [row("a", 4, 11000), row("b", 5, 3000), row("a", 99, None)],
    [row("c", 6, 12000), row("a", 7, 14000), row("b", 8, 9000)],
    [row("a", 9, 21500), row("c", 10, 4000), row("b", 11, 12500)],
    [row("b", 12, 16000), row("a", 13, 25000), row("c", 14, 13000)],
    [row("a", 15, 27000), row("b", 16, 1000)],
    [row("z", 0, 100_000)],
]

# Two channels (Kafka partitions, say): channel 1 lags and then goes quiet, so idleness decides
# when the windows close.
CHANNELS = [
    [row("a", 1, 1000, 0), row("b", 2, 1500, 1)],
    [row("a", 3, 11000, 0), row("b", 4, 2500, 1)],
    [row("a", 5, 13000, 0), row("c", 6, 12000, 0)],
    [row("b", 7, 21000, 0), row("c", 8, 4000, 1)],
    [row("a", 9, 24000, 0)],
    [row("z", 0, 100_000, 0)],
]

# Processing-time families: what fires depends on when batches ran, which the checkpoint's
# offset log records; the amounts make every pane's sum name its rows, and a batch's event
# times are its number of seconds.
ARRIVALS = [
    [row(u, amount, 1000 * (i + 1)) for u, amount in batch]
    for i, batch in enumerate(
        [
            [("a", 1), ("b", 2), ("a", 4)],
            [("a", 8), ("b", 16)],
            [("c", 32)],
            [("a", 64), ("c", 128)],
            [("b", 256)],
            [("a", 512)],
        ]
    )
]


def bounded(ms: int) -> Any:
    return sw.WatermarkStrategy.forBoundedOutOfOrderness(ms)


@dataclass(frozen=True)
class Family:
    name: str
    build: Callable[[Any], sw.Pipeline]
    batches: list[list[dict[str, Any]]]
    stopAt: int
    since: str = "0.4.0"
    # Processing time decides results: they are checked against the harness fed the batches at
    # the times the checkpoint records, and such a query runs on an interval trigger.
    processingTime: bool = False
    trigger: dict[str, str] | None = None
    # How long a query lingers after its input, for processing-time windows to fire.
    linger: float = 0.0
    channel: str | None = None
    idleTimeout: int | None = None
    chained: bool = False
    # Runs a user's Java classes (examples/extending), built against the installed jar.
    extending: bool = False


def _events(df: Any) -> Any:
    return sw.stream(df, "ts", watermark=bounded(1000))


def tumblingCount(df: Any) -> sw.Pipeline:
    return (
        _events(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .trigger(sw.CountTrigger.of(2))
        .allowedLateness(5_000)
        .sideOutputLateData("late")
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )


def slidingCount(df: Any) -> sw.Pipeline:
    return (
        _events(df)
        .keyBy("user")
        .window(sw.SlidingEventTimeWindows.of(10_000, 5_000))
        .trigger(sw.CountTrigger.of(2))
        .aggregate(sw.agg.count(), sw.agg.max("amount"))
    )


def tumblingSliced(df: Any) -> sw.Pipeline:
    # Default trigger, no lateness, order-blind aggregates: sliced, combined before the shuffle.
    return (
        _events(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"), sw.agg.avg("amount"))
    )


def slidingSliced(df: Any) -> sw.Pipeline:
    return (
        _events(df)
        .keyBy("user")
        .window(sw.SlidingEventTimeWindows.of(10_000, 5_000))
        .aggregate(sw.agg.sum("amount"), sw.agg.min("amount"))
    )


def sessionsLate(df: Any) -> sw.Pipeline:
    return (
        _events(df)
        .keyBy("user")
        .window(sw.EventTimeSessionWindows.withGap(3_000))
        .allowedLateness(5_000)
        .sideOutputLateData("late")
        .aggregate(sw.agg.count(), sw.agg.sum("amount"), sw.agg.collectList("amount"))
    )


def sessionsFast(df: Any) -> sw.Pipeline:
    # Fixed gap, default trigger, no lateness: the session algorithm without a merging set.
    return (
        _events(df)
        .keyBy("user")
        .window(sw.EventTimeSessionWindows.withGap(3_000))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )


def beamPanes(df: Any) -> sw.Pipeline:
    trigger = (
        sw.AfterWatermark.pastEndOfWindow()
        .withEarlyFirings(sw.AfterPane.elementCountAtLeast(2))
        .withLateFirings(sw.AfterPane.elementCountAtLeast(1))
    )
    return (
        _events(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .trigger(trigger)
        .allowedLateness(5_000)
        .accumulationMode("discarding")
        .sideOutputLateData("late")
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )


def storm(df: Any) -> sw.Pipeline:
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forStormLag(1000))
        .keyBy("user")
        .window(sw.StormWindows.of(10_000, 5_000))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )


def chained(df: Any) -> sw.Pipeline:
    first = (
        _events(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(5_000))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )
    return (
        sw.stream(first.toDF(), "window_time")
        .windowAll(sw.TumblingEventTimeWindows.of(10_000))
        .aggregate(sw.agg.sum("count"), sw.agg.sum("sum_amount"))
    )


def channelsIdle(df: Any) -> sw.Pipeline:
    return (
        sw.stream(df, "ts", channel="part", watermark=bounded(1000).withIdleness(3_000))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )


def processingWindows(df: Any) -> sw.Pipeline:
    return (
        sw.stream(df, "ts")
        .keyBy("user")
        .window(sw.TumblingProcessingTimeWindows.of(2_000))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )


def processingTrigger(df: Any) -> sw.Pipeline:
    # Event-time windows that fire early every 1.5 s of processing time, and on time.
    return (
        sw.stream(df, "ts", watermark=bounded(1000))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .trigger(
            sw.AfterWatermark.pastEndOfWindow().withEarlyFirings(
                sw.AfterProcessingTime.pastFirstElementInPane().plusDelayOf(1_500)
            )
        )
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )


EXTENDING = "com.example.sparkwin"


def javaTriggerAndAggregate(df: Any) -> sw.Pipeline:
    # A user's trigger (fires every n elements and at the window's end) and aggregate, in Java.
    return (
        _events(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .trigger(sw.jvm.trigger(f"{EXTENDING}.CountOrEndTrigger", {"n": 2}))
        .allowedLateness(5_000)
        .aggregate(
            sw.agg.count(),
            sw.jvm.aggregate(f"{EXTENDING}.WeightedMean", ["amount", "amount"]).alias("weighted"),
        )
    )


FAMILIES = [
    Family("tumbling_count", tumblingCount, EVENTS, 3),
    Family("sliding_count", slidingCount, EVENTS, 3),
    Family("tumbling_sliced", tumblingSliced, EVENTS, 3),
    Family("sliding_sliced", slidingSliced, EVENTS, 3),
    Family("sessions_late", sessionsLate, EVENTS, 3),
    Family("sessions_fast", sessionsFast, EVENTS, 3),
    Family("beam_panes", beamPanes, EVENTS, 3),
    Family("storm", storm, EVENTS, 3),
    Family("chained", chained, EVENTS, 3, chained=True),
    Family(
        "channels_idle",
        channelsIdle,
        CHANNELS,
        3,
        processingTime=True,
        trigger={"processingTime": "500 milliseconds"},
        linger=4.0,
        channel="part",
        idleTimeout=3_000,
    ),
    Family(
        "processing_windows",
        processingWindows,
        ARRIVALS,
        3,
        processingTime=True,
        trigger={"processingTime": "500 milliseconds"},
        linger=3.0,
    ),
    Family(
        "processing_trigger",
        processingTrigger,
        [*ARRIVALS, [row("z", 0, 100_000)]],
        3,
        processingTime=True,
        trigger={"processingTime": "500 milliseconds"},
        linger=2.0,
    ),
    Family("java_extension", javaTriggerAndAggregate, EVENTS, 3, since="0.5.0", extending=True),
]

BY_NAME = {f.name: f for f in FAMILIES}
