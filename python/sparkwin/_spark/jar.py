"""Where the sparkwin jar is: the copies shipped inside this package, one per Scala version
(Spark 4's 2.13, Spark 3.5's 2.12), picked by the Spark that runs them.

A leaf module: the session builders and the JVM bridges both name the jar in their messages.
"""

from __future__ import annotations

from pathlib import Path

import pyspark

from sparkwin._support import lineFor
from sparkwin._version import __version__
from sparkwin.errors import JarNotFoundError, UnsupportedSparkError, VersionMismatchError


def jarPath(sparkVersion: str | None = None) -> str:
    """The path of the jar shipped inside this package for Spark ``sparkVersion`` (default: the
    installed PySpark's): the Scala 2.13 jar for Spark 4, the Scala 2.12 jar for Spark 3.5.

    Example::

        spark = SparkSession.builder.config("spark.jars", sparkwin.jarPath()).getOrCreate()
        sparkwin.jarPath("3.5.9")  # .../sparkwin/jars/sparkwin-core_2.12-<version>.jar
    """
    version = sparkVersion if sparkVersion is not None else pyspark.__version__
    line = lineFor(version, "this Spark" if sparkVersion is not None else "the installed PySpark")
    name = f"sparkwin-core_{line.scala}-{__version__}.jar"
    jar = Path(__file__).resolve().parents[1] / "jars" / name  # the package's own jars/
    if not jar.is_file():
        raise JarNotFoundError(
            f"{name} is missing from the sparkwin package at {jar.parent}. A source checkout "
            "needs a build first: run `pip install -e .` (or `pip install .`) in the repository."
        )
    return str(jar)


def jarHint(sparkVersion: str | None = None) -> str:
    """The jar's path for an error message, or a placeholder when the package has none."""
    try:
        return jarPath(sparkVersion)
    except (JarNotFoundError, UnsupportedSparkError):
        return "<path to sparkwin-core jar>"


def checkJarVersion(found: str, where: str, fix: str) -> None:
    """Refuses a jar of another version than this package (VersionMismatchError), for both
    transports: ``where`` says whose jar (``"on the JVM"``), ``fix`` what to do."""
    if found != __version__:
        raise VersionMismatchError(
            f"the sparkwin jar {where} is version {found} but the Python package is "
            f"{__version__}; {fix}"
        )
