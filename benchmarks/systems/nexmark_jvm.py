"""Nexmark's queries in a JVM of their own: the Flink job (`FlinkNexmarkBench`) and sparkwin's
engine alone (`EngineBench nexmark`), each on binary files of the events a query needs, which
this module writes from the generated events.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benchmarks.systems import jvm
from benchmarks.systems.nexmark import BOUND_MS
from examples.nexmark import generator

AUCTION_BITS = 22  # q7's Flink records carry price << 22 | auction
CHANNELS = 8
JVM_SYSTEMS = {
    # The queries as DataStream jobs on a MiniCluster, parallelism = cores.
    "flink": jvm.JvmSystem(
        "flinkBench",
        "sparkwin.bench.FlinkNexmarkBench",
        "SPARKWIN_FLINK_CLASSPATH",
        after_bound=(str(os.cpu_count()),),
    ),
    "engine": jvm.JvmSystem(
        "bench", "sparkwin.bench.EngineBench", "SPARKWIN_BENCH_CLASSPATH", ("nexmark",)
    ),
}


def writeJvmInput(events: pa.Table, directory: str) -> None:
    """Each query's events for the JVM systems in run.py's binary layout (<i4 key, <i8 ts, <i8
    amount>), in arrival order, then one flush record per channel on a key of its own, a day
    later: the bids for q5, q7 and q11; for q8 the persons (amount 1 << 32) and the auctions
    (amount 1), keyed by the person."""
    bidRows = events.filter(pc.equal(events["event_type"], "bid"))
    ts = bidRows["ts"].cast(pa.int64()).to_numpy()
    auction = bidRows["auction"].to_numpy()
    bidder = bidRows["bidder"].to_numpy()
    price = bidRows["price"].to_numpy()
    flushTs = int(ts.max()) + generator.FLUSH_AFTER_MS
    if (auction >= 1 << AUCTION_BITS).any():
        raise ValueError("too many auctions for q7's packed records")
    newUsers = events.filter(pc.is_in(events["event_type"], pa.array(["person", "auction"])))
    isPerson = pc.equal(newUsers["event_type"], "person").to_numpy(zero_copy_only=False)
    person = pc.coalesce(newUsers["person_id"], newUsers["seller"]).to_numpy()
    columns = {
        "q5": (ts, auction, np.ones_like(auction)),
        "q7": (ts, np.zeros_like(auction), (price << AUCTION_BITS) | auction),
        "q8": (
            newUsers["ts"].cast(pa.int64()).to_numpy(),
            person,
            np.where(isPerson, 1 << 32, 1).astype(np.int64),
        ),
        "q11": (ts, bidder, np.ones_like(bidder)),
    }
    record = np.dtype([("key", "<i4"), ("ts", "<i8"), ("amount", "<i8")])
    for query, (ts, key, amount) in columns.items():
        rows = np.empty(len(ts) + CHANNELS, dtype=record)
        rows["key"][: len(ts)], rows["ts"][: len(ts)], rows["amount"][: len(ts)] = key, ts, amount
        rows["key"][len(ts) :] = int(key.max()) + 1
        rows["ts"][len(ts) :] = flushTs
        rows["amount"][len(ts) :] = 0
        rows.tofile(os.path.join(directory, f"{query}.bin"))


def runJvm(system: str, directory: str, chosen: list[str]) -> dict[str, dict]:
    """The Flink job or the engine alone on the files writeJvmInput wrote; per query the JSON
    line it printed (seconds, fingerprint)."""
    return {r["query"]: r for r in jvm.run(JVM_SYSTEMS[system], directory, BOUND_MS, *chosen)}
