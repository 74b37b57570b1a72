"""What a streaming query's checkpoint holds, and moving a checkpoint where Spark refuses a
restart.

``read(checkpoint)`` gives DataFrames of a checkpoint's sparkwin state at one committed batch:
each key's open windows (their aggregates as a pane fired now would carry them, panes fired,
trigger state) and pending timers, each key group's copy of the channel watermarks, and the key
groups themselves. It reads the checkpoint as it stands, also while its query runs (at a batch
the query committed), and writes nothing. ``migrate(checkpoint, newCheckpoint, pipeline)`` moves
a stopped query's checkpoint from sparkwin's Spark 3.5 runtime to Spark 4's, or from sparkwin
0.4's processing-time layout to today's, writing a new checkpoint and leaving the old as it was.

Example::

    import sparkwin as sw
    state = sw.state.read("/chk/sessions")
    state.windows.where("window_end < now()").show()   # windows the watermark has not closed
    state.channels.show()                              # which partition holds it back
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, SparkSession

from sparkwin import _transport as transport
from sparkwin._spark import runtime as _runtime

if TYPE_CHECKING:
    from sparkwin.pipeline import Pipeline

# The views of a read, as the JVM's union names them (StateViews): one struct column each.
VIEWS = ("windows", "timers", "channels", "keyGroups")


class CheckpointState:
    """What one sparkwin operator of a checkpoint holds at one committed batch.

    Each view is a DataFrame read from the checkpoint when an action runs on it (nothing is
    cached: ``persist()`` a view you read often). Every view has ``key_group``, the key group's
    label (Spark's grouping key of sparkwin's operator).

    - ``windows``: per key (the key columns) each window its state holds: ``window_start``,
      ``window_end``, ``window_time``, the aggregates as a pane fired now would carry them (before
      an evictor; null for a process function), ``elements`` kept (null where only aggregates
      are), ``panes_fired``, ``on_time_fired`` (the next pane is LATE), ``closed`` (a finished
      trigger closed it) and ``trigger_state`` (the trigger's state by name). Sliced windows show
      each window that has not fired; sessions each live session; a Storm window the key's queue.
    - ``timers``: per key each pending timer: ``domain`` (``event`` or ``processing``), ``time``,
      and the window it was set for.
    - ``channels``: with ``channel=`` (and in real-time mode), each key group's copy of every
      channel's ``watermark`` and whether it is ``idle``, and the valve's output
      (``valve_watermark``); copies agree after every micro-batch.
    - ``keyGroups``: per key group its Spark ``partition``, ``keys`` with state, state
      ``entries`` and their ``bytes``, key ``buckets``, ``wakeups`` listed in its record (-1:
      indexed by time), its Spark timer and the watermark it keeps (chained pipelines, channels).

    Example::

        state = sw.state.read("/chk")
        state.timers.groupBy("domain").count().show()
    """

    def __init__(self, union: DataFrame, checkpoint: str, batchId: int, operator: int) -> None:
        self._union = union
        self.checkpoint = checkpoint
        self.batchId = batchId
        self.operator = operator

    def _view(self, name: str) -> DataFrame:
        return self._union.where(self._union["view"] == name).select(f"{name}.*")

    @property
    def windows(self) -> DataFrame:
        """Each key's windows, with their aggregates now (see the class)."""
        return self._view("windows")

    @property
    def timers(self) -> DataFrame:
        """Each key's pending timers."""
        return self._view("timers")

    @property
    def channels(self) -> DataFrame:
        """Each key group's channel watermarks (empty without channels)."""
        return self._view("channels")

    @property
    def keyGroups(self) -> DataFrame:
        """Each key group's size and clocks."""
        return self._view("keyGroups")

    def __repr__(self) -> str:
        return (
            f"CheckpointState({self.checkpoint!r}, batchId={self.batchId}, "
            f"operator={self.operator})"
        )


def read(
    checkpoint: str,
    pipeline: Pipeline | None = None,
    *,
    batchId: int | None = None,
    operator: int = 0,
    spark: SparkSession | None = None,
) -> CheckpointState:
    """What the checkpoint at ``checkpoint`` holds at batch ``batchId`` (default: the last one
    its query committed), as DataFrames (``CheckpointState``).

    A checkpoint sparkwin wrote from ``writeStream`` (or ``toDF(checkpointLocation=...)``) keeps
    its pipeline; for one written before sparkwin 0.5, or by Spark's own ``writeStream`` over
    ``toDF()``, pass the ``pipeline`` that wrote it. ``operator`` picks one of a chained query's
    sparkwin operators (0: the last pipeline). Works while the query runs, on a classic session or
    a Spark Connect client, on Spark 3.5 (its own runtime's checkpoints) and 4.x (both runtimes').

    Example::

        state = sw.state.read("/chk")
        state.windows.orderBy("window_end").show()
        earlier = sw.state.read("/chk", batchId=state.batchId - 1)
    """
    if not isinstance(checkpoint, str) or not checkpoint:
        raise TypeError("checkpoint must be a non-empty path string")
    if batchId is not None and (not isinstance(batchId, int) or isinstance(batchId, bool)):
        raise TypeError(f"batchId must be a whole number or None, got {batchId!r}")
    if not isinstance(operator, int) or isinstance(operator, bool) or operator < 0:
        raise ValueError(f"operator must be a whole number, 0 or more, got {operator!r}")
    session = _session(spark, pipeline)
    planJson = _planJson(pipeline)
    reader = transport.of(session)
    batch = reader.stateBatch(checkpoint, batchId)
    union = reader.stateRead(checkpoint, planJson, batch, operator)
    return CheckpointState(union, checkpoint, batch, operator)


def migrate(
    checkpoint: str, newCheckpoint: str, pipeline: Pipeline, *, realTime: bool = False
) -> dict[str, Any]:
    """Moves the stopped query's checkpoint at ``checkpoint`` to a new one at ``newCheckpoint``,
    for ``pipeline`` as it will run now (in real-time mode with ``realTime``), where Spark itself
    refuses the restart: a micro-batch checkpoint on ``flatMapGroupsWithState`` (Spark 3.5's, or
    a new one's on Spark 4) to real-time mode's ``transformWithState``, or a processing-time
    pipeline's checkpoint of sparkwin 0.4. Run it on Spark 4, with the query stopped.

    The new checkpoint is the same query (its id, every batch's offsets and commits, the sources'
    logs: it resumes where the old one stopped, and outputs keep their batch ids) with the state
    of the last committed batch, entry for entry; the old checkpoint is left as it was. Returns
    what it did (the batch, key groups and entries moved, the runtime and time mode before and
    after).

    Example::

        sw.state.migrate("/chk/mb", "/chk/rt", pipeline, realTime=True)
        pipeline.writeStream("/chk/rt", outputs, trigger={"realTime": "5 minutes"})
    """
    for name, value in (("checkpoint", checkpoint), ("newCheckpoint", newCheckpoint)):
        if not isinstance(value, str) or not value:
            raise TypeError(f"{name} must be a non-empty path string")
    if checkpoint == newCheckpoint:
        raise ValueError("newCheckpoint must be a new folder, not the checkpoint itself")
    from sparkwin.pipeline import Pipeline

    if not isinstance(pipeline, Pipeline):
        raise TypeError(f"pipeline must be a sparkwin Pipeline, got {type(pipeline).__name__}")
    if not pipeline.df.isStreaming:
        raise ValueError("pipeline must be built over a streaming DataFrame: the query to resume")
    # Planned on the old checkpoint, so its key groups are the ones kept there.
    unioned = _runtime.union(pipeline.df, pipeline.planJson(), realTime, checkpoint)
    report: dict[str, Any] = json.loads(
        transport.of(unioned).stateMigrate(unioned, checkpoint, newCheckpoint)
    )
    return report


def relocate(checkpoint: str, *, spark: SparkSession | None = None) -> int:
    """Points a checkpoint that was copied or moved at its own state schema files, and returns how
    many references it changed (0: it was in place).

    Spark 4 writes the full path of a ``transformWithState`` operator's schema files into its
    metadata, so a copy of the checkpoint fails where the original stood ("File ... does not
    exist"). A query sparkwin starts on the copy relocates it by itself; ``read`` and ``migrate``
    write nothing and ask for this first.

    Example::

        shutil.copytree("/chk", "/backup/chk")
        sw.state.relocate("/backup/chk")
        sw.state.read("/backup/chk").keyGroups.show()
    """
    if not isinstance(checkpoint, str) or not checkpoint:
        raise TypeError("checkpoint must be a non-empty path string")
    return transport.of(_session(spark, None)).stateRelocate(checkpoint)


def _session(spark: SparkSession | None, pipeline: Pipeline | None) -> SparkSession:
    if spark is not None:
        return spark
    if pipeline is not None:
        return pipeline.df.sparkSession
    active = SparkSession.getActiveSession()
    if active is None:
        raise ValueError("no active SparkSession: pass spark=, or start one with sw.session()")
    return active


def _planJson(pipeline: Pipeline | None) -> str | None:
    if pipeline is None:
        return None
    from sparkwin.pipeline import Pipeline

    if not isinstance(pipeline, Pipeline):
        raise TypeError(f"pipeline must be a sparkwin Pipeline, got {type(pipeline).__name__}")
    return pipeline.planJson()
