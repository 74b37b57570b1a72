"""The benchmark events and workloads, shared by every system so they see the same input.

Events: `keys` keys, timestamps about 2 ms apart and up to `BOUND_MS` out of order, all
multiples of 7 ms (so no two events are ever exactly a session gap apart, where engines'
boundary conventions could differ), amounts 0..99. Final flush events on their own key (one per
channel), a day later, close every window in every system; results for the flush key are left
out. Each event has an input channel `part` (round robin over 8), read by channel workloads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute, which `import pyarrow` alone does not load
import pyarrow.parquet as pq

BOUND_MS = 1995
BASE_MS = 7 * 242_857_142_857  # a multiple of 7 near 2023-11-14
GRANULE = 7
CHANNELS = 8
LAG_MS = 600_000  # how far the lagging channel's event times are behind (the `lagged` column)


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str  # tumbling | sliding | session
    size_ms: int = 0
    slide_ms: int = 0
    gap_ms: int = 0
    aggregate: str = "sum"  # sum(amount) or count()
    channels: int = 0  # > 0: sparkwin reads per-channel watermarks (`channel="part"`)
    lagged: bool = False  # read `lagged` as the event time: channel 7 ten minutes behind


WORKLOADS = [
    Workload("tumbling 1m sum", "tumbling", size_ms=60_000, slide_ms=60_000),
    Workload("sliding 10m/1m sum", "sliding", size_ms=600_000, slide_ms=60_000),
    Workload("session 30s count", "session", gap_ms=30_000, aggregate="count"),
    # The tumbling workload over 8 channels, one ten minutes behind, with Flink's per-partition
    # watermarks: what channels cost, and what one global watermark drops.
    Workload(
        "tumbling 1m, 8 ch, 1 lagging",
        "tumbling",
        size_ms=60_000,
        slide_ms=60_000,
        channels=8,
        lagged=True,
    ),
]


@dataclass(frozen=True)
class Events:
    directory: str  # parquet files, one per micro-batch, in arrival order
    binary: str  # the same events for the engine alone: <i4 key, <i8 ts, <i8 amount>
    count: int  # real events (without the flush event)
    keys: int
    flush_key: str
    # tumbling 1 min sums over `lagged`, without the flush key: (windows, sum, sum of start s x
    # value), what a system that loses no event must give on the lagging workload
    lagged_fingerprint: tuple[int, int, int] = (0, 0, 0)


def generate(directory: str, n: int, keys: int, files: int, seed: int) -> Events:
    rng = np.random.default_rng(seed)
    key = rng.integers(0, keys, n, dtype=np.int32)
    ticks = (np.arange(n, dtype=np.int64) * 2) // GRANULE
    jitter = rng.integers(0, BOUND_MS // GRANULE + 1, n, dtype=np.int64)
    ts = BASE_MS + GRANULE * (ticks - jitter)
    amount = rng.integers(0, 100, n, dtype=np.int64)
    flush_ts = int(ts.max()) + GRANULE * (86_400_000 // GRANULE)
    # One flush event per channel: with per-channel watermarks every channel must move on.
    key = np.append(key, np.full(CHANNELS, keys, dtype=np.int32))
    ts = np.append(ts, np.full(CHANNELS, flush_ts, dtype=np.int64))
    amount = np.append(amount, np.zeros(CHANNELS, dtype=np.int64))
    part = np.append(np.arange(n, dtype=np.int32) % CHANNELS, np.arange(CHANNELS, dtype=np.int32))
    # Channel 7's real events happened ten minutes before they arrive (a backfill).
    lagged = ts - np.where((part == CHANNELS - 1) & (np.arange(len(ts)) < n), LAG_MS, 0)

    os.makedirs(directory, exist_ok=True)
    record = np.dtype([("key", "<i4"), ("ts", "<i8"), ("amount", "<i8")])
    rows = np.empty(n + CHANNELS, dtype=record)
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
            "lagged": pa.array(lagged).cast(pa.timestamp("ms", tz="UTC")),
            # The input channel (a Kafka partition), round robin in arrival order.
            "part": pa.array(part),
        }
    )
    bounds = np.linspace(0, n, files + 1, dtype=np.int64)
    base = 1_000_000_000
    for i in range(files):
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        if i == files - 1:
            hi = n + CHANNELS  # the flush events arrive last
        path = os.path.join(parquet, f"part-{i:04d}.parquet")
        pq.write_table(table.slice(lo, hi - lo), path)
        os.utime(path, (base + i, base + i))
    # Spark moves its watermark after the batch that saw the flush events; one more batch with
    # data (the flush events again) lets every system close its windows before the run ends,
    # without depending on whether Spark runs a batch without data before processAllAvailable()
    # returns.
    path = os.path.join(parquet, f"part-{files:04d}.parquet")
    pq.write_table(table.slice(n, CHANNELS), path)
    os.utime(path, (base + files, base + files))
    start = lagged[:n] // 60_000 * 60_000
    windows = len(np.unique(key[:n].astype(np.int64) * (1 << 40) + start // 60_000))
    weighted = int(np.sum((start // 1000) * amount[:n]))
    fingerprint = (windows, int(amount[:n].sum()), weighted)
    return Events(parquet, binary, n, keys, f"k{keys}", fingerprint)
