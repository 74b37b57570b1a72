"""Which Spark versions sparkwin runs on and what each of them offers.

The one table that the session check, the Delta output, the README's support table and CI's
version matrix (``bin/matrix``) read. One jar serves every line: it is compiled against the
newest PySpark's jars and linked against each older line by the matrix. A Spark outside the
table is refused when a session is set up; a feature a line lacks is refused with the lines
that have it.

Nothing here talks to Spark: callers hand in the version string they read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sparkwin.errors import UnsupportedSparkError

__all__ = ["LINES", "SparkLine", "lineFor", "linesWith", "supportedRange"]


@dataclass(frozen=True)
class SparkLine:
    """One supported Spark minor version."""

    minor: tuple[int, int]
    # The patch release CI's matrix proves (the newest on PyPI when the table was written).
    tested: str
    # The Delta Lake jar built for this Spark (Delta's compatibility table: Delta 4.4.0 ships one
    # artifact per Spark minor), or None where no Delta release runs.
    delta: str | None

    @property
    def name(self) -> str:
        return f"{self.minor[0]}.{self.minor[1]}"


LINES: tuple[SparkLine, ...] = (
    SparkLine((4, 0), "4.0.5", "io.delta:delta-spark_4.0_2.13:4.4.0"),
    SparkLine((4, 1), "4.1.4", "io.delta:delta-spark_4.1_2.13:4.4.0"),
    SparkLine((4, 2), "4.2.1", "io.delta:delta-spark_4.2_2.13:4.4.0"),
    SparkLine((4, 3), "4.3.0", None),
)

# The PySpark whose jars the engine's Scala 2.12 build compiles and tests against (build.sbt and
# bin/test read it; Spark 3.5 is the last line with Scala 2.12 jars). Not a supported line: the
# 3.5 runtime is still to come (issue 33), and then this release joins LINES.
SCALA_2_12_PYSPARK = "3.5.9"


def supportedRange() -> str:
    """The supported lines as words, e.g. ``'4.0 to 4.3'``."""
    return f"{LINES[0].name} to {LINES[-1].name}"


def _minor(version: str) -> tuple[int, int] | None:
    found = re.match(r"\s*(\d+)\.(\d+)", version)
    return (int(found.group(1)), int(found.group(2))) if found else None


def lineFor(version: str, where: str = "this Spark") -> SparkLine:
    """The supported line of ``version`` (e.g. ``'4.2.1'``), or UnsupportedSparkError naming
    the supported versions and the fix.

    Example::

        lineFor("4.1.4").delta  # 'io.delta:delta-spark_4.1_2.13:4.4.0'
    """
    minor = _minor(version)
    for line in LINES:
        if line.minor == minor:
            return line
    newer = minor is not None and minor > LINES[-1].minor
    fix = (
        "a newer sparkwin may support it; until then use PySpark "
        f"{LINES[-1].tested} (pip install 'pyspark=={LINES[-1].tested}')"
        if newer
        else f"install a supported PySpark, e.g. pip install 'pyspark=={LINES[-1].tested}'"
    )
    raise UnsupportedSparkError(
        f"{where} is Spark {version}; sparkwin runs on Spark {supportedRange()} "
        f"({', '.join(line.tested for line in LINES)} tested): {fix}"
    )


def linesWith(feature: str) -> list[str]:
    """The names of the lines that offer ``feature`` (a SparkLine field that is truthy)."""
    return [line.name for line in LINES if getattr(line, feature)]
