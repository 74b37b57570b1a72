"""Spark's Kafka connector on a session: which release fits the running Spark, and whether a
session has it.

The connector comes from Maven Central through ``spark.jars.packages``, picked from the support
table by the Spark line (as Delta's jar is, in ``_delta``). This module only configures and
checks; reading and writing Kafka is Spark's own source and sink.
"""

from __future__ import annotations

from typing import Any

import pyspark

from sparkwin._spark.conf import withItem
from sparkwin._support import SparkLine, lineFor

# A class the connector's jar has: loading it tells whether a session can read Kafka.
SOURCE_CLASS = "org.apache.spark.sql.kafka010.KafkaSourceProvider"


def withKafka(builder: Any) -> Any:
    """``builder`` with Spark's Kafka connector for the installed PySpark's line."""
    line = lineFor(pyspark.__version__, "the installed PySpark")
    return withItem(builder, "spark.jars.packages", line.kafkaPackage)


def sessionFix(line: SparkLine) -> str:
    """How to start a session with the connector, for an error message."""
    return (
        "start the session with sparkwin.session(kafka=True) (or sparkwin.configure(builder, "
        f"kafka=True)), which adds spark.jars.packages={line.kafkaPackage}"
    )


__all__ = ["SOURCE_CLASS", "sessionFix", "withKafka"]
