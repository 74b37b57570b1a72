"""The Spark Connect transport: a session whose JVM is a Spark Connect server's.

A Connect DataFrame has no JVM handle; sparkwin's questions travel to the server as an extension
relation (``message``) that the jar's plugin, ``sparkwin.gateway.connect.SparkwinRelationPlugin``,
answers with the logical plan the classic entry point builds, so both transports run one builder.
What needs this process's JVM (a replay's handle, Py4J's class loading) is refused with why and
what to do instead; the harness runs in the JVM a local Connect server shares with this process.

The server needs the jar (``spark.jars``) and the plugin
(``spark.connect.extensions.relation.classes``); ``sparkwin.configure`` sets both, which reach
the server for ``builder.remote("local[...]")`` (PySpark starts that server in this process).
A remote ``sc://`` server must have been started with them.

Nothing here imports PySpark's Connect client until a Connect object shows up, so classic-only
installs (without ``pyspark[connect]``) never need grpc.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

from sparkwin._spark.conf import withItem
from sparkwin._spark.jar import checkJarVersion, jarHint
from sparkwin._support import requireFeature
from sparkwin._transport.base import Transport
from sparkwin.errors import ConnectUnsupportedError, JarNotFoundError, translated

PLUGIN_CLASS = "sparkwin.gateway.connect.SparkwinRelationPlugin"
# Its name up to 0.4.0, before the gateways left the plan package: servers configured with it
# still load it (a deprecated alias in the jar), so a failure to load may name either.
OLD_PLUGIN_CLASS = "sparkwin.plan.connect.SparkwinRelationPlugin"
RELATION_CLASSES_CONF = "spark.connect.extensions.relation.classes"

_checked: set[str] = set()

# What to use where a Spark line has no Spark Connect for sparkwin (Spark 3.5).
CLASSIC = (
    "sparkwin's Connect plugin is written against Spark 4's plugin API; run the pipeline on a "
    "classic session (sparkwin.session())"
)


def withPlugin(builder: Any) -> Any:
    """The builder with sparkwin's relation plugin added to the server's plugin classes."""
    return withItem(builder, RELATION_CLASSES_CONF, PLUGIN_CLASS)


def localJvmSession(what: str) -> Any:
    """The classic session of this process's JVM, for what only Py4J can drive.

    A local Connect server (``builder.remote("local[...]")``) runs in a JVM that PySpark started
    in this process with a classic session, which has the jar; a remote server has no JVM here.
    """
    from pyspark.sql import SparkSession

    local = getattr(SparkSession, "_instantiatedSession", None)
    if local is not None and getattr(local._sc, "_jsc", None) is not None:
        return local
    raise ConnectUnsupportedError(
        f"{what} drives the engine in this process's JVM through Py4J, and this Spark Connect "
        "session's server is not in this process. Test pipelines on a local session, "
        "sparkwin.session() or sparkwin.session(connect=True): the engine is the same."
    )


# Why replay() raises on Connect, and what to do instead. Its first pass runs on the driver when
# replay() is called, and its result (the cached input, the watermark timeline, the channels)
# stays in a JVM handle that Python keeps between calls. A Connect server plans a relation
# afresh for every request, so a stateless plugin would run that pass again for each action
# and cache the input again each time; keeping the handle would need server-side state per
# Connect session, which the plugin API does not offer.
REPLAY_UNSUPPORTED = (
    "its first pass runs when replay() is called and its result stays in a JVM handle between "
    "calls (the cached input, the watermark timeline), which a Connect client cannot hold",
    "Replay on a classic session (sparkwin.session(), or a cluster that offers one) and write "
    "the replayed outputs to tables or files; Connect clients can read those.",
)


REAL_TIME_UNSUPPORTED = (
    "real-time mode's query is built by the classic (Py4J) runtime",
    "Run it from a classic SparkSession (sparkwin.session()).",
)


def unsupported(what: str, why: str, instead: str) -> ConnectUnsupportedError:
    return ConnectUnsupportedError(f"{what} is not available on Spark Connect: {why}. {instead}")


def startSession(builder: Any) -> Any:
    """``builder.getOrCreate()`` for a remote builder, then the server's sparkwin checked."""
    from pyspark.errors import PySparkRuntimeError

    try:
        spark = builder.getOrCreate()
    except PySparkRuntimeError as exc:
        if exc.getCondition() != "SESSION_ALREADY_EXIST":
            raise
        raise RuntimeError(
            "a classic SparkSession runs in this process, and PySpark starts a local Spark "
            "Connect server only in a process without one: stop it first (spark.stop()), or "
            "connect to a server of its own with sparkwin.session(master='sc://host:port')"
        ) from None
    check(spark)
    return spark


def _frame(
    spark: Any,
    operation: str,
    planJson: str,
    child: Any = None,
    streaming: bool = False,
    argumentsJson: str = "",
) -> Any:
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame

    from sparkwin._transport.connect.message import SparkwinRelation

    return ConnectDataFrame(
        SparkwinRelation(operation, planJson, child, streaming, argumentsJson), spark
    )


def _single(
    spark: Any, operation: str, planJson: str = "", streaming: bool = False, argumentsJson: str = ""
) -> str:
    rows = _frame(spark, operation, planJson, streaming=streaming, argumentsJson=argumentsJson)
    return str(rows.collect()[0][0])


def check(spark: Any) -> None:
    """Checks once per Connect session that the server has sparkwin's plugin, of our version."""
    sessionId = str(spark.session_id)
    if sessionId in _checked:
        return
    from sparkwin._transport.connect.message import VERSION

    requireFeature(spark.version, "connect", "Spark Connect", CLASSIC, "this Spark Connect server")
    try:
        with translated():
            jarVersion = _single(spark, VERSION)
    except Exception as exc:
        if _missingPlugin(exc):
            raise JarNotFoundError(
                "this Spark Connect server cannot run sparkwin: it was started without the "
                "sparkwin jar or its Connect plugin. A local server: stop this session "
                "(spark.stop()) and start it with sparkwin.session(connect=True) or "
                'sparkwin.configure(SparkSession.builder.remote("local[2]")).getOrCreate(). '
                f"A remote server: start it with spark.jars={jarHint()} and "
                f"{RELATION_CLASSES_CONF}={PLUGIN_CLASS}."
            ) from None
        raise
    checkJarVersion(
        jarVersion,
        "on the Spark Connect server",
        "install the same sparkwin on both sides and restart the server",
    )
    _checked.add(sessionId)


def _missingPlugin(exc: BaseException) -> bool:
    text = str(exc)
    # No plugin took the extension; or the conf names the plugin and it failed to load.
    return (
        "No handler found for extension" in text or PLUGIN_CLASS in text or OLD_PLUGIN_CLASS in text
    )


# Spark Connect starts a foreachBatch query by launching a Python worker for the function and
# waits a fixed 10 s for it to connect back (PythonWorkerFactory, not configurable); on a loaded
# machine a cold interpreter can miss that. The start fails before any query or checkpoint
# exists, so starting again is safe.
WORKER_TIMEOUT = "Python worker failed to connect back"
START_ATTEMPTS = 3


def startRetryingWorkerTimeouts(start: Callable[[], Any], attempts: int = START_ATTEMPTS) -> Any:
    """``start()``, tried again (up to ``attempts`` times in all) while it fails only because
    Spark Connect's Python worker for foreachBatch did not connect back in time."""
    for attempt in range(1, attempts):
        try:
            return start()
        except Exception as exc:
            if WORKER_TIMEOUT not in str(exc):
                raise
            warnings.warn(
                f"Spark Connect's foreachBatch worker did not connect back within Spark's 10 s "
                f"(a loaded machine); starting the query again ({attempt + 1} of {attempts})",
                RuntimeWarning,
                stacklevel=2,
            )
    return start()


class ConnectTransport(Transport):
    """Spark Connect: every question is a relation the server's plugin plans."""

    def _frame(self, operation: str, planJson: str = "", **kw: Any) -> Any:
        check(self.session)
        return _frame(self.session, operation, planJson, **kw)

    def _single(self, operation: str, planJson: str = "", **kw: Any) -> str:
        check(self.session)
        with translated():
            return _single(self.session, operation, planJson, **kw)

    def describe(self, planJson: str, realTime: bool, checkpoint: str | None) -> str:
        from sparkwin._transport.connect.message import DESCRIBE

        if realTime or checkpoint is not None:
            raise unsupported(
                "real-time mode" if realTime else "describe(checkpointLocation=...)",
                "its query is built by the classic (Py4J) runtime",
                "Use a classic SparkSession (sparkwin.session()).",
            )
        return self._single(DESCRIBE, planJson)

    def validate(self, planJson: str, streaming: bool) -> str:
        from sparkwin._transport.connect.message import VALIDATE

        return self._single(VALIDATE, planJson, streaming=streaming)

    def refuseRealTime(self, planJson: str, streaming: bool, queryJson: str | None) -> None:
        raise unsupported("real-time mode", *REAL_TIME_UNSUPPORTED)

    def windowed(self, df: Any, planJson: str, realTime: bool, checkpoint: str | None) -> Any:
        """The server plans the relation lazily; its schema is asked for here so that a plan
        the JVM refuses fails now, as on the classic transport, not at the first action. Spark
        Connect does not send a checkpoint: the session's key-group setting decides."""
        from sparkwin._transport.connect.message import WINDOWED

        if realTime:
            self.requireClassic(
                "real-time mode",
                "real-time mode's query is built by the classic (Py4J) runtime",
                "Run it from a classic SparkSession (sparkwin.session()).",
            )
        out = self._frame(WINDOWED, planJson, child=df._plan)
        with translated():
            out.schema  # noqa: B018 - an AnalyzePlan round trip: the plugin plans the pipeline
        return out

    def admit(self, unioned: Any, checkpoint: str) -> None:
        # The plugin never sees a checkpoint: the server's checks are Spark's and the codecs'.
        return None

    def jarVersion(self) -> str:
        from sparkwin._transport.connect.message import VERSION

        return self._single(VERSION)

    def functions(self) -> ModuleType:
        import pyspark.sql.connect.functions

        return pyspark.sql.connect.functions

    def start(self, writer: Any) -> Any:
        return startRetryingWorkerTimeouts(writer.start)

    def requireClassic(self, what: str, why: str, instead: str) -> None:
        raise unsupported(what, why, instead)

    def streamingSources(self, df: Any) -> list[dict[str, str]]:
        raise unsupported(
            "counting a query's sources",
            "the plan's sources are the server's",
            "Run it from a classic SparkSession (sparkwin.session()).",
        )

    def replay(self, df: Any, planJson: str, endOfInput: bool) -> Any:
        raise unsupported("replay()", *REPLAY_UNSUPPORTED)

    def localSession(self, what: str) -> Any:
        return localJvmSession(what)

    def harness(self, planJson: str, channels: int, generateWatermarks: bool) -> Any:
        from sparkwin._transport.classic import ClassicTransport

        return ClassicTransport(self.localSession("WindowHarness")).harness(
            planJson, channels, generateWatermarks
        )

    def addJar(self, jar: str) -> bool:
        raise ConnectUnsupportedError(
            "jvm.addJar on Spark Connect: the jar must be on the server's class path; start the "
            f"server with spark.jars including {jar}"
        )

    def classLocation(self, className: str) -> str | None:
        return None  # a server's classes are not visible from here

    def stateBatch(self, checkpoint: str, batchId: int | None) -> int:
        from sparkwin._transport.connect.message import STATE_BATCH

        arguments = json.dumps({"checkpoint": checkpoint, "batchId": batchId})
        return int(self._single(STATE_BATCH, argumentsJson=arguments))

    def stateRead(self, checkpoint: str, planJson: str | None, batchId: int, operator: int) -> Any:
        from sparkwin._transport.connect.message import STATE_READ

        arguments = {"checkpoint": checkpoint, "batchId": batchId, "operator": operator}
        return self._frame(STATE_READ, planJson or "", argumentsJson=json.dumps(arguments))

    def stateRelocate(self, checkpoint: str) -> int:
        raise unsupported(
            "sparkwin.state.relocate",
            "it rewrites a checkpoint's files from the driver",
            "Relocate it from a classic session (sparkwin.session()) on the same cluster.",
        )

    def stateMigrate(self, unioned: Any, source: str, target: str) -> str:
        raise unsupported(
            "sparkwin.state.migrate",
            "it runs a query of its own on the driver and writes a checkpoint's files",
            "Move the checkpoint from a classic session (sparkwin.session()) on the same cluster.",
        )
