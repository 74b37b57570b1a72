"""The benchmark events and workloads, shared by every system so they see the same input.

Events: `keys` keys, timestamps about 2 ms apart and up to `BOUND_MS` out of order, all
multiples of 7 ms (so no two events are ever exactly a session gap apart, where engines'
boundary conventions could differ), amounts 0..99. A final flush event on its own key, a day
later, closes every window in every system; results for the flush key are left out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BOUND_MS = 1995
BASE_MS = 7 * 242_857_142_857  # a multiple of 7 near 2023-11-14
GRANULE = 7


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str  # tumbling | sliding | session
    size_ms: int = 0
    slide_ms: int = 0
    gap_ms: int = 0
    aggregate: str = "sum"  # sum(amount) or count()


WORKLOADS = [
    Workload("tumbling 1m sum", "tumbling", size_ms=60_000, slide_ms=60_000),
    Workload("sliding 10m/1m sum", "sliding", size_ms=600_000, slide_ms=60_000),
    Workload("session 30s count", "session", gap_ms=30_000, aggregate="count"),
]


@dataclass(frozen=True)
class Events:
    directory: str  # parquet files, one per micro-batch, in arrival order
    binary: str  # the same events for the engine alone: <i4 key, <i8 ts, <i8 amount>
    count: int  # real events (without the flush event)
    keys: int
    flush_key: str


def generate(directory: str, n: int, keys: int, files: int, seed: int) -> Events:
    rng = np.random.default_rng(seed)
    key = rng.integers(0, keys, n, dtype=np.int32)
    ticks = (np.arange(n, dtype=np.int64) * 2) // GRANULE
    jitter = rng.integers(0, BOUND_MS // GRANULE + 1, n, dtype=np.int64)
    ts = BASE_MS + GRANULE * (ticks - jitter)
    amount = rng.integers(0, 100, n, dtype=np.int64)
    flush_ts = int(ts.max()) + GRANULE * (86_400_000 // GRANULE)
    key = np.append(key, np.int32(keys))
    ts = np.append(ts, flush_ts)
    amount = np.append(amount, 0)

    os.makedirs(directory, exist_ok=True)
    record = np.dtype([("key", "<i4"), ("ts", "<i8"), ("amount", "<i8")])
    rows = np.empty(n + 1, dtype=record)
    rows["key"], rows["ts"], rows["amount"] = key, ts, amount
    binary = os.path.join(directory, "events.bin")
    rows.tofile(binary)

    parquet = os.path.join(directory, "parquet")
    os.makedirs(parquet, exist_ok=True)
    names = pa.compute.binary_join_element_wise("k", pa.array(key).cast(pa.string()), "")
    table = pa.table(
        {
            "key": names,
            "ts": pa.array(ts).cast(pa.timestamp("ms", tz="UTC")),
            "amount": pa.array(amount),
        }
    )
    bounds = np.linspace(0, n, files + 1, dtype=np.int64)
    base = 1_000_000_000
    for i in range(files):
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        if i == files - 1:
            hi = n + 1  # the flush event arrives last
        path = os.path.join(parquet, f"part-{i:04d}.parquet")
        pq.write_table(table.slice(lo, hi - lo), path)
        os.utime(path, (base + i, base + i))
    # Spark moves its watermark after the batch that saw the flush event; one more batch with
    # data (a second flush event) lets every system close its windows before the run ends,
    # without depending on whether Spark runs a batch without data before processAllAvailable()
    # returns.
    path = os.path.join(parquet, f"part-{files:04d}.parquet")
    pq.write_table(table.slice(n, 1), path)
    os.utime(path, (base + files, base + files))
    return Events(parquet, binary, n, keys, f"k{keys}")
