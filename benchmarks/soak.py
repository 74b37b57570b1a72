"""Soak test (issue 37): a sparkwin pipeline on a standalone Spark cluster reads a live Kafka
topic for a long time while its executor and its driver are killed (SIGKILL) at random; at the
end every output is checked against the same pipeline run bounded on the whole topic, and the
state store's rows, the checkpoint's size and the JVMs' heaps, sampled along the way, show
whether anything grows.

    python benchmarks/soak.py --minutes 30 --json soak.json --plot docs/img/soak.png

What runs (all on 127.0.0.1): a KRaft Kafka broker (tests/kafka_broker.py), a standalone master
and worker started from PySpark's ``bin/spark-class`` (tests/standalone_cluster.py), the driver
(benchmarks/soak_driver.py) as a process of its own, and here a producer thread
(producer.SoakProducer) and the chaos loop (chaos.py). The harness's own local SparkSession only
talks to Kafka (topic, producer, offsets) and computes the answer at the end (soak_check.py).
The pipeline, the input's constants and `SoakConfig` are benchmarks/systems/soak.py's.

**The input** (4 partitions, `rate` events a second in all, 8 users, event time = the wall clock
when made, less up to `BOUND_MS` of disorder):

- partition 0 and 1 at real time; partition 2 lags `LAG_MS` behind;
- partition 3 goes quiet for `quietSeconds` (longer than the idle timeout) every cycle and comes
  back, so the valve drops it and takes it back;
- now and then an event `LATE_WITHIN_MS` old (kind 2): behind the watermark most of the time,
  so it fires a late pane, but never past the allowed lateness;
- once the driver has reported a watermark past the run's start, now and then an event ten
  minutes older than the run (kind 3): late under any interleaving, so it must reach the late
  output;
- now and then a bad record (a value that is not JSON, or one without a time): the errors output.

**Why what is late is deterministic.** A micro-batch's rows meet the watermark the previous
batch ended with (docs/DESIGN.md, "Channels on a live stream"), and that watermark is at most the
largest event time produced before the previous batch read its offsets, less the bound. An event
is dropped only if its window's end plus the allowed lateness is at or behind that watermark. Every
event of kinds 1 and 2 is at most `LAG_MS + BOUND_MS` or `LATE_WITHIN_MS + BOUND_MS` older than
the newest event made before it, both well under `LATENESS_MS`, so none can be dropped, however
batches cut the topic, whichever partition goes idle (even the lagging one, when the valve jumps
to the others) and however long a killed driver stays down. Kind 3 events are made only after a
batch ended with a watermark past the run's start, and the watermark never goes back (it is in
the checkpoint), so each is dropped under every interleaving. Whether a kind-2 event fires in a
late pane or in the on-time pane is timing, so the check is on what a window holds in total,
not on its panes: panes are discarding, so each event is in exactly one pane.

**The check.** The pipeline run bounded on the topic read back whole sees no late data (a
bounded run's watermark jumps to +infinity after all of it): per (user, window), its count and
sum of event ids (``partition * 1e9 + offset``) must equal the live run's panes summed plus the
live late output in that window. ``lost`` and ``duplicated`` count the events missing or extra;
pane ids (user, window, pane index) and late and error events must each appear once; every kind 3
event must be in the late output and no other event may be; the errors output must hold exactly
the bounded run's errors. The closing events (user ``~end``, one per partition, far ahead) close
every window and are left out of both sides.

**Real-time mode** (``--real-time``): the query runs in Spark's real-time mode (batches of
``--batch-seconds``) with its default watermark, a channel per source partition (no ``channel=``),
and writes to three Kafka topics; the cluster has a task slot for every Kafka and shuffle
partition. Kafka outputs are at least once: a batch Spark runs again after a kill writes again the
rows it had written, so identical copies are counted (``duplicates``) and left out before the
check, and a pane or a late or error row seen twice with different contents is wrong. That check
needs every pane's contents to be the same in every attempt of a batch, so the pipeline has only
the on-time pane (no early or late firings, no allowed lateness), no kind 2 events (their fate is
timing), and no idleness: a partition's idle clock is processing time kept in the checkpoint, so
after a restart that took longer than the idle timeout every partition goes idle at a key group's
first call and the valve follows the partitions that deliver first (the lagging one's next rows
turn late); without it, the quiet partition holds the windows back until it talks. A kind 1 event
is then never late: every partition holds the watermark from the batch's start, and its own rows
are never further behind it than the bound. Kind 3 events are made once a pane was in the output
and a batch ended after it: every key group's watermark is then past the run's start.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import charts  # noqa: E402
from benchmarks.chaos import runSoak  # noqa: E402
from benchmarks.services import KafkaBroker, StandaloneCluster, fetchKafkaJars  # noqa: E402
from benchmarks.sessions import soakHarnessSession  # noqa: E402
from benchmarks.systems.soak import SoakConfig, realTimeSlots  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--kill-every", type=float, default=120.0, help="mean seconds")
    parser.add_argument("--sample-every", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--real-time", action="store_true", help="Spark's real-time mode")
    parser.add_argument("--batch-seconds", type=int, default=30, help="a real-time batch")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    config = SoakConfig(
        seconds=args.minutes * 60,
        rate=args.rate,
        killEvery=args.kill_every,
        quietSeconds=40.0,
        talkSeconds=80.0,
        sampleEvery=args.sample_every,
        triggerMs=2_000,
        realTime=args.real_time,
        batchSeconds=args.batch_seconds,
        seed=args.seed,
        # A real-time restart starts a query and a batch on a cold executor: minutes when busy.
        flushTimeout=600.0 if args.real_time else 240.0,
    )
    fetchKafkaJars()
    spark = soakHarnessSession()
    work = Path(tempfile.mkdtemp(prefix="sparkwin-soak-"))
    try:
        cores = realTimeSlots() if config.realTime else 2
        with KafkaBroker() as broker, StandaloneCluster(cores=cores, memory="1g") as cluster:
            report = runSoak(spark, broker.bootstrapServers, cluster, config, work)
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    report["load"] = os.getloadavg()
    print(json.dumps({k: v for k, v in report.items() if k != "samples"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    if args.plot:
        charts.soakSeries(report, args.plot)
    spark.stop()
    failed = (
        report["lost"] or report["duplicated"] or report["unaccounted"] or report["windowsWrong"]
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
