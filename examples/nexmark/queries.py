"""Nexmark's windowed queries as sparkwin pipelines.

Each query takes the events as one DataFrame (`generator.SCHEMA`: a flat table, one row per
person, auction or bid, batch or streaming) and gives its result as a DataFrame. Window sizes
are those of the Nexmark project's Flink SQL queries (the original paper used minutes to hours:
see examples/nexmark/README.md). Where sparkwin has no operator for a step (q8's join) the
step is plain Spark on a window result, and the docstring says so.

    q5   hot items: bids per auction in sliding 10 s windows every 2 s, then the auctions
         with the most bids in each window (a chained pipeline)
    q7   highest bid in each 10 s tumbling window
    q8   new users: persons who opened an auction in the 10 s tumbling window they joined in
    q11  user sessions: bids per bidder session (10 s gap); `q11Beam` is Beam's variant
    q12  processing-time windows: bids per bidder in 10 s of processing time
"""

from __future__ import annotations

from datetime import timedelta as td

from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812

import sparkwin as sw
from sparkwin.pipeline import Pipeline

# The Nexmark project's Flink tables: `WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND`.
BOUND = td(seconds=4)


def watermark(bound: td = BOUND) -> sw.WatermarkStrategy:
    return sw.WatermarkStrategy.forBoundedOutOfOrderness(bound)


BID_COLUMNS = ("auction", "bidder", "price", "channel", "ts")


def bids(events: DataFrame, *columns: str) -> DataFrame:
    """The bids, with `columns` (default: all of a bid's). A pipeline that reads few columns is
    given only those: Spark then shuffles only what the windows need."""
    return events.where(F.col("event_type") == "bid").select(*(columns or BID_COLUMNS))


def q5HotItems(events: DataFrame, bound: td = BOUND) -> DataFrame:
    """The auctions with the most bids in each sliding window (10 s, every 2 s).

    First pipeline: bids per auction and window. Second, chained on its results (it inherits
    the watermark): each first-stage window ends on a 2 s boundary and its result's event time
    (`window_time`, end - 1 ms) falls in the 2 s tumbling window that ends with it, so that
    window gathers every auction's count of one sliding window and keeps the auctions at the
    largest count (`maxByAll`: ties all kept, as Nexmark's SQL keeps them).
    """
    perAuction = (
        sw.stream(bids(events, "auction", "ts"), "ts", watermark=watermark(bound))
        .keyBy("auction")
        .window(sw.SlidingEventTimeWindows.of(td(seconds=10), td(seconds=2)))
        .aggregate(sw.agg.count().alias("num"))
    )
    perWindow = (
        sw.stream(perAuction.toDF().select("window_time", "num", "auction"), "window_time")
        .windowAll(sw.TumblingEventTimeWindows.of(td(seconds=2)))
        .aggregate(
            sw.agg.max("num").alias("num"), sw.agg.maxByAll("auction", "num").alias("hottest")
        )
    )
    return perWindow.toDF().select(
        F.explode("hottest").alias("auction"),
        "num",
        (F.col("window_end") - F.expr("INTERVAL 10 SECONDS")).alias("window_start"),
        "window_end",
    )


def q7HighestBids(events: DataFrame, bound: td = BOUND) -> Pipeline:
    """The bids at the highest price in each 10 s tumbling window (over all bids: `windowAll`),
    ties all kept: one `maxByAll` over each bid as a struct, where Nexmark's SQL joins the
    window's `max(price)` back to the bids."""
    bid = F.struct("auction", "bidder", "price", "ts").alias("bid")
    return (
        sw.stream(
            bids(events, "auction", "bidder", "price", "ts").select("price", "ts", bid),
            "ts",
            watermark=watermark(bound),
        )
        .windowAll(sw.TumblingEventTimeWindows.of(td(seconds=10)))
        .aggregate(sw.agg.maxByAll("bid", "price").alias("bids"))
    )


def q7(events: DataFrame, bound: td = BOUND, checkpointLocation: str | None = None) -> DataFrame:
    """q7: the highest bids of each 10 s window, one row per bid. ``checkpointLocation``: the
    stream's, as ``toDF`` takes it."""
    return (
        q7HighestBids(events, bound)
        .toDF(checkpointLocation=checkpointLocation)
        .select(F.explode("bids").alias("b"), "window_start", "window_end")
        .select("b.auction", "b.price", "b.bidder", "b.ts", "window_start", "window_end")
    )


def sellersAndPersons(events: DataFrame) -> DataFrame:
    """New persons and new auctions, both keyed by the person: a person's id, an auction's
    seller."""
    return events.where(F.col("event_type").isin("person", "auction")).select(
        F.coalesce("person_id", "seller").alias("person"), "name", "auction_id", "ts"
    )


def q8NewUsers(
    events: DataFrame, bound: td = BOUND, checkpointLocation: str | None = None
) -> DataFrame:
    """Persons who joined and opened an auction in the same 10 s tumbling window.

    Nexmark joins a window of persons with a window of auctions on id = seller. sparkwin has no
    join, so both kinds go into one pipeline keyed by the person (a co-group): each window
    counts the person's own event and their auctions, and plain Spark keeps the windows that
    have both. `auctions` is how many they opened there.
    """
    perPerson = (
        sw.stream(sellersAndPersons(events), "ts", watermark=watermark(bound))
        .keyBy("person")
        .window(sw.TumblingEventTimeWindows.of(td(seconds=10)))
        .aggregate(
            sw.agg.max("name").alias("name"),
            sw.agg.count("name").alias("joined"),
            sw.agg.count("auction_id").alias("auctions"),
        )
    )
    return (
        perPerson.toDF(checkpointLocation=checkpointLocation)
        .where((F.col("joined") > 0) & (F.col("auctions") > 0))
        .select("person", "name", "window_start", "window_end", "auctions")
    )


def q11UserSessions(
    events: DataFrame, bound: td = BOUND, checkpointLocation: str | None = None
) -> DataFrame:
    """Bids per bidder session: a session ends after 10 s without a bid by that bidder."""
    return (
        sw.stream(bids(events, "bidder", "ts"), "ts", watermark=watermark(bound))
        .keyBy("bidder")
        .window(sw.EventTimeSessionWindows.withGap(td(seconds=10)))
        .aggregate(sw.agg.count().alias("bid_count"))
        .toDF(checkpointLocation=checkpointLocation)
        .select("bidder", "bid_count", "window_start", "window_end")
    )


def q11Beam(
    events: DataFrame, every: int = 100, lateness: td = td(seconds=5), bound: td = BOUND
) -> DataFrame:
    """Beam's Query11: the same sessions, firing a pane every `every` bids of a session
    (`Repeatedly.forever(AfterPane.elementCountAtLeast(every))`), discarding what fired, and
    keeping sessions `lateness` past their end for late bids. Each row counts one pane."""
    return (
        sw.stream(bids(events, "bidder", "ts"), "ts", watermark=watermark(bound))
        .keyBy("bidder")
        .window(sw.EventTimeSessionWindows.withGap(td(seconds=10)))
        .trigger(sw.Repeatedly.forever(sw.AfterPane.elementCountAtLeast(every)))
        .accumulationMode("discarding")
        .allowedLateness(lateness)
        .aggregate(sw.agg.count().alias("bid_count"))
        .toDF()
        .select("bidder", "bid_count", "window_start", "window_end", "pane_index")
    )


def q12ProcessingTime(events: DataFrame) -> DataFrame:
    """Bids per bidder in 10 s tumbling windows of processing time (when the bids are read,
    whatever their event time). On a stream sparkwin's clock fires each window when its end
    comes, with or without an interval trigger."""
    return (
        sw.stream(bids(events, "bidder", "ts"), "ts")
        .keyBy("bidder")
        .window(sw.TumblingProcessingTimeWindows.of(td(seconds=10)))
        .aggregate(sw.agg.count().alias("bid_count"))
        .toDF()
        .select("bidder", "bid_count", "window_start", "window_end")
    )
