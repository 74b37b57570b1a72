"""sparkwin on a Spark standalone cluster with one worker and with two (each worker one core,
one executor): the same events, workload and settings, so the results must be equal and the
times say how the stateful stage spreads over the workers.

    python benchmarks/cluster.py [--events N] [--workload NAME] [--partitions P]
                                 [--workers 1,2] [--runs 2] [--json PATH]

Each cluster (tests/standalone_cluster.py: PySpark's own master and workers on 127.0.0.1) gets
a driver process of its own, which runs the workload once untimed on a small warm-up input,
then `--runs` timed runs (systems/windows.py's `run_spark`: parquet files streamed one a
micro-batch until all are processed). `spark.sparkwin.keyGroups` is left unset, so the key
groups are the default for `spark.sql.shuffle.partitions`; the driver reports the count
`describe()` gives. Results (windows, sum, sum of start x value) must match across clusters.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import report  # noqa: E402
from benchmarks.services import StandaloneCluster  # noqa: E402
from benchmarks.sessions import clusterBenchSession  # noqa: E402
from benchmarks.systems.windows import run_spark, sparkwin_pipeline  # noqa: E402
from benchmarks.workloads import WORKLOADS, Events, generate  # noqa: E402


def driver(args: dict) -> None:
    """One cluster's driver: warm-up, timed runs, one JSON line."""
    workload = next(w for w in WORKLOADS if w.name == args["workload"])
    spark = clusterBenchSession(args["master"], args["workers"], args["partitions"])
    events, warmup = Events(**args["events"]), Events(**args["warmup"])
    source = spark.readStream.schema("key string, ts timestamp, amount long").parquet(
        events.directory
    )
    groups = sparkwin_pipeline(source, workload).describe()["keyGroups"]
    run_spark(spark, warmup, workload, "sparkwin")
    runs = [run_spark(spark, events, workload, "sparkwin") for _ in range(args["runs"])]
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    print(json.dumps({"keyGroups": groups, "executors": executors, "runs": runs}), flush=True)
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=500_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--workload", default="sliding 10m/1m sum")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="sparkwin-cluster-bench-")
    events = generate(os.path.join(scratch, "events"), args.events, args.keys, 10, 7)
    warmup = generate(os.path.join(scratch, "warmup"), 200_000, args.keys, 4, 11)
    os.sync()
    cases = []
    for workers in [int(w) for w in args.workers.split(",")]:
        with StandaloneCluster(cores=1, memory="2g", workers=workers) as cluster:
            request = {
                "master": cluster.masterUrl,
                "workers": workers,
                "workload": args.workload,
                "partitions": args.partitions,
                "runs": args.runs,
                "events": vars(events),
                "warmup": vars(warmup),
            }
            out = cluster.runDriver(
                [sys.executable, __file__, "--driver", json.dumps(request)], timeout=3600
            )
        answer = json.loads(next(x for x in out.splitlines() if x.startswith('{"keyGroups"')))
        for r in answer["runs"]:
            print(f"  {workers} worker(s) {r['seconds']:7.1f} s", file=sys.stderr)
        cases.append({"workers": workers, **answer})
    prints = {
        (c["workers"], i): (r["windows"], r["sum"], r["weighted"])
        for c in cases
        for i, r in enumerate(c["runs"])
    }
    if len(set(prints.values())) != 1:
        raise SystemExit(f"results differ between clusters: {prints}")
    summary = {
        "events": args.events,
        "workload": args.workload,
        "partitions": args.partitions,
        "fingerprint": next(iter(prints.values())),
        "cases": [
            {
                "workers": c["workers"],
                "executors": c["executors"],
                "keyGroups": c["keyGroups"],
                "seconds": [round(r["seconds"], 1) for r in c["runs"]],
            }
            for c in cases
        ],
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        report.save(args.json, summary, 1)
    subprocess.run(["rm", "-rf", scratch], check=False)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--driver":
        driver(json.loads(sys.argv[2]))
    else:
        main()
