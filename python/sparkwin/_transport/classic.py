"""The classic transport: a session whose JVM this process drives over Py4J.

Everything that crosses to Scala goes through the one entry point, `entryPoint(spark)`
(``sparkwin.gateway.PythonEntryPoint``, found after checking the jar), inside ``translated()``
(one translation of JVM errors for both transports). It builds no plans and runs no queries of
its own: it carries the package's questions to the JVM and its answers back.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from sparkwin._spark import classpath as _classpath
from sparkwin._spark.jar import checkJarVersion, jarHint
from sparkwin._support import lineFor
from sparkwin._transport.base import Transport
from sparkwin.errors import JarNotFoundError, VersionMismatchError, translated

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


class ClassicTransport(Transport):
    """Py4J: every question is a call of the entry point with the session's JVM objects."""

    session: SparkSession
    localJvm = True

    def _entry(self) -> Any:
        return entryPoint(self.session)

    def describe(self, planJson: str, realTime: bool, checkpoint: str | None) -> str:
        java8 = self.session.conf.get("spark.sql.datetime.java8API.enabled", "false") == "true"
        with translated():
            return str(
                self._entry().describe(
                    planJson, java8, realTime, self.session._jsparkSession, checkpoint
                )
            )

    def validate(self, planJson: str, streaming: bool) -> str:
        with translated():
            return str(self._entry().validate(planJson, streaming))

    def refuseRealTime(self, planJson: str, streaming: bool, queryJson: str | None) -> None:
        with translated():
            self._entry().refuseRealTime(planJson, streaming, queryJson)

    def windowed(
        self, df: DataFrame, planJson: str, realTime: bool, checkpoint: str | None
    ) -> DataFrame:
        with translated():
            jdf = self._entry().windowed(df._jdf, planJson, realTime, checkpoint)
        return DataFrame(jdf, self.session)

    def admit(self, unioned: DataFrame, checkpoint: str) -> None:
        with translated():
            self._entry().checkCheckpoint(unioned._jdf, checkpoint)

    def nondeterministic(self, df: DataFrame) -> dict[str, str]:
        with translated():
            found = json.loads(str(self._entry().nondeterministicInputs(df._jdf)))
        return {str(name): str(sql) for name, sql in found}

    def jarVersion(self) -> str:
        return str(self._entry().version())

    def functions(self) -> ModuleType:
        import pyspark.sql.functions

        return pyspark.sql.functions

    def start(self, writer: Any) -> Any:
        return writer.start()

    def requireClassic(self, what: str, why: str, instead: str) -> None:
        return None

    def streamingSources(self, df: DataFrame) -> list[dict[str, str]]:
        with translated():
            return [dict(s) for s in self._entry().streamingSources(df._jdf)]

    def replay(self, df: DataFrame, planJson: str, endOfInput: bool) -> Any:
        with translated():
            return self._entry().replay(df._jdf, planJson, endOfInput)

    def localSession(self, what: str) -> SparkSession:
        return self.session

    def harness(self, planJson: str, channels: int, generateWatermarks: bool) -> Any:
        with translated():
            return self._entry().harness(planJson, channels, generateWatermarks)

    def addJar(self, jar: str) -> bool:
        self._entry()  # the session's own jars first
        return _classpath.addJar(self.session, jar)

    def classLocation(self, className: str) -> str | None:
        return _classpath.classLocation(self.session._jvm, className)

    def stateBatch(self, checkpoint: str, batchId: int | None) -> int:
        with translated():
            return int(
                self._entry().stateBatch(
                    self.session._jsparkSession, checkpoint, -1 if batchId is None else batchId
                )
            )

    def stateRead(
        self, checkpoint: str, planJson: str | None, batchId: int, operator: int
    ) -> DataFrame:
        with translated():
            jdf = self._entry().stateRead(
                self.session._jsparkSession, checkpoint, planJson, batchId, operator
            )
        return DataFrame(jdf, self.session)

    def stateRelocate(self, checkpoint: str) -> int:
        with translated():
            return int(self._entry().stateRelocate(self.session._jsparkSession, checkpoint))

    def stateMigrate(self, unioned: DataFrame, source: str, target: str) -> str:
        with translated():
            return str(self._entry().stateMigrate(unioned._jdf, source, target))
