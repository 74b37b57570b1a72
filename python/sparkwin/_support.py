"""Which Spark versions sparkwin runs on and what each of them offers.

The one table that the session check, the choice of jar, the Delta output, the README's support
table, the build (``build.sbt``, the wheel's backend) and CI's version matrix (``bin/matrix``)
read. One jar per Scala version: the Scala 2.13 jar is compiled against the newest PySpark's jars
and serves every 4.x line (the matrix links it against each older one); the Scala 2.12 jar is
compiled against Spark 3.5's, with its own runtime. A Spark outside the table is refused when a
session is set up; a feature a line lacks is refused with the lines that have it.

Nothing here talks to Spark: callers hand in the version string they read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sparkwin.errors import UnsupportedSparkError

__all__ = [
    "LINES",
    "SparkLine",
    "lineFor",
    "linesWith",
    "requireFeature",
    "scala212Line",
    "supportedRange",
]


@dataclass(frozen=True)
class SparkLine:
    """One supported Spark minor version."""

    minor: tuple[int, int]
    # The patch release CI's matrix proves (the newest on PyPI when the table was written).
    tested: str
    # The Delta Lake jar built for this Spark (Delta's compatibility table: Delta 4.4.0 ships one
    # artifact per Spark minor), or None where no Delta release runs.
    delta: str | None
    # The Scala version of this Spark's jars, and so of the sparkwin jar it loads: 2.13 runs
    # Spark 4's runtime (transformWithState), 2.12 Spark 3.5's (flatMapGroupsWithState).
    scala: str = "2.13"
    # The release of Spark's Kafka connector (spark-sql-kafka-0-10) that runs on this line: the
    # newest of the same minor on Maven Central, whose patch releases lag PyPI's (4.3's is not
    # published; 4.2.0 reads and writes Kafka from 4.3.0).
    kafka: str = ""

    @property
    def kafkaPackage(self) -> str:
        """The connector's Maven coordinate, for ``spark.jars.packages``."""
        return f"org.apache.spark:spark-sql-kafka-0-10_{self.scala}:{self.kafka}"

    @property
    def connect(self) -> bool:
        """Spark Connect clients: sparkwin's relation plugin is written against Spark 4's plugin
        API, and Spark 3.5's jars have no Connect server."""
        return self.scala == "2.13"

    @property
    def chained(self) -> bool:
        """Pipelines over another's results on a stream (chained windows): Spark 3.5 refuses a
        stateful operator after flatMapGroupsWithState (the jar's runtime for it says so)."""
        return self.scala == "2.13"

    @property
    def realTime(self) -> bool:
        """Spark's real-time mode for sparkwin's pipelines: the mode came in Spark 4.1, and runs
        the JVM's transformWithState (a stateful operator) from Spark 4.3 on."""
        return self.minor >= (4, 3)

    @property
    def name(self) -> str:
        return f"{self.minor[0]}.{self.minor[1]}"


LINES: tuple[SparkLine, ...] = (
    # Spark 3.5: flatMapGroupsWithState; Delta 3.3.2 is the last Delta for Spark 3.5.
    SparkLine((3, 5), "3.5.9", "io.delta:delta-spark_2.12:3.3.2", scala="2.12", kafka="3.5.7"),
    SparkLine((4, 0), "4.0.5", "io.delta:delta-spark_4.0_2.13:4.4.0", kafka="4.0.4"),
    SparkLine((4, 1), "4.1.4", "io.delta:delta-spark_4.1_2.13:4.4.0", kafka="4.1.3"),
    SparkLine((4, 2), "4.2.1", "io.delta:delta-spark_4.2_2.13:4.4.0", kafka="4.2.0"),
    SparkLine((4, 3), "4.3.0", None, kafka="4.2.0"),
)


def scala212Line() -> SparkLine:
    """The line whose jars the Scala 2.12 jar compiles against (Spark 3.5, the last line with
    Scala 2.12 jars); build.sbt and the wheel's backend read its row."""
    return next(line for line in LINES if line.scala == "2.12")


def supportedRange() -> str:
    """The supported lines as words, e.g. ``'3.5 to 4.3'``."""
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


def requireFeature(
    version: str, feature: str, what: str, fix: str, where: str = "this Spark"
) -> SparkLine:
    """The line of ``version`` if it offers ``feature`` (a SparkLine field), else
    UnsupportedSparkError saying that ``what`` needs one of the lines that offer it, and ``fix``.

    Example::

        requireFeature("3.5.9", "connect", "Spark Connect", "use a classic session")
        # UnsupportedSparkError: Spark Connect needs Spark 4.0, 4.1, 4.2 or 4.3; this Spark is ...
    """
    line = lineFor(version, where)
    if not getattr(line, feature):
        offered = linesWith(feature)
        names = ", ".join(offered[:-1]) + f" or {offered[-1]}" if len(offered) > 1 else offered[0]
        raise UnsupportedSparkError(
            f"{what} needs Spark {names}; {where} is Spark {version}: {fix}"
        )
    return line
