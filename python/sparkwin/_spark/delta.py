"""Delta Lake on a session: which Delta jar fits the running Spark, the settings a session needs
for it, and whether a session has them.

Delta's jars come from Maven Central through ``spark.jars.packages`` (as delta-spark's own
``configure_spark_with_delta_pip`` does), picked from the support table by the Spark line.
sparkwin does not depend on the ``delta-spark`` Python package: its releases pin PySpark
(4.4.1 asks for ``pyspark<=4.2.0``), so requiring it would change the user's PySpark.

This module only configures and checks; ``outputs.DeltaOutput`` writes.
"""

from __future__ import annotations

import re
from typing import Any

import pyspark

from sparkwin._spark.conf import withItem
from sparkwin._support import SparkLine, lineFor, linesWith
from sparkwin.errors import UnsupportedSparkError

EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
CATALOG_CONF = "spark.sql.catalog.spark_catalog"
# A class every Delta jar has: loading it tells whether the session has Delta.
SOURCE_CLASS = "org.apache.spark.sql.delta.sources.DeltaDataSource"


def lineWithDelta(version: str, where: str) -> SparkLine:
    """The support line of ``version`` if Delta runs on it, else UnsupportedSparkError naming
    the lines where it does."""
    line = lineFor(version, where)
    if line.delta is None:
        raise UnsupportedSparkError(
            f"{where} is Spark {version}, for which Delta Lake has no release yet; Delta outputs "
            f"run on Spark {', '.join(linesWith('delta'))}. Write this output to a directory or "
            "sw.toTable(...), or run on one of those Spark versions."
        )
    return line


def withDelta(builder: Any) -> Any:
    """``builder`` with the Delta jar for the installed PySpark, Delta's SQL extension and, unless
    the builder names another, Delta's catalog as the session catalog."""
    line = lineWithDelta(pyspark.__version__, "the installed PySpark")
    assert line.delta is not None
    builder = withItem(builder, "spark.jars.packages", line.delta)
    builder = withItem(builder, "spark.sql.extensions", EXTENSION)
    if CATALOG_CONF not in builder._options:
        builder = builder.config(CATALOG_CONF, CATALOG)
    return builder


def sessionFix(line: SparkLine) -> str:
    """How to start a session with Delta, for an error message."""
    return (
        "start the session with sparkwin.session(delta=True) (or sparkwin.configure(builder, "
        f"delta=True)), which adds spark.jars.packages={line.delta}, "
        f"spark.sql.extensions={EXTENSION} and {CATALOG_CONF}={CATALOG}"
    )


def jarMinor(location: str) -> str | None:
    """The Spark line a Delta jar was built for, from its file name (Delta names its jars
    ``delta-spark_<spark minor>_<scala>``), or None for a name without one."""
    found = re.search(r"delta-spark_(\d+\.\d+)_2\.1\d", location)
    return found.group(1) if found else None


def checkJar(location: str | None, line: SparkLine, where: str) -> None:
    """Refuses a session without Delta (``location`` None) or with the Delta jar of another
    Spark line, naming the jar that fits."""
    if location is None:
        raise UnsupportedSparkError(
            f"{where}: this session has no Delta Lake jar; {sessionFix(line)}"
        )
    built = jarMinor(location)
    if built is not None and built != line.name:
        raise UnsupportedSparkError(
            f"{where}: this session's Delta Lake jar ({location.rsplit('/', 1)[-1]}) is built for "
            f"Spark {built}, and this is Spark {line.name}; use {line.delta} instead "
            f"({sessionFix(line)})"
        )


def requireDelta(spark: Any, where: str, table: bool) -> None:
    """Checks before a query starts that ``spark`` can write Delta: a Spark line Delta has, its
    jar (classic sessions; a Spark Connect server's classes are not visible from here), and for
    catalog tables Delta's catalog. Raises UnsupportedSparkError or ValueError with the fix."""
    from sparkwin import _transport as transport

    line = lineWithDelta(spark.version, where)
    sessionTransport = transport.of(spark)
    if sessionTransport.localJvm:  # a Connect server's classes are not visible from here
        checkJar(sessionTransport.classLocation(SOURCE_CLASS), line, where)
    catalog = spark.conf.get(CATALOG_CONF, None)
    if table and catalog != CATALOG:
        raise ValueError(
            f"{where}: a Delta catalog table needs {CATALOG_CONF}={CATALOG} (this session has "
            f"{catalog!r}); {sessionFix(line)}, or write to a path with toDelta(path)"
        )


__all__ = ["checkJar", "jarMinor", "lineWithDelta", "requireDelta", "withDelta"]
