"""soak.py's check: the live run's outputs against the same pipeline run bounded on the whole
topic read back, which sees no late data (a bounded run's watermark jumps to +infinity after all
of it). Per (user, window) the count and sum of event ids must agree; pane ids, late and error
events must each appear once; every very late event must be in the late output and no other.

It reads outputs and computes the report's figures; it runs nothing live.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812

from benchmarks import topics
from benchmarks.systems.soak import END_USER, VERY_LATE, WINDOW_MS, outputTopic, pipeline, source


def _outputs(spark: SparkSession, out: Path, tag: str, like: DataFrame) -> DataFrame:
    """A micro-batch soak's output directory `tag` (empty, as `like`, before any batch wrote)."""
    directory = out / tag
    if not directory.is_dir() or not any(directory.glob("batch_id=*/*.parquet")):
        return spark.createDataFrame([], like.schema)
    return spark.read.parquet(str(directory))


def _topicOutputs(spark: SparkSession, servers: str, topic: str, like: DataFrame) -> DataFrame:
    """A real-time soak's output topic, each record's JSON value as `like`'s columns."""
    raw = topics.records(spark.read, servers, topic)
    return raw.select(F.from_json(F.col("value").cast("string"), like.schema).alias("v")).select(
        "v.*"
    )


def check(
    spark: SparkSession,
    servers: str,
    topic: str,
    out: Path,
    startMs: int,
    realTime: bool = False,
) -> dict[str, Any]:
    """The live run's outputs against the pipeline run bounded on the whole topic. In real-time
    mode identical copies of an output row (at least once) are counted and left out first."""
    whole = source(spark.read, servers, topic).cache()
    bounded = pipeline(whole, realTime=realTime)
    key = ["user", "window_start"]
    expected = (
        bounded.toDF()
        .where(F.col("user") != END_USER)
        .groupBy(*key)
        .agg(F.sum("count").alias("n_exp"), F.sum("sum_uid").alias("uid_exp"))
    )
    duplicates = {}
    if realTime:
        like = {
            "main": bounded.toDF(),
            "late": bounded.getSideOutput("late"),
            "errors": bounded.getSideOutput("errors"),
        }
        outputs = {}
        for tag, shape in like.items():
            copies = _topicOutputs(spark, servers, outputTopic(topic, tag), shape).cache()
            outputs[tag] = copies.distinct().cache()
            duplicates[tag] = copies.count() - outputs[tag].count()
        main = outputs["main"].where(F.col("user") != END_USER)
        late, errors = outputs["late"], outputs["errors"]
    else:
        main = _outputs(spark, out, "main", bounded.toDF()).where(F.col("user") != END_USER).cache()
        late = _outputs(spark, out, "late", whole).cache()
        errors = _outputs(spark, out, "errors", whole)
    lateByWindow = late.select(
        "user",
        F.timestamp_millis(F.floor(F.col("ts") / WINDOW_MS) * WINDOW_MS).alias("window_start"),
        "uid",
    )
    got = (
        main.select(*key, F.col("count").alias("n"), F.col("sum_uid").alias("u"))
        .unionByName(
            lateByWindow.select(*key, F.lit(1).cast("long").alias("n"), F.col("uid").alias("u"))
        )
        .groupBy(*key)
        .agg(F.sum("n").alias("n_got"), F.sum("u").alias("uid_got"))
    )
    joined = expected.join(got, key, "full_outer").fillna(
        0, ["n_exp", "n_got", "uid_exp", "uid_got"]
    )
    totals = joined.agg(
        F.sum(F.greatest(F.col("n_exp") - F.col("n_got"), F.lit(0))).alias("lost"),
        F.sum(F.greatest(F.col("n_got") - F.col("n_exp"), F.lit(0))).alias("duplicated"),
        F.sum(
            ((F.col("n_exp") != F.col("n_got")) | (F.col("uid_exp") != F.col("uid_got"))).cast(
                "int"
            )
        ).alias("windowsWrong"),
        F.count(F.lit(1)).alias("windows"),
        F.sum("n_exp").alias("eventsInWindows"),
    ).first()
    assert totals is not None
    panes = main.count()
    paneIds = main.select(*key, "pane_index").distinct().count()
    lateIds = {r.uid for r in late.select("uid").collect()}
    lateRows = late.count()
    veryLate = {r.uid for r in whole.where(F.col("amount") == VERY_LATE).select("uid").collect()}
    errorIds = [r.uid for r in errors.select("uid").collect()]
    expectedErrors = {r.uid for r in bounded.getSideOutput("errors").select("uid").collect()}
    total = whole.count()
    closing = whole.where(F.col("user") == END_USER).count()
    report = {
        "topicEvents": total,
        "windows": int(totals["windows"] or 0),
        "eventsInWindows": int(totals["eventsInWindows"] or 0),
        "lost": int(totals["lost"] or 0),
        "duplicated": int(totals["duplicated"] or 0),
        "windowsWrong": int(totals["windowsWrong"] or 0),
        "panes": panes,
        "panesRepeated": panes - paneIds,
        "paneTimings": {
            r.pane_timing: r["count"] for r in main.groupBy("pane_timing").count().collect()
        },
        "lateRows": lateRows,
        "lateRepeated": lateRows - len(lateIds),
        "veryLate": len(veryLate),
        "veryLateMissed": len(veryLate - lateIds),
        "lateUnexpected": len(lateIds - veryLate),
        "errors": len(errorIds),
        "errorsExpected": len(expectedErrors),
        "errorsLost": len(expectedErrors - set(errorIds)),
        "errorsRepeated": len(errorIds) - len(set(errorIds)),
        "closingEvents": closing,
        "duplicates": duplicates,
    }
    inPanes = int(main.agg(F.sum("count")).first()[0] or 0)
    report["unaccounted"] = total - closing - inPanes - lateRows - len(errorIds)
    whole.unpersist()
    main.unpersist()
    late.unpersist()
    return report
