"""How the benchmarks report what they measured: the machine a run ran on, each benchmark's
table as text (and latency.py's as docs/benchmarks.md's markdown), and the JSON files they
write.

Tables are returned as text for the caller to print; nothing here measures or checks.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any


def machine() -> dict:
    """What a run ran on, for its JSON."""
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "spark": __import__("pyspark").__version__,
        "java": subprocess.run(
            ["java", "-version"], capture_output=True, text=True
        ).stderr.splitlines()[0],
        "platform": platform.platform(),
    }


def save(path: str | Path, data: Any, indent: int = 2) -> None:
    """`data` as JSON at `path`."""
    Path(path).write_text(json.dumps(data, indent=indent))


# ---------------------------------------------------------------------------------------------
# Throughput: run.py, nexmark.py, scale.py


def throughputTable(cases: list[dict]) -> str:
    """run.py's cases: seconds, events a second, the ratio to Spark's own windows, late drops."""
    header = ("workload", "system", "events", "seconds", "events/s", "x native", "late drops")
    lines = ["{:28} {:14} {:>10} {:>8} {:>11} {:>8} {:>10}".format(*header)]
    for c in cases:
        ratio = f"{c['ratio_to_native']:.2f}" if c["ratio_to_native"] is not None else "-"
        lines.append(
            f"{c['workload']:28} {c['system']:14} {c['events']:>10} {c['seconds']:>8.2f} "
            f"{c['events_per_s']:>11,} {ratio:>8} {c.get('dropped_late', '-'):>10}"
        )
    return "\n".join(lines)


def breakdownTable(cases: list[dict]) -> str:
    """Seconds per phase of the cases with a breakdown; stage columns are executor run (cpu)
    time summed over tasks."""
    header = ("workload", "system", "plan", "execute", "logs", "st.upd", "st.commit")
    lines = [
        "{:22} {:9} {:>6} {:>8} {:>6} {:>7} {:>9}  {:>15} {:>15} {:>5} {:>9} {:>8} {:>6}".format(
            *header, "source run(cpu)", "state run(cpu)", "gc", "shuffled", "jvm cpu", "jit"
        )
    ]

    def sec(ms: int) -> str:
        return f"{ms / 1000:.2f}"

    for c in cases:
        b = c.get("breakdown")
        if not b:
            continue
        lines.append(
            f"{c['workload']:22} {c['system']:9} {sec(b['planning']):>6} "
            f"{sec(b['execution']):>8} {sec(b['log_commits']):>6} {sec(b['state_updates']):>7} "
            f"{sec(b['state_commit']):>9}  "
            f"{sec(b['source_stage_run']) + ' (' + sec(b['source_stage_cpu']) + ')':>15} "
            f"{sec(b['stateful_stage_run']) + ' (' + sec(b['stateful_stage_cpu']) + ')':>15} "
            f"{sec(b['gc']):>5} {b['shuffled_rows']:>9} {sec(b['jvm_cpu']):>8} "
            f"{sec(b['jit']):>6}"
        )
    return "\n".join(lines)


def nexmarkTable(cases: list[dict], published: dict[str, int]) -> str:
    """nexmark.py's cases beside the published Flink figures, then each query's fingerprint."""
    header = ("query", "system", "events", "seconds", "events/s", "per core", "x native")
    lines = ["{:6} {:9} {:>11} {:>8} {:>10} {:>9} {:>8}   published Flink per core".format(*header)]
    for c in cases:
        ratio = f"{c['ratio_to_native']:.2f}" if c["ratio_to_native"] is not None else "-"
        shown = f"{published[c['query']]:,}" if c["query"] in published else "-"
        lines.append(
            f"{c['query']:6} {c['system']:9} {c['events']:>11,} {c['seconds']:>8.2f} "
            f"{c['events_per_s']:>10,} {c['events_per_s_per_core']:>9,} {ratio:>8}   {shown}"
        )
    lines.append(
        "\nresults (rows, sum, sum of start s x value, sum of keys), equal in every system:"
    )
    for query in dict.fromkeys(c["query"] for c in cases if c["query"] != "floor"):
        systems = [c["system"] for c in cases if c["query"] == query]
        fp = next(c["fingerprint"] for c in cases if c["query"] == query)
        lines.append(f"  {query:4} {fp} ({', '.join(systems)})")
    return "\n".join(lines)


def scaleTable(points: list[dict]) -> str:
    """scale.py's points: seconds and microseconds per event, and with a breakdown the stateful
    stage's and the JVM's CPU seconds."""
    lines = [
        f"{'series':8} {'point':12} {'system':9} {'seconds':>8} {'µs/event':>9} "
        f"{'state cpu':>9} {'jvm cpu':>8}"
    ]
    for p in points:
        b = p.get("breakdown")
        cpu = f"{b['stateful_stage_cpu'] / 1000:9.1f} {b['jvm_cpu'] / 1000:8.1f}" if b else ""
        lines.append(
            f"{p['series']:8} {p['point']:12} {p['system']:9} {p['seconds']:8.1f} "
            f"{p['us_per_event']:9.3f} {cpu}"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Latency: latency.py


def _ms(v: Any) -> str:
    return "-" if v is None else f"{v:.0f}"


def latencyTable(results: list[dict]) -> str:
    """The runs as a plain table, a failed run as a row without latencies (its error follows);
    with a column of key counts when a run says its own."""
    withKeys = any("keys" in r for r in results)
    lines = [
        f"{'workload':<9} {'rate':>7} "
        + (f"{'keys':>8} " if withKeys else "")
        + f"{'system':<15} {'achieved':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} "
        f"{'growth':>7} held"
    ]
    for r in results:
        lines.append(
            f"{r['workload']:<9} {r['rate']:>7} "
            + (f"{r.get('keys', '-'):>8} " if withKeys else "")
            + f"{r['system']:<15} {_ms(r['achieved']):>8} "
            f"{_ms(r['p50']):>7} {_ms(r['p99']):>7} {_ms(r['max']):>7} {_ms(r['growth']):>7} "
            f"{'error' if 'error' in r else 'yes' if r['held'] else 'NO'}"
        )
    return "\n".join(lines)


def latencyMarkdown(results: list[dict], defaultKeys: int) -> str:
    """The runs as docs/benchmarks.md's table: latency in seconds per workload, rate and system
    (`defaultKeys` for a run that does not say its key count)."""

    def sec(v: float | None) -> str:
        return "-" if v is None else f"{v / 1000:.2f}"

    lines = [
        "| workload | rate (achieved) | keys | system | p50 s | p99 s | max s | growth s | held |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        achieved = f"{r['achieved'] / 1000:.1f}k" if r.get("achieved") else "-"
        held = "error" if "error" in r else "yes" if r["held"] else "no"
        lines.append(
            f"| {r['workload']} | {r['rate'] // 1000}k ({achieved}) | "
            f"{r.get('keys', defaultKeys)} | {r['system']} | "
            f"{sec(r['p50'])} | {sec(r['p99'])} | {sec(r['max'])} | {sec(r['growth'])} | {held} |"
        )
    return "\n".join(lines)
