"""How sparkwin reaches its engine in the JVM: over Py4J from a classic session (``classic``), or
as an extension relation that a Spark Connect server's plugin plans (``connect``), as delta-spark
keeps its Connect client in a package of its own.

``of(session or DataFrame)`` chooses, once per session, and is the only place that asks which
kind of session runs; every other module asks the ``Transport`` it gets. A transport only carries
questions and answers: the plans, the rules and the runs are the JVM's, and splitting a run into
outputs is ``_spark.runtime``'s.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

from pyspark.sql import DataFrame

from sparkwin._plan.contract import CHANNEL_METRICS, OBSERVE_NAME
from sparkwin._transport.base import Transport


def isConnect(obj: Any) -> bool:
    """Whether ``obj`` is a Spark Connect DataFrame or SparkSession (not a classic one)."""
    # A Connect object exists only once PySpark imported its Connect modules.
    frames = sys.modules.get("pyspark.sql.connect.dataframe")
    sessions = sys.modules.get("pyspark.sql.connect.session")
    return (frames is not None and isinstance(obj, frames.DataFrame)) or (
        sessions is not None and isinstance(obj, sessions.SparkSession)
    )


_chosen: weakref.WeakKeyDictionary[Any, Transport] = weakref.WeakKeyDictionary()


def of(obj: Any = None) -> Transport:
    """The transport of ``obj``'s session (a SparkSession or DataFrame; None: the active
    classic session), chosen once per session."""
    session = obj.sparkSession if isinstance(obj, DataFrame) or _isConnectFrame(obj) else obj
    if session is None:
        from sparkwin._transport.classic import activeSession

        session = activeSession(None)
    chosen = _chosen.get(session)
    if chosen is None:
        if isConnect(session):
            from sparkwin._transport.connect import ConnectTransport

            chosen = ConnectTransport(session)
        else:
            from sparkwin._transport.classic import ClassicTransport

            chosen = ClassicTransport(session)
        _chosen[session] = chosen
    return chosen


def _isConnectFrame(obj: Any) -> bool:
    frames = sys.modules.get("pyspark.sql.connect.dataframe")
    return frames is not None and isinstance(obj, frames.DataFrame)


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


__all__ = ["Transport", "isConnect", "observedMetrics", "of"]
