"""Writes the compatibility checkpoints of the installed sparkwin release: for each family of
``families.py`` that the release has, a query over the family's first ``stopAt`` micro-batches,
stopped there, and what it wrote. tests/test_compat.py resumes each with today's build.

Run with a release's package, once, when it is cut (docs/DESIGN.md, "State outlives releases")::

    git worktree add /tmp/v0.4.0 v0.4.0 && (cd /tmp/v0.4.0 && bin/setup)
    /tmp/v0.4.0/.venv/bin/python tests/compat/write_checkpoints.py tests/compat/checkpoints

It imports only PySpark, the release's public API and ``families.py``; it keeps nothing a later
run needs but the checkpoint (without Hadoop's checksum files), the outputs each batch wrote,
and ``meta.json`` (the release, the Spark that ran it, the batches read).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import families  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402, N812
from pyspark.sql.types import TimestampType  # noqa: E402

import sparkwin as sw  # noqa: E402


def writeBatches(source: Path, batches: list[list[dict[str, Any]]], start: int = 0) -> None:
    """One JSON file a batch, each with its own modification time, in order (the file source
    orders files by it)."""
    source.mkdir(parents=True, exist_ok=True)
    base = time.time() - 10_000
    for i, rows in enumerate(batches, start=start):
        path = source / f"batch-{i:05d}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        os.utime(path, (base + i, base + i))


def plain(df: Any) -> list[dict[str, Any]]:
    """A DataFrame's rows as dicts, timestamps as epoch milliseconds."""
    cols = [
        F.unix_millis(F.col(f"`{f.name}`")).alias(f.name)
        if isinstance(f.dataType, TimestampType)
        else F.col(f"`{f.name}`")
        for f in df.schema.fields
    ]
    return [r.asDict(recursive=True) for r in df.select(*cols).collect()]


def readTo(query: Any, last: int) -> bool:
    """Whether the query's last batch read up to file ``last``."""
    progress = query.lastProgress
    ends = [str(s["endOffset"]) for s in (progress or {}).get("sources", [])]
    return any(e.replace(" ", "").replace("'", '"') == f'{{"logOffset":{last}}}' for e in ends)


def idle(query: Any, checkpoint: Path) -> bool:
    """Between batches, with every planned one committed."""
    return not query.status["isTriggerActive"] and newest(checkpoint / "offsets") == newest(
        checkpoint / "commits"
    )


def newest(log: Path) -> int:
    return max((int(p.name) for p in log.iterdir() if p.name.isdigit()), default=-1)


def released(version: str, since: str) -> bool:
    def parts(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in v.split(".dev")[0].split(".")[:3])

    return parts(version) >= parts(since)


def addExtendingJar(spark: Any) -> None:
    """examples/extending built against the installed jar, as docs/concepts/extending.md says."""
    examples = Path(__file__).resolve().parents[2] / "examples" / "extending" / "src"
    work = Path(tempfile.mkdtemp(prefix="compat-extending-"))
    sources = sorted(str(p) for p in examples.rglob("*.java"))
    classes = work / "classes"
    subprocess.run(
        ["javac", "--release", "17", "-cp", sw.jarPath(), "-d", str(classes), *sources], check=True
    )
    jar = work / "extending.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True)
    sw.jvm.addJar(jar, spark)


def write(spark: Any, family: families.Family, out: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix=f"compat-{family.name}-"))
    try:
        source = work / "source"
        writeBatches(source, family.batches[: family.stopAt])
        sdf = (
            spark.readStream.schema(families.SCHEMA)
            .option("maxFilesPerTrigger", 1)
            .json(str(source))
        )
        pipeline = family.build(sdf)
        outputs: dict[int, dict[str, list[dict[str, Any]]]] = {}

        def collector(tag: str) -> Any:
            def collect(df: Any, batchId: int) -> None:
                outputs.setdefault(batchId, {})[tag] = plain(df)

            return collect

        tags = ["main", *pipeline.sideOutputTags()]
        checkpoint = work / "checkpoint"
        query = pipeline.writeStream(
            str(checkpoint), {t: collector(t) for t in tags}, trigger=family.trigger
        )
        try:
            last = family.stopAt - 1
            deadline = time.monotonic() + 120
            while not (readTo(query, last) and idle(query, checkpoint)):
                if query.exception() is not None:
                    raise RuntimeError(str(query.exception()))
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{family.name}: the query did not read its input in 120 s")
                time.sleep(0.02)
        finally:
            query.stop()
        # A batch the stop interrupted would be run again after a restart, from files of this
        # machine's: keep only checkpoints whose every planned batch committed.
        if newest(checkpoint / "offsets") != newest(checkpoint / "commits"):
            raise RuntimeError(f"{family.name}: stopped inside a batch; run it again")
        target = out / family.name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(checkpoint, target / "checkpoint", ignore=shutil.ignore_patterns("*.crc"))
        (target / "outputs.json").write_text(
            json.dumps({str(b): outputs[b] for b in sorted(outputs)}, indent=1, sort_keys=True)
        )
        (target / "meta.json").write_text(
            json.dumps(
                {
                    "sparkwin": sw.__version__,
                    "spark": spark.version,
                    "family": family.name,
                    "stopAt": family.stopAt,
                },
                indent=1,
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "out", help="the folder of releases' checkpoints (tests/compat/checkpoints)"
    )
    parser.add_argument("--family", action="append", help="only these families")
    args = parser.parse_args()
    spark = sw.session(
        appName="sparkwin-compat",
        master="local[2]",
        **{
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.default.parallelism": "2",
        },
    )
    line = "3.5" if spark.version.startswith("3.") else "4"
    out = Path(args.out) / f"{sw.__version__}-spark{line}"
    extending = False
    for family in families.FAMILIES:
        if args.family and family.name not in args.family:
            continue
        if not released(sw.__version__, family.since) or (family.chained and line == "3.5"):
            continue
        print(f"{sw.__version__} on Spark {spark.version}: {family.name}", flush=True)
        if family.extending and not extending:
            addExtendingJar(spark)
            extending = True
        for attempt in range(5):
            try:
                write(spark, family, out)
                break
            except RuntimeError as exc:
                print(f"  {exc} (attempt {attempt + 1})", flush=True)
        else:
            raise RuntimeError(f"{family.name}: no clean stop in 5 attempts")
    spark.stop()


if __name__ == "__main__":
    main()
