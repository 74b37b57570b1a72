"""Logic as Spark Columns against the built-ins it replaces and against the same logic as a
Java extension, on Spark, in one run: a pipeline with `ConditionTrigger` and an aggregate of an
expression, beside the same pipeline with `CountTrigger` and an aggregate of a column name, and
beside a Java trigger and a Java aggregate doing what the Columns do (benchmarks/extension,
compiled here with javac; issue 64's speed goals: within 1.2x of each). All fire about once per
hundred elements (the condition `amount == 0` holds for one value in a hundred).

    python benchmarks/columns.py [--events N] [--files N] [--rounds N]

Each pipeline streams the same parquet files (one a micro-batch) on local[2] until all are
processed; the two alternate for `--rounds` rounds after an untimed warm-up of each, and the
ratio is taken round by round (this machine's timings drift between runs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pyspark.sql import DataFrame  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402, N812

import sparkwin as sw  # noqa: E402
from benchmarks.measure import timedStream  # noqa: E402
from benchmarks.sessions import benchSession  # noqa: E402
from benchmarks.workloads import BOUND_MS, generate  # noqa: E402


def names(df: DataFrame) -> sw.Pipeline:
    """CountTrigger and column names."""
    return (
        windowed(df)
        .trigger(sw.CountTrigger.of(100))
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )


def columns(df: DataFrame) -> sw.Pipeline:
    """ConditionTrigger and an expression, as Spark Columns."""
    return (
        windowed(df)
        .trigger(sw.ConditionTrigger.of(F.col("amount") == 0))
        .aggregate(sw.agg.sum(F.col("amount") * 2), sw.agg.count())
    )


def java(df: DataFrame) -> sw.Pipeline:
    """The Columns' logic as a Java trigger and a Java aggregate (benchmarks/extension)."""
    return (
        windowed(df)
        .trigger(sw.jvm.trigger("bench.ZeroTrigger", {"column": "amount"}))
        .aggregate(
            sw.jvm.aggregate("bench.DoubledSum", "amount").alias("sum_amount"), sw.agg.count()
        )
    )


def extensionJar(spark: Any, work: str) -> None:
    """Compiles benchmarks/extension with javac against sparkwin's jar and adds it to `spark`."""
    javac, jar = shutil.which("javac"), shutil.which("jar")
    if not (javac and jar):
        raise SystemExit("the Java variant needs a JDK's javac and jar on PATH")
    sources = sorted(str(p) for p in Path(__file__).parent.joinpath("extension").rglob("*.java"))
    classes = os.path.join(work, "classes")
    subprocess.run(
        [javac, "--release", "17", "-cp", sw.jarPath(), "-d", classes, *sources], check=True
    )
    built = os.path.join(work, "bench-extension.jar")
    subprocess.run([jar, "cf", built, "-C", classes, "."], check=True)
    sw.jvm.addJar(built, spark)


def windowed(df: DataFrame) -> Any:
    """The benchmarks' stream: by key, tumbling minutes, the run's watermark bound."""
    watermark = sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS)
    return (
        sw.stream(df, "ts", watermark=watermark)
        .keyBy("key")
        .window(sw.TumblingEventTimeWindows.of(60_000))
    )


def timed(spark: Any, parquet: str, build: Callable[[DataFrame], sw.Pipeline], work: str) -> float:
    """Seconds to stream every file through `build`'s pipeline."""
    schema = spark.read.parquet(parquet).schema
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(parquet)
    seconds, _ = timedStream(
        build(df).toDF(), lambda d, _b: d.write.format("noop").mode("overwrite").save(), work
    )
    return seconds


def inTurns(
    appName: str,
    systems: dict[str, Callable[[DataFrame], sw.Pipeline]],
    report: Callable[[int, dict[str, float]], None],
    prepare: Callable[[Any, str], None] | None = None,
) -> argparse.Namespace:
    """Parses the command line, makes the events, warms each of `systems` up once and times them
    in turns for `--rounds` rounds, handing each round's seconds to `report`; `prepare(spark,
    workdir)` runs first. Returns the parsed arguments."""
    parser = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    spark = benchSession(appName)
    with tempfile.TemporaryDirectory() as tmp:
        events = generate(os.path.join(tmp, "events"), args.events, args.keys, args.files, 1)
        warm = generate(os.path.join(tmp, "warm"), 100_000, args.keys, 2, 2)
        if prepare is not None:
            prepare(spark, tmp)
        for name, build in systems.items():
            timed(spark, warm.directory, build, os.path.join(tmp, f"warm-{name}"))
        for r in range(args.rounds):
            report(
                r,
                {
                    name: timed(spark, events.directory, build, os.path.join(tmp, f"{name}-{r}"))
                    for name, build in systems.items()
                },
            )
    spark.stop()
    return args


def main() -> None:
    byNames: list[float] = []
    byJava: list[float] = []

    def report(r: int, seconds: dict[str, float]) -> None:
        byNames.append(seconds["columns"] / seconds["names"])
        byJava.append(seconds["columns"] / seconds["java"])
        print(
            f"round {r + 1}: CountTrigger + sum('amount') {seconds['names']:.2f} s, "
            f"ConditionTrigger + sum(amount * 2) {seconds['columns']:.2f} s, "
            f"Java trigger + Java sum {seconds['java']:.2f} s, "
            f"columns / names {byNames[-1]:.2f}, columns / java {byJava[-1]:.2f}",
            flush=True,
        )

    systems = {"names": names, "columns": columns, "java": java}
    args = inTurns("sparkwin-columns", systems, report, prepare=extensionJar)
    print(
        f"over {args.rounds} rounds ({args.events:,} events, {args.files} batches): "
        f"columns / names {min(byNames):.2f}-{max(byNames):.2f}, "
        f"columns / java {min(byJava):.2f}-{max(byJava):.2f}"
    )


if __name__ == "__main__":
    main()
