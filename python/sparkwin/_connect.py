"""Spark Connect: sparkwin's second transport to the JVM.

A classic DataFrame reaches the JVM through Py4J (``sparkwin._py4j``). A Spark Connect
DataFrame has no JVM handle; instead, sparkwin's operations travel to the server as an
extension relation (``sparkwin._connect_plan``) that the jar's plugin,
``sparkwin.gateway.connect.SparkwinRelationPlugin``, turns into the logical plan the classic entry
point builds. Everything above the transport (the builder, the plan, the splitting of the union into
outputs) is shared: ``_runtime.union`` and ``_runtime.describe`` hand Connect objects to this
module.

The server needs the jar (``spark.jars``) and the plugin
(``spark.connect.extensions.relation.classes``); ``sparkwin.configure`` sets both, which reach
the server for ``builder.remote("local[...]")`` (PySpark starts that server in this process).
A remote ``sc://`` server must have been started with them.

Nothing here imports PySpark's Connect client until a Connect object shows up, so classic-only
installs (without ``pyspark[connect]``) never need grpc.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

from sparkwin._conf import withItem
from sparkwin._contract import CHANNEL_METRICS, OBSERVE_NAME
from sparkwin._jar import checkJarVersion, jarHint
from sparkwin._support import requireFeature
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


def isConnect(obj: Any) -> bool:
    """Whether ``obj`` is a Spark Connect DataFrame or SparkSession (not a classic one)."""
    # A Connect object exists only once PySpark imported its Connect modules.
    frames = sys.modules.get("pyspark.sql.connect.dataframe")
    sessions = sys.modules.get("pyspark.sql.connect.session")
    return (frames is not None and isinstance(obj, frames.DataFrame)) or (
        sessions is not None and isinstance(obj, sessions.SparkSession)
    )


def functionsFor(df: Any) -> ModuleType:
    """The functions module whose Columns ``df`` takes.

    ``pyspark.sql.functions`` picks classic or Connect Columns by a process-wide switch
    (``SPARK_CONNECT_MODE_ENABLED``, set by ``builder.remote(...)``); a Connect session made
    another way, or one next to a classic session in the same process, needs the choice made by
    the DataFrame instead.
    """
    if isConnect(df):
        import pyspark.sql.connect.functions

        return pyspark.sql.connect.functions
    import pyspark.sql.functions

    return pyspark.sql.functions


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

    from sparkwin._connect_plan import SparkwinRelation

    return ConnectDataFrame(
        SparkwinRelation(operation, planJson, child, streaming, argumentsJson), spark
    )


def _single(
    spark: Any, operation: str, planJson: str = "", streaming: bool = False, argumentsJson: str = ""
) -> str:
    rows = _frame(spark, operation, planJson, streaming=streaming, argumentsJson=argumentsJson)
    return str(rows.collect()[0][0])


def stateRead(spark: Any, planJson: str, arguments: dict[str, Any]) -> Any:
    """The server's union of a checkpoint's state views (``sparkwin.state``)."""
    check(spark)
    from sparkwin._connect_plan import STATE_READ

    return _frame(spark, STATE_READ, planJson, argumentsJson=json.dumps(arguments))


def stateBatch(spark: Any, arguments: dict[str, Any]) -> int:
    """The committed batch a state read of the checkpoint sees, as the server resolves it."""
    check(spark)
    from sparkwin._connect_plan import STATE_BATCH

    with translated():
        return int(_single(spark, STATE_BATCH, argumentsJson=json.dumps(arguments)))


def check(spark: Any) -> None:
    """Checks once per Connect session that the server has sparkwin's plugin, of our version."""
    sessionId = str(spark.session_id)
    if sessionId in _checked:
        return
    from sparkwin._connect_plan import VERSION

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


def jarVersion(spark: Any) -> str:
    """The version of the sparkwin jar on the Connect server."""
    check(spark)
    from sparkwin._connect_plan import VERSION

    with translated():
        return _single(spark, VERSION)


def describe(spark: Any, planJson: str) -> str:
    """The server's ``PythonEntryPoint.describe`` of a plan, as the JSON string it returns."""
    check(spark)
    from sparkwin._connect_plan import DESCRIBE

    with translated():
        return _single(spark, DESCRIBE, planJson)


def validate(spark: Any, planJson: str, streaming: bool) -> str:
    """The server's ``PythonEntryPoint.validate`` of a plan so far, as the JSON it returns."""
    check(spark)
    from sparkwin._connect_plan import VALIDATE

    with translated():
        return _single(spark, VALIDATE, planJson, streaming)


def union(df: Any, planJson: str) -> Any:
    """Every output of the pipeline in one Connect DataFrame (streaming if ``df`` is).

    The server plans the relation lazily; its schema is asked for here so that a plan the JVM
    refuses fails now, as on the classic transport, not at the first action.
    """
    spark = df.sparkSession
    check(spark)
    from sparkwin._connect_plan import WINDOWED

    out = _frame(spark, WINDOWED, planJson, df._plan)
    with translated():
        out.schema  # noqa: B018 - an AnalyzePlan round trip: the plugin plans the pipeline
    return out


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


def observedMetrics(progress: Any, name: str = OBSERVE_NAME) -> dict[str, Any]:
    """sparkwin's per-batch counters from a ``StreamingQueryProgress``, as a dict, from a
    classic or a Spark Connect query (an empty dict for a batch that reported none). Pipelines
    with ``channel=`` also have ``watermark`` (the valve's) and ``channels``: a list of
    ``{"channel", "watermark", "idle"}`` dicts, one per input channel.

    Use it rather than ``progress["observedMetrics"]["sparkwin"]`` on Spark Connect: PySpark
    4.3's Connect client reads a progress from the server's JSON, where a metrics row is
    ``{"values": [...], "schema": {...}}``, and hands that on as a Row with the two fields
    ``values`` and ``schema`` instead of one field per counter.

    Example::

        query = pipeline.writeStream("/tmp/ckpt", paths)
        query.processAllAvailable()
        sparkwin.observedMetrics(query.lastProgress)["panesFired"]
    """
    try:
        metrics = progress["observedMetrics"] if progress is not None else None
    except KeyError:  # PySpark 3.5 leaves it out of a batch without new data (DESIGN.md)
        metrics = None
    row = (metrics or {}).get(name)
    if row is None:
        return {}
    fields = row.asDict() if hasattr(row, "asDict") else dict(row)
    if set(fields) == {"values", "schema"}:  # Connect: the row as the server's JSON wrote it
        names = [f["name"] for f in fields["schema"]["fields"]]
        fields = dict(zip(names, fields["values"], strict=True))
    out: dict[str, Any] = {}
    for k, v in fields.items():
        if v is None:
            continue
        out[k] = [_channel(c) for c in v] if k == CHANNEL_METRICS[1] else int(v)
    return out


def _channel(value: Any) -> dict[str, Any]:
    """One channel's status, from a Row (classic), or the JSON of a Connect progress."""
    if hasattr(value, "asDict"):
        value = value.asDict()
    if isinstance(value, dict) and set(value) == {"values", "schema"}:
        value = dict(
            zip([f["name"] for f in value["schema"]["fields"]], value["values"], strict=True)
        )
    if isinstance(value, list | tuple):
        value = dict(zip(("channel", "watermark", "idle"), value, strict=True))
    return {
        "channel": str(value["channel"]),
        "watermark": value["watermark"],
        "idle": value["idle"],
    }
