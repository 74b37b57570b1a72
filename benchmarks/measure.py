"""How a benchmark measures a run: a stream timed until every input is processed, where its time
went (Spark's stage metrics and the query's progress summed into phases, the Spark JVM's CPU),
a micro-batch query's batch times and state operator, and what a long run samples (a JVM's live
heap, a directory's bytes).

It times and reads; it builds no query and prints nothing (report.py prints).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

# ---------------------------------------------------------------------------------------------
# A timed stream and where its time went


def timedStream(
    results: DataFrame, batchFunction: Callable[[DataFrame, int], None], checkpoint: str
) -> tuple[float, StreamingQuery]:
    """Streams `results` into `batchFunction` until every file is processed; the seconds that
    took and the stopped query (its progress)."""
    started = time.perf_counter()
    query = (
        results.writeStream.foreachBatch(batchFunction)
        .option("checkpointLocation", checkpoint)
        .start()
    )
    query.processAllAvailable()
    seconds = time.perf_counter() - started
    query.stop()
    return seconds, query


def measuredStream(
    spark: SparkSession,
    results: DataFrame,
    batchFunction: Callable[[DataFrame, int], None],
    checkpoint: str,
    measure: bool,
) -> tuple[float, StreamingQuery, dict | None]:
    """`timedStream`, and with `measure` where the time went (`breakdown`, with the JVM's CPU
    over the run); Spark's UI must be on to read the stages."""
    before = {st["stageId"] for st in completed_stages(spark)} if measure else set()
    cpuBefore = jvmCpuMs(spark) if measure else 0
    jitBefore = jitMs(spark) if measure else 0
    seconds, query = timedStream(results, batchFunction, checkpoint)
    if not measure:
        return seconds, query, None
    cpuAfter = jvmCpuMs(spark)
    jitAfter = jitMs(spark)
    stages = [st for st in completed_stages(spark) if st["stageId"] not in before]
    partitions = int(str(spark.conf.get("spark.sql.shuffle.partitions")))
    spent = breakdown(query, stages, partitions)
    spent["jvm_cpu"] = cpuAfter - cpuBefore
    spent["jit"] = jitAfter - jitBefore
    return seconds, query, spent


def completed_stages(spark: SparkSession) -> list[dict]:
    """Spark's completed stages with their metrics, from the UI's REST API."""
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages?status=complete"
    with urllib.request.urlopen(url) as response:
        return json.load(response)


def breakdown(query: Any, stages: list[dict], partitions: int) -> dict:
    """Where one run's time went (milliseconds; stage times summed over tasks)."""
    out = {
        k: 0
        for k in (
            "planning",
            "execution",
            "log_commits",
            "state_updates",
            "state_commit",
            "source_stage_run",
            "source_stage_cpu",
            "stateful_stage_run",
            "stateful_stage_cpu",
            "gc",
            "shuffled_rows",
            "jvm_cpu",
            "jit",
        )
    }
    for p in query.recentProgress:
        d = p.durationMs
        out["planning"] += d.get("queryPlanning", 0)
        out["execution"] += d.get("addBatch", 0)
        out["log_commits"] += d.get("walCommit", 0) + d.get("commitOffsets", 0)
        for op in p.stateOperators:
            out["state_updates"] += op.allUpdatesTimeMs + op.allRemovalsTimeMs
            out["state_commit"] += op.commitTimeMs
    out["stateful_stage_cpu_batches"] = []  # per micro-batch, in order: the cost model's data
    for st in sorted(stages, key=lambda st: st["stageId"]):
        # The source stage reads the files; the stateful one has a task per shuffle partition.
        kind = (
            "source"
            if st["inputRecords"] > 0
            else "stateful"
            if st["numTasks"] == partitions
            else None
        )
        if kind:
            out[f"{kind}_stage_run"] += st["executorRunTime"]
            out[f"{kind}_stage_cpu"] += st["executorCpuTime"] // 1_000_000
        if kind == "stateful":
            out["stateful_stage_cpu_batches"].append(st["executorCpuTime"] // 1_000_000)
        if kind == "source":
            out["shuffled_rows"] += st["shuffleWriteRecords"]
        out["gc"] += st.get("jvmGcTime", 0)
    return out


def jvmCpuMs(spark: SparkSession) -> int:
    """The CPU time of Spark's JVM so far, every thread (tasks, RocksDB's background work, GC),
    in milliseconds: on a shared machine a run's wall time also counts other processes' turns.
    The JVM is the process PySpark started (spark-submit execs java); Linux's /proc says."""
    pid = spark.sparkContext._gateway.proc.pid
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    return ticks * 1000 // os.sysconf("SC_CLK_TCK")


def jitMs(spark: SparkSession) -> int:
    """The time Spark's JVM has spent compiling methods so far (its JIT compiler threads),
    in milliseconds: at --quick's sizes the JIT takes a large share of the JVM's CPU, paid
    by whichever system runs while it compiles."""
    bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getCompilationMXBean()
    return int(bean.getTotalCompilationTime())


# ---------------------------------------------------------------------------------------------
# A live query's batches


def batchTimes(progress: list[Any]) -> tuple[list[float], list[tuple[int, str, int]]]:
    """A query's micro-batch durations (`triggerExecution`): their median and max (empty without
    batches), and each batch's (id, start, duration)."""
    took = sorted(p["durationMs"].get("triggerExecution", 0) for p in progress)
    batches = [
        (p["batchId"], p["timestamp"], p["durationMs"].get("triggerExecution", 0)) for p in progress
    ]
    return ([took[len(took) // 2], took[-1]] if took else []), batches


def stateOperatorMedians(progress: list[dict]) -> dict[str, float]:
    """Where a micro-batch's time goes, median over the batches that had data: the batch's
    `addBatch` and the stateful operator's rows updated and removed, update, removal and commit
    times (Spark's progress; summed over the operator's tasks)."""
    fields = (
        "numRowsUpdated",
        "numRowsRemoved",
        "allUpdatesTimeMs",
        "allRemovalsTimeMs",
        "commitTimeMs",
    )
    rows: dict[str, list[float]] = {f: [] for f in (*fields, "addBatchMs", "numInputRows")}
    for p in progress:
        if not p.get("numInputRows"):
            continue
        rows["numInputRows"].append(p["numInputRows"])
        rows["addBatchMs"].append(p["durationMs"].get("addBatch", 0))
        for op in p.get("stateOperators", [])[:1]:
            for f in fields:
                rows[f].append(op.get(f, 0))
    return {f: sorted(v)[len(v) // 2] for f, v in rows.items() if v}


# ---------------------------------------------------------------------------------------------
# What a long run samples


def ranges(samples: list[dict[str, Any]], names: tuple[str, ...]) -> dict[str, Any]:
    """Each named series' min and max over the samples, over the whole run and over its second
    half (a series no sample has is left out)."""
    out = {}
    half = samples[len(samples) // 2 :]
    for name in names:
        values = [s[name] for s in samples if s.get(name) is not None]
        late = [s[name] for s in half if s.get(name) is not None]
        if values:
            out[name] = {
                "min": min(values),
                "max": max(values),
                "secondHalfMin": min(late) if late else None,
                "secondHalfMax": max(late) if late else None,
            }
    return out


def dirBytes(path: Path) -> int:
    """The bytes of every file under `path` (files that vanish meanwhile count nothing)."""
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(directory, name))
            except OSError:
                pass
    return total


def javaPids(groupId: int, marker: bytes) -> list[int]:
    """The processes of process group `groupId` whose command line holds `marker`."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != groupId:
                continue
            if marker in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except (OSError, ProcessLookupError):
            continue
    return pids


def liveHeap(pid: int) -> int | None:
    """Bytes of heap in use after a full GC (jcmd), or None if the JVM did not answer."""
    try:
        subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=60, check=True)
        text = subprocess.run(
            ["jcmd", str(pid), "GC.heap_info"], capture_output=True, timeout=60, check=True
        ).stdout.decode()
    except (OSError, subprocess.SubprocessError):
        return None
    used = [int(k) for k in re.findall(r"generation\s+total \d+K, used (\d+)K", text)]
    return sum(used) * 1024 if used else None
