"""The Py4J bridge to the JVM: finds sparkwin's one Py4J entry point, after checking the jar.

Everything that crosses to Scala over Py4J goes through `entryPoint(spark)`, inside
``translated()`` (``sparkwin.errors.translated``: one translation of JVM errors for both
transports). Spark Connect's transport is `_connect`'s. This module only finds and checks the
entry point: it builds no plans and runs no queries, and it imports no builder or runtime module
(they import it). A user's own classes by name are `sparkwin.jvm`'s, not this module's.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession

from sparkwin import _classpath
from sparkwin._jar import checkJarVersion, jarHint
from sparkwin._support import lineFor
from sparkwin.errors import JarNotFoundError, VersionMismatchError
from sparkwin.errors import translated as translated  # the Py4J bridge's callers use it here

ENTRY_CLASS = "sparkwin.gateway.PythonEntryPoint"
_checked: set[int] = set()


def activeSession(spark: SparkSession | None) -> SparkSession:
    """`spark`, or the active session."""
    if spark is not None:
        return spark
    active = SparkSession.getActiveSession()
    if active is None:
        raise RuntimeError(
            "no active SparkSession: start one with sparkwin.session() "
            "or sparkwin.configure(SparkSession.builder).getOrCreate()"
        )
    return active


def entryPoint(spark: SparkSession | None = None) -> Any:
    """The JVM object `sparkwin.gateway.PythonEntryPoint`, after checking jar and version."""
    spark = activeSession(spark)
    jvm = spark._jvm
    assert jvm is not None
    key = id(spark.sparkContext._jsc)
    if key not in _checked:
        line = lineFor(spark.version, "this SparkSession")
        # Once per context: the jars the session's options hid, and ours if the JVM lacks it.
        if not _classpath.ensure(spark, ENTRY_CLASS):
            raise JarNotFoundError(
                "this SparkSession was started without the sparkwin jar, and its driver's class "
                "loader cannot take it at run time. Stop it (spark.stop()) and start it with "
                "sparkwin.session() or sparkwin.configure(SparkSession.builder).getOrCreate(); "
                f'under spark-submit, pass --jars "$(python -m sparkwin jar)" '
                f"({jarHint(spark.version)})."
            )
        checkJarVersion(
            str(jvm.sparkwin.gateway.PythonEntryPoint.version()),
            "on the JVM",
            "reinstall sparkwin and restart the SparkSession so both come from the same build",
        )
        scala = str(jvm.sparkwin.gateway.PythonEntryPoint.scalaVersion())
        if scala != line.scala:
            raise VersionMismatchError(
                f"the sparkwin jar on the JVM is built for Scala {scala}, but Spark "
                f"{spark.version} runs Scala {line.scala}: start the session with "
                f"sparkwin.session() or configure(builder), or pass --jars {jarHint(spark.version)}"
            )
        _checked.add(key)
    return jvm.sparkwin.gateway.PythonEntryPoint
