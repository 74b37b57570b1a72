"""How cost grows: benchmarks/run.py over growing work, one factor at a time.

    python benchmarks/scale.py [--json PATH] [--chart PATH] [--series events,keys,slides]
                               [--points 1k,1M] [--systems engine,sparkwin,native] [--spark 3.5]
                               [--breakdown] [--conf KEY=VALUE ...]
    python benchmarks/run.py --scale [the same options]

Series (each point is one run.py process: its own events, warm-up and result check):
- events: tumbling 1 min sums over 1M, 3M, 10M and 30M events (10k keys);
- keys: sessions with a 30 min gap over 1M events and 1k, 100k, 1M and 10M keys, so that nearly
  every key holds an open session, and a pending timer, until the final flush: the state and
  the key groups' wake-up indexes grow with the keys (at 10M keys nearly every event opens a
  key of its own: 951k keys with state);
- slides: 10 min windows sliding by 1 min, 10 s and 1 s over 1M events (10, 60 and 600
  windows per element). Spark's own windows are left out at 1 s: they copy every event into
  600 windows, about ten times their cost at 10 s (docs/benchmarks.md).

It prints a table of microseconds per event and writes the runs as JSON and, with --chart, a
PNG of cost per event (matplotlib). `--points` keeps the points whose label starts with one of
its words (`--series keys --points 1k,1M`); `--breakdown` and `--conf` go to every run.py, and
with `--breakdown` each point keeps where its time went (run.py's breakdown, with the JVM's CPU
time, the figure to compare on a shared machine). Timings on a shared 2-core machine drift
10-35%: read the shape, and compare systems within a point.
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

from benchmarks import charts, report  # noqa: E402
from benchmarks.systems.jvm import sbtClasspath  # noqa: E402

# name -> [(label, run.py arguments, systems to leave out)]
SERIES: dict[str, list[tuple[str, list[str], set[str]]]] = {
    "events": [
        (f"{n // 1_000_000}M events", ["--workloads", "tumbling", "--events", str(n)], set())
        for n in (1_000_000, 3_000_000, 10_000_000, 30_000_000)
    ],
    "keys": [
        (
            f"{label} keys",
            ["--workloads", "session", "--gap", "1800000", "--events", "1000000", "--keys", k],
            set(),
        )
        for label, k in (("1k", "1000"), ("100k", "100000"), ("1M", "1000000"), ("10M", "10000000"))
    ],
    "slides": [
        (
            f"slide {label}",
            ["--workloads", "sliding", "--slide", ms, "--events", "1000000"],
            {"native"} if ms == "1000" else set(),
        )
        for label, ms in (("1 min", "60000"), ("10 s", "10000"), ("1 s", "1000"))
    ],
}


def runPoint(
    args: list[str], systems: list[str], line: str | None = None, extra: list[str] | None = None
) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="sparkwin-scale-") as tmp:
        out = os.path.join(tmp, "point.json")
        command = [sys.executable, str(ROOT / "benchmarks" / "run.py"), *args]
        command += ["--spark", line] if line else []
        command += ["--systems", ",".join(systems), "--json", out, *(extra or [])]
        print("  $", " ".join(command[1:]), file=sys.stderr)
        subprocess.run(command, check=True, cwd=ROOT)
        with open(out) as f:
            return json.load(f)["cases"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", default=",".join(SERIES))
    parser.add_argument("--systems", default="engine,sparkwin,native")
    parser.add_argument("--json", default=None)
    parser.add_argument("--chart", default=None, help="write a PNG of cost per event here")
    parser.add_argument("--spark", default=None, help="the Spark systems on this line (run.py)")
    parser.add_argument("--points", default=None, help="only the points whose label starts so")
    parser.add_argument("--breakdown", action="store_true", help="run.py's --breakdown")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    extra = (["--breakdown"] if args.breakdown else []) + [
        x for c in args.conf for x in ("--conf", c)
    ]
    chosen = [p for p in (args.points or "").split(",") if p]
    systems = [s for s in args.systems.split(",") if s]
    if args.spark:  # the engine alone does not depend on the line
        systems = [s for s in systems if s not in ("engine", "engine-keyed")]
    if "engine" in systems and not os.environ.get("SPARKWIN_BENCH_CLASSPATH"):
        # sbt starts once, not once per point
        os.environ["SPARKWIN_BENCH_CLASSPATH"] = sbtClasspath()
    points: list[dict] = []
    for name in [s for s in args.series.split(",") if s]:
        for label, runArgs, skip in SERIES[name]:
            if chosen and not any(label.startswith(p + " ") for p in chosen):
                continue
            kept = [s for s in systems if s not in skip]
            for case in runPoint(runArgs, kept, args.spark, extra):
                points.append(
                    {
                        "series": name,
                        "point": label,
                        "system": case["system"],
                        "workload": case["workload"],
                        "events": case["events"],
                        "seconds": case["seconds"],
                        "us_per_event": round(case["seconds"] * 1e6 / case["events"], 3),
                        **({"breakdown": case["breakdown"]} if "breakdown" in case else {}),
                    }
                )
            if args.json:  # after every point: a stopped run keeps what it measured
                report.save(args.json, {"points": points})
    print("\n" + report.scaleTable(points))
    if args.chart:
        charts.costPerEvent(points, args.chart)


if __name__ == "__main__":
    main()
