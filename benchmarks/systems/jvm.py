"""The systems that run in a JVM of their own on an events file, not on Spark: sparkwin's engine
alone (sbt project `bench`) and Flink, its WindowOperator in one thread or a job on a local
MiniCluster (sbt project `flinkBench`; benchmark-only, never in the wheel).

A system is a main class, given the input file, the watermark bound and what to run; it prints a
JSON line per result. SPARKWIN_BENCH_CLASSPATH and SPARKWIN_FLINK_CLASSPATH skip asking sbt for
the classpath.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.workloads import BOUND_MS, LAG_MS, Events, Workload

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class JvmSystem:
    """A system that runs in its own JVM on the events file (not on Spark)."""

    project: str  # the sbt project with its classpath
    main: str
    classpath_variable: str  # gives the classpath instead of asking sbt
    args: tuple[str, ...] = ()  # before the events file
    after_bound: tuple[str, ...] = ()  # after the bound, before the workloads
    channels: bool = False  # runs the lagging workload with per-channel watermarks


JVM_SYSTEMS = {
    # Sparkwin's engine in one thread: as the local runtime runs it, and with the per-key
    # operators Spark's processor runs.
    "engine": JvmSystem(
        "bench", "sparkwin.bench.EngineBench", "SPARKWIN_BENCH_CLASSPATH", ("file",)
    ),
    "engine-keyed": JvmSystem(
        "bench", "sparkwin.bench.EngineBench", "SPARKWIN_BENCH_CLASSPATH", ("keyed",)
    ),
    # Flink's WindowOperator in one thread, and a Flink job on a MiniCluster with a slot a core.
    "flink-operator": JvmSystem(
        "flinkBench", "sparkwin.bench.FlinkOperatorBench", "SPARKWIN_FLINK_CLASSPATH"
    ),
    "flink": JvmSystem(
        "flinkBench",
        "sparkwin.bench.FlinkJobBench",
        "SPARKWIN_FLINK_CLASSPATH",
        after_bound=(str(os.cpu_count()),),
        channels=True,
    ),
}


def sbtClasspath(project: str = "bench") -> str:
    """An sbt project's classpath (SPARKWIN_BENCH_CLASSPATH, SPARKWIN_FLINK_CLASSPATH skip it)."""
    return (
        subprocess.run(
            [str(ROOT / "bin" / "sbt"), "-error", f"export {project}/Runtime/fullClasspath"],
            env={**os.environ, "SPARKWIN_PYTHON": sys.executable},
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )


def classpath(system: JvmSystem) -> str:
    """The system's classpath: its variable's, or sbt's."""
    return os.environ.get(system.classpath_variable) or sbtClasspath(system.project)


def runJava(classpath: str, main: str, *args: str) -> list[dict]:
    """Runs a benchmark's JVM main with the benches' heap and collector; the JSON lines it
    printed."""
    out = subprocess.run(
        ["java", "-Xmx6g", "-XX:+UseParallelGC", "-cp", classpath, main, *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def run(system: JvmSystem, inputPath: str, boundMs: int, *what: str) -> list[dict]:
    """The system on `inputPath` with a watermark bound of `boundMs`, running `what` (workloads
    or queries, as its main names them); a JSON line per result."""
    return runJava(
        classpath(system),
        system.main,
        *system.args,
        inputPath,
        str(boundMs),
        *system.after_bound,
        *what,
    )


def jvm_workload(w: Workload) -> str:
    """The workload as the JVM benches name it: tumbling, sliding:slideMs, session:gapMs or
    channels:lagMs (tumbling on the lagging input)."""
    if w.lagged:
        return f"channels:{LAG_MS}"
    return {"tumbling": "tumbling", "sliding": f"sliding:{w.slide_ms}"}.get(
        w.kind, f"session:{w.gap_ms}"
    )


def run_engine(
    events: Events, workloads: list[Workload], system: str = "engine"
) -> dict[str, dict]:
    """A JVM system on run.py's events file (JVM_SYSTEMS): sparkwin's engine or Flink's operator
    in one thread, or a Flink job; each workload's result by name."""
    jvm = JVM_SYSTEMS[system]
    # Only systems with per-channel watermarks run the lagging workload (the others see one
    # channel).
    workloads = [w for w in workloads if jvm.channels or not w.channels]
    lines = run(jvm, events.binary, BOUND_MS, *[jvm_workload(w) for w in workloads])
    results = {r["workload"]: r for r in lines}
    return {w.name: results[jvm_workload(w)] for w in workloads}
