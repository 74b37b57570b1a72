"""Nexmark's events (an auction site: persons, auctions, bids), generated from the benchmark's
published model with numpy: 10M events in seconds, the same events for the same seed.

The model, as the Nexmark papers and the Beam and Flink Nexmark suites describe it:
- Events are numbered 0, 1, 2, ...; each block of 50 holds 1 person, then 3 auctions, then 46
  bids, so event `e` is a person when ``e % 50 == 0``, an auction when it is 1 to 3, else a bid.
  Person and auction ids grow with the event number (the first of each is 1000).
- A fixed population is active: bids and auctions name one of the last `activePeople` persons,
  and bids go to one of the last `inFlightAuctions` auctions (the open ones).
- Hot items: half the bids (``1 / hotAuctionRatio``) go to the hot auction (the newest whose
  index is a multiple of the ratio), three in four bids come from the hot bidder and three in
  four auctions from the hot seller (the newest person whose index is a multiple of the ratio).
- Event time is ``baseTime + e * 1000 / rate`` milliseconds: `rate` events per second of event
  time; `disorderMs` > 0 moves each event earlier by up to that much (out of order, as a source
  with several partitions delivers), so a watermark bound of at least `disorderMs` loses none.
  `granuleMs` rounds times down to a multiple of it after the base time (the benchmark's 7 ms
  keeps two bids from ever being exactly a 10 s session gap apart, where Spark's own sessions
  and Flink's disagree on whether they meet).
- Prices are log-uniform from 1 to 1,000,000 dollars, in cents, as Nexmark draws them.

Nothing here is copied: this module is written from that description. Differences from the
reference generators: no `extra` padding strings, hot bidders and sellers are the newest person
of their ratio (never one not yet created), bids never name an auction before it is created,
and out-of-order times are a random delay per event (not Beam's reordered groups).

Command line (the examples' and benchmark's data)::

    python examples/nexmark/generator.py /tmp/nexmark --events 1000000 --files 10
    python examples/nexmark/generator.py --kafka localhost:9092 --topic nexmark --partitions 4
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

PERSON_SHARE, AUCTION_SHARE, BID_SHARE = 1, 3, 46
BLOCK = PERSON_SHARE + AUCTION_SHARE + BID_SHARE  # 50 events
FIRST_PERSON_ID = 1000
FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID = 10
CATEGORIES = 5
BASE_TIME_MS = 1_700_000_000_000  # 2023-11-14T22:13:20Z
FLUSH_ID = -1  # the person, auction and bidder of the flush events (writeParquet)
FLUSH_AFTER_MS = 86_400_000

PERSON, AUCTION, BID = "person", "auction", "bid"
FIRST_NAMES = np.array(["Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah"])
LAST_NAMES = np.array(["Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith"])
CITIES = np.array(["Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend"])
STATES = np.array(["AZ", "CA", "ID", "OR", "WA", "WY"])
CHANNELS = np.array(["Google", "Facebook", "Baidu", "Apple"])

# The events' columns: one flat table, each kind's fields null on the other kinds' rows.
SCHEMA = pa.schema(
    [
        ("event_type", pa.string()),
        ("event_number", pa.int64()),
        ("ts", pa.timestamp("ms", tz="UTC")),
        # person
        ("person_id", pa.int64()),
        ("name", pa.string()),
        ("email", pa.string()),
        ("city", pa.string()),
        ("state", pa.string()),
        # auction
        ("auction_id", pa.int64()),
        ("seller", pa.int64()),
        ("category", pa.int64()),
        ("initial_bid", pa.int64()),
        ("reserve", pa.int64()),
        ("expires", pa.timestamp("ms", tz="UTC")),
        # bid
        ("auction", pa.int64()),
        ("bidder", pa.int64()),
        ("price", pa.int64()),
        ("channel", pa.string()),
    ]
)
# The same columns for Spark (`spark.readStream.schema(SCHEMA_DDL)`).
_SPARK_TYPES = {
    pa.string(): "string",
    pa.int64(): "long",
    pa.timestamp("ms", tz="UTC"): "timestamp",
}
SCHEMA_DDL = ", ".join(f"{f.name} {_SPARK_TYPES[f.type]}" for f in SCHEMA)


@dataclass(frozen=True)
class NexmarkConfig:
    """What the generator makes: `events` events from event number `firstEvent`."""

    events: int
    seed: int = 0
    rate: int = 10_000  # events per second of event time
    baseTime: int = BASE_TIME_MS
    firstEvent: int = 0
    activePeople: int = 1000
    inFlightAuctions: int = 100
    hotAuctionRatio: int = 2
    hotBiddersRatio: int = 4
    hotSellersRatio: int = 4
    disorderMs: int = 0
    granuleMs: int = 1  # event times are base time + a multiple of this

    def eventTime(self, eventNumber: np.ndarray) -> np.ndarray:
        """Milliseconds since the epoch of each event number, before any disorder."""
        return self.baseTime + (eventNumber * 1000) // self.rate


def _pickRecent(rng: np.random.Generator, newest: np.ndarray, population: int) -> np.ndarray:
    """For each row, a uniform pick among indices ``newest - population + 1 .. newest``
    (never below 0)."""
    low = np.maximum(newest - population + 1, 0)
    return low + (rng.random(len(newest)) * (newest - low + 1)).astype(np.int64)


def _prices(rng: np.random.Generator, n: int) -> np.ndarray:
    """Log-uniform prices in cents: 10^(u * 6) dollars, so 1 to a million dollars."""
    return np.rint(np.power(10.0, rng.random(n) * 6.0) * 100.0).astype(np.int64)


def _masked(values: np.ndarray, keep: np.ndarray, type_: pa.DataType) -> pa.Array:
    return pa.array(values, type=type_, mask=~keep)


def _stringsAt(words: np.ndarray, picks: np.ndarray, keep: np.ndarray) -> pa.Array:
    """`words[picks]` where `keep`, null elsewhere."""
    return pc.take(pa.array(words, type=pa.string()), pa.array(picks, mask=~keep))


def generate(config: NexmarkConfig) -> pa.Table:
    """The events, in event-number order (their arrival order), as one table of `SCHEMA`.

    Example::

        events = generate(NexmarkConfig(events=1_000_000, seed=7))
        events.num_rows  # 1000000
    """
    if config.events < 0 or config.rate <= 0:
        raise ValueError("events must be >= 0 and rate > 0")
    rng = np.random.default_rng(config.seed)
    n = config.events
    number = config.firstEvent + np.arange(n, dtype=np.int64)
    block, offset = np.divmod(number, BLOCK)
    isPerson = offset < PERSON_SHARE
    isAuction = ~isPerson & (offset < PERSON_SHARE + AUCTION_SHARE)
    isBid = ~isPerson & ~isAuction
    # The newest person and auction (0-based) existing at each event.
    newestPerson = block * PERSON_SHARE + np.minimum(offset, PERSON_SHARE - 1)
    newestAuction = block * AUCTION_SHARE + np.clip(offset - PERSON_SHARE, -1, AUCTION_SHARE - 1)

    ts = config.eventTime(number)
    if config.disorderMs > 0:
        ts = ts - rng.integers(0, config.disorderMs + 1, n, dtype=np.int64)
    if config.granuleMs > 1:
        ts = config.baseTime + (ts - config.baseTime) // config.granuleMs * config.granuleMs

    # Every draw is made for every row (vectorised; deterministic whatever the kinds).
    hotAuction = rng.integers(0, config.hotAuctionRatio, n) == 0
    hotBidder = rng.integers(0, config.hotBiddersRatio, n) > 0
    hotSeller = rng.integers(0, config.hotSellersRatio, n) > 0
    openAuction = _pickRecent(rng, np.maximum(newestAuction, 0), config.inFlightAuctions)
    activePerson = _pickRecent(rng, newestPerson, config.activePeople)
    bidAuction = np.where(
        hotAuction,
        (np.maximum(newestAuction, 0) // config.hotAuctionRatio) * config.hotAuctionRatio,
        openAuction,
    )
    bidder = np.where(
        hotBidder, (newestPerson // config.hotBiddersRatio) * config.hotBiddersRatio, activePerson
    )
    seller = np.where(
        hotSeller, (newestPerson // config.hotSellersRatio) * config.hotSellersRatio, activePerson
    )
    price = _prices(rng, n)
    initialBid = _prices(rng, n)
    reserve = initialBid + _prices(rng, n)
    category = FIRST_CATEGORY_ID + rng.integers(0, CATEGORIES, n)
    # An auction stays open while the next `inFlightAuctions` auctions are created.
    lengthMs = (config.inFlightAuctions * BLOCK // AUCTION_SHARE) * 1000 // config.rate
    first = rng.integers(0, len(FIRST_NAMES), n)
    last = rng.integers(0, len(LAST_NAMES), n)
    place = rng.integers(0, len(CITIES), n)
    channel = rng.integers(0, len(CHANNELS), n)

    personId = FIRST_PERSON_ID + newestPerson
    names = _stringsAt(FIRST_NAMES, first, isPerson)
    surnames = _stringsAt(LAST_NAMES, last, isPerson)
    name = pc.binary_join_element_wise(names, surnames, " ")
    email = pc.binary_join_element_wise(
        pc.utf8_lower(names), pc.cast(pa.array(personId), pa.string()), "@"
    )
    email = pc.binary_join_element_wise(email, pa.scalar("example.com"), ".")
    kinds = pc.take(
        pa.array([PERSON, AUCTION, BID]), pa.array(np.where(isPerson, 0, np.where(isAuction, 1, 2)))
    )
    table = pa.table(
        {
            "event_type": kinds,
            "event_number": pa.array(number),
            "ts": pa.array(ts).cast(pa.timestamp("ms", tz="UTC")),
            "person_id": _masked(personId, isPerson, pa.int64()),
            "name": name,
            "email": email,
            "city": _stringsAt(CITIES, place, isPerson),
            "state": _stringsAt(STATES, place, isPerson),
            "auction_id": _masked(FIRST_AUCTION_ID + newestAuction, isAuction, pa.int64()),
            "seller": _masked(FIRST_PERSON_ID + seller, isAuction, pa.int64()),
            "category": _masked(category, isAuction, pa.int64()),
            "initial_bid": _masked(initialBid, isAuction, pa.int64()),
            "reserve": _masked(reserve, isAuction, pa.int64()),
            "expires": _masked(ts + lengthMs, isAuction, pa.int64()).cast(
                pa.timestamp("ms", tz="UTC")
            ),
            "auction": _masked(FIRST_AUCTION_ID + bidAuction, isBid, pa.int64()),
            "bidder": _masked(FIRST_PERSON_ID + bidder, isBid, pa.int64()),
            "price": _masked(price, isBid, pa.int64()),
            "channel": _stringsAt(CHANNELS, channel, isBid),
        }
    )
    return table.cast(SCHEMA)


def flushEvents(events: pa.Table) -> pa.Table:
    """A person, an auction and a bid a day after the last event, all of id `FLUSH_ID`: a stream
    that reads them moves its watermark past every real window, so every window closes."""
    last = pc.max(events["ts"]).as_py() if events.num_rows else None
    at = (int(last.timestamp() * 1000) if last is not None else BASE_TIME_MS) + FLUSH_AFTER_MS
    rows: dict[str, list[Any]] = {f.name: [None] * 3 for f in SCHEMA}
    rows["event_type"] = [PERSON, AUCTION, BID]
    rows["event_number"] = [-1, -1, -1]
    rows["ts"] = [at] * 3
    rows["person_id"][0] = FLUSH_ID
    rows["name"][0] = "flush"
    rows["auction_id"][1] = rows["seller"][1] = FLUSH_ID
    rows["auction"][2] = rows["bidder"][2] = FLUSH_ID
    rows["price"][2] = 0
    columns = {
        f.name: pa.array(
            rows[f.name], type=pa.int64() if f.type == pa.timestamp("ms", tz="UTC") else f.type
        )
        for f in SCHEMA
    }
    return pa.table(columns).cast(SCHEMA)


def writeParquet(events: pa.Table, directory: str, files: int, flush: bool = False) -> list[str]:
    """The events as `files` parquet files (micro-batches, in arrival order) in `directory`,
    each file's modification time one second after the previous one's, so a file stream reads
    them in order. With `flush`, two more files each hold `flushEvents` (Spark moves its
    watermark after the batch that saw them; the second batch lets it act on that). Returns the
    paths."""
    os.makedirs(directory, exist_ok=True)
    parts = [events.slice(lo, hi - lo) for lo, hi in _bounds(events.num_rows, files)]
    if flush:
        parts += [flushEvents(events)] * 2
    paths = []
    for i, part in enumerate(parts):
        path = os.path.join(directory, f"part-{i:05d}.parquet")
        pq.write_table(part, path)
        os.utime(path, (1_000_000_000 + i, 1_000_000_000 + i))
        paths.append(path)
    return paths


def _bounds(n: int, files: int) -> list[tuple[int, int]]:
    edges = np.linspace(0, n, max(files, 1) + 1, dtype=np.int64)
    return [(int(edges[i]), int(edges[i + 1])) for i in range(len(edges) - 1)]


def toKafka(spark: Any, events: pa.Table, servers: str, topic: str, partitions: int) -> int:
    """Produce the events to a Kafka topic as JSON values (the columns of `SCHEMA`, times as
    epoch milliseconds), event `e` to partition ``e % partitions`` and keyed by its event
    number, with a Spark batch write (Spark's Kafka connector must be on the session). Returns
    the number of records.

    Example::

        toKafka(spark, generate(NexmarkConfig(events=10_000)), "localhost:9092", "nexmark", 4)
    """
    from pyspark.sql import functions as F  # noqa: N812

    df = spark.createDataFrame(events.to_pandas(), SCHEMA_DDL)
    values = [F.unix_millis(c).alias(c) if c in ("ts", "expires") else F.col(c) for c in df.columns]
    (
        df.select(
            (F.col("event_number") % partitions).cast("int").alias("partition"),
            F.col("event_number").cast("string").alias("key"),
            F.to_json(F.struct(*values)).alias("value"),
        )
        .write.format("kafka")
        .option("kafka.bootstrap.servers", servers)
        .option("topic", topic)
        .save()
    )
    return events.num_rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Generate Nexmark events.")
    parser.add_argument("directory", nargs="?", help="write parquet files here")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10, help="parquet files (micro-batches)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rate", type=int, default=10_000, help="events per second")
    parser.add_argument("--disorder", type=int, default=0, help="out of order by up to MS")
    parser.add_argument("--flush", action="store_true", help="end with flush events")
    parser.add_argument("--kafka", default=None, help="bootstrap servers: produce to Kafka")
    parser.add_argument("--topic", default="nexmark")
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args(argv)
    config = NexmarkConfig(
        events=args.events, seed=args.seed, rate=args.rate, disorderMs=args.disorder
    )
    events = generate(config)
    if args.directory:
        paths = writeParquet(events, args.directory, args.files, flush=args.flush)
        print(f"{events.num_rows} events in {len(paths)} files under {args.directory}")
    if args.kafka:
        import sparkwin as sw

        spark = sw.session(
            "nexmark-generator",
            **{"spark.jars.packages": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"},
        )
        count = toKafka(spark, events, args.kafka, args.topic, args.partitions)
        print(f"{count} events to topic {args.topic} ({args.partitions} partitions)")
    if not args.directory and not args.kafka:
        parser.error("give a directory, --kafka SERVERS, or both")


if __name__ == "__main__":
    main()
