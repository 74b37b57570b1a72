"""Runs the Nexmark queries on generated events and prints a few rows of each.

    python examples/nexmark/run.py [--events 100000] [--stream]

Without `--stream` the queries read the events as a bounded DataFrame (what a stream gives
after all its data); with it, q5 streams the parquet files, one micro-batch each, to the
console.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import sparkwin as sw  # noqa: E402
from examples.nexmark import generator, queries  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description="Nexmark's windowed queries on sparkwin")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--stream", action="store_true", help="stream q5 from parquet files")
    args = parser.parse_args()
    spark = sw.session("nexmark", **{"spark.sql.session.timeZone": "UTC"})
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as scratch:
        config = generator.NexmarkConfig(events=args.events, seed=1, disorderMs=1000)
        generator.writeParquet(generator.generate(config), scratch, files=5, flush=args.stream)
        if args.stream:
            events = (
                spark.readStream.schema(generator.SCHEMA_DDL)
                .option("maxFilesPerTrigger", 1)
                .parquet(scratch)
            )
            query = (
                queries.q5HotItems(events)
                .writeStream.format("console")
                .option("truncate", False)
                .option("checkpointLocation", f"{scratch}/checkpoint")
                .start()
            )
            query.processAllAvailable()
            query.stop()
            return
        events = spark.read.parquet(scratch)
        results = {
            "q5 hot items": queries.q5HotItems(events),
            "q7 highest bid": queries.q7(events),
            "q8 new users": queries.q8NewUsers(events),
            "q11 user sessions": queries.q11UserSessions(events),
            "q11, Beam's firing": queries.q11Beam(events),
            "q12 processing time": queries.q12ProcessingTime(events),
        }
        for name, df in results.items():
            print(f"{name}: {df.count()} rows")
            df.orderBy(df.columns[-1]).show(5, truncate=False)


if __name__ == "__main__":
    main()
