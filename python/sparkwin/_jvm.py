"""The bridge to the JVM: finds sparkwin's one Py4J entry point and translates its errors.

Everything that crosses to Scala goes through `entryPoint(spark)`; nothing else in the package
touches `spark._jvm`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.sql import SparkSession

from sparkwin import _classpath
from sparkwin._jar import checkJarVersion, jarHint
from sparkwin._support import lineFor
from sparkwin.errors import JarNotFoundError, VersionMismatchError, fromJvm

ENTRY_CLASS = "sparkwin.plan.PythonEntryPoint"
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
    """The JVM object `sparkwin.plan.PythonEntryPoint`, after checking jar and version."""
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
            str(jvm.sparkwin.plan.PythonEntryPoint.version()),
            "on the JVM",
            "reinstall sparkwin and restart the SparkSession so both come from the same build",
        )
        scala = str(jvm.sparkwin.plan.PythonEntryPoint.scalaVersion())
        if scala != line.scala:
            raise VersionMismatchError(
                f"the sparkwin jar on the JVM is built for Scala {scala}, but Spark "
                f"{spark.version} runs Scala {line.scala}: start the session with "
                f"sparkwin.session() or configure(builder), or pass --jars {jarHint(spark.version)}"
            )
        _checked.add(key)
    return jvm.sparkwin.plan.PythonEntryPoint


def classLocation(spark: SparkSession, className: str) -> str | None:
    """Where the driver loads ``className`` from (a jar's URL), or None if it cannot."""
    jvm = spark._jvm
    assert jvm is not None
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        found = jvm.java.lang.Class.forName(className, False, loader)
    except Exception:  # Py4JJavaError: ClassNotFoundException
        return None
    source = found.getProtectionDomain().getCodeSource()
    return str(source.getLocation()) if source is not None else className


def _javaException(exc: BaseException) -> Any:
    # Py4J raises Py4JJavaError (java_exception); PySpark converts some into captured
    # exceptions that keep the original as _origin.
    return getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)


@contextmanager
def translated() -> Iterator[None]:
    """Turns the JVM's sparkwin exceptions into ``sparkwin.errors`` ones, message kept."""
    try:
        yield
    except Exception as exc:
        java = _javaException(exc)
        if java is None:
            raise
        try:
            name = str(java.getClass().getName())
            message = str(java.getMessage())
        except Exception:  # not a live Java object: leave the error as it is
            raise exc from None
        target = fromJvm(name, message)
        if target is None:
            raise
        raise target from exc
