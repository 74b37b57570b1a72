"""The jobs the standalone-cluster tests run as drivers, and the pipelines they share with the
tests' bounded answers.

Run as a script, it is a driver: ``python cluster_job.py <job> <json arguments>``; it makes its
session on the cluster with ``sw.session(master=...)`` (or takes spark-submit's), runs the job,
and exits non-zero on failure. The tests import the same pipelines to compute what a bounded
DataFrame of the same rows gives.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd
from kafka_broker import readTopic
from pyspark.sql import DataFrame
from standalone_cluster import APP_CONF

import sparkwin as sw

KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"
EVENT_DDL = "user string, amount long, ts long"
BOUND_MS = 1_000
WINDOW_MS = 10_000
END_USER = "~end"  # the last event: its watermark closes every other window


def events(count: int, users: int = 3, start: int = 0) -> list[dict[str, Any]]:
    """Events in time order, a second apart, then one far later of user `END_USER`."""
    rows = [{"user": f"u{i % users}", "amount": i, "ts": (start + i) * 1_000} for i in range(count)]
    return rows + [{"user": END_USER, "amount": 0, "ts": (start + count) * 1_000 + 60_000}]


def sums(df: DataFrame) -> sw.Pipeline:
    """Tumbling windows of 10 s per user: sum and count of the amounts."""
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(WINDOW_MS))
        .aggregate(sw.agg.sum("amount"), sw.agg.count())
    )


def biggest(key: Any, window: Any, pdf: pd.DataFrame) -> pd.DataFrame:
    """A pandas window function: the pane's largest amount and its size."""
    return pd.DataFrame(
        {
            "user": [key[0]],
            "end": [window.end],
            "top": [int(pdf["amount"].max())],
            "n": [len(pdf)],
            "module": [sw.__file__],  # where the executor's Python found sparkwin
        }
    )


def tops(df: DataFrame) -> sw.Pipeline:
    """The same windows with a Python function: Python workers on the executors run it."""
    return (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND_MS))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(WINDOW_MS))
        .process(biggest, "user string, end timestamp, top long, n long, module string")
    )


def runToEnd(start: Any, timeout: float) -> None:
    """Run a query (``start()`` starts it) to the end of its input; a failure raises here with
    the error's first line and its causes, without the plans Spark prints after them.
    """
    query = start()
    try:
        query.awaitTermination(timeout)
    except Exception:  # StreamingQueryException: query.exception() has it
        pass
    finally:
        query.stop()
    error = query.exception()
    if error is not None:
        lines = str(error).splitlines()
        causes = [line for line in lines if "Exception" in line or "Error" in line]
        raise RuntimeError("\n".join(dict.fromkeys(lines[:1] + causes[:12])))
    if query.lastProgress is None:
        raise RuntimeError("the query ran no batch")


def main(job: str, args: dict[str, Any]) -> None:
    if job == "kafka":  # the connector from spark.jars.packages, on the executors
        spark = sw.session(
            master=args["master"], **{"spark.jars.packages": KAFKA_PACKAGE, **APP_CONF}
        )
        pipeline = sums(readTopic(spark, args["servers"], args["topic"], EVENT_DDL))
        runToEnd(
            lambda: pipeline.writeStream(
                args["checkpoint"], {"main": args["out"]}, trigger={"availableNow": True}
            ),
            timeout=args["timeout"],
        )
    elif job == "process":  # under spark-submit: the session spark-submit's JVM has
        spark = sw.session()
        rows = events(args["count"])
        df = spark.createDataFrame(rows, EVENT_DDL)
        tops(df).toDF().write.mode("overwrite").parquet(args["out"])
        jars = spark.sparkContext._jsc.sc().listJars().mkString(",")  # what executors fetch
        # A file, not stdout: spark-submit's JVM copies the Python driver's stdout into the
        # same stream as its own log, so a printed line can be split by a log line.
        report = {"master": spark.sparkContext.master, "jars": str(jars)}
        Path(args["report"]).write_text(json.dumps(report))
    else:
        raise ValueError(f"unknown job {job!r}")
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]))
