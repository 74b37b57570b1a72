"""What every transport answers: the questions sparkwin asks of one session's JVM."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import ModuleType
from typing import Any

from pyspark.sql import DataFrame


class Transport(ABC):
    """What sparkwin asks of the JVM of one session. Every method that reaches the JVM turns its
    exceptions into ``sparkwin.errors`` (``translated``); an operation the transport cannot do
    raises ``ConnectUnsupportedError``, saying why and what to do instead."""

    # Whether this process drives the session's JVM (and sees its classes).
    localJvm: bool = False

    def __init__(self, session: Any) -> None:
        self.session = session

    # -- plans ------------------------------------------------------------------------------

    @abstractmethod
    def describe(self, planJson: str, realTime: bool, checkpoint: str | None) -> str:
        """The JVM's description of a plan (``PythonEntryPoint.describe``), as JSON."""

    @abstractmethod
    def validate(self, planJson: str, streaming: bool) -> str:
        """The first rule a plan so far breaks, or the decoder's defaults, as JSON."""

    @abstractmethod
    def refuseRealTime(self, planJson: str, streaming: bool, queryJson: str | None) -> None:
        """Raises ``PlanRules``' refusal of a real-time query (``queryJson``: its trigger, outputs
        and task slots; None for the plan alone) as a ``PlanError``."""

    @abstractmethod
    def windowed(
        self, df: DataFrame, planJson: str, realTime: bool, checkpoint: str | None
    ) -> DataFrame:
        """Every output of the pipeline over ``df`` in one DataFrame (the union)."""

    @abstractmethod
    def admit(self, unioned: DataFrame, checkpoint: str) -> None:
        """Refuses a checkpoint the query of ``unioned`` cannot resume, else records it."""

    def nondeterministic(self, df: DataFrame) -> dict[str, str]:
        """The hidden computed input columns of `df` Spark cannot compute deterministically (name
        to SQL), where the session lets the builder ask before a query starts; else empty (the
        query refuses them before it starts)."""
        return {}

    @abstractmethod
    def jarVersion(self) -> str:
        """The version of the jar the engine runs from."""

    # -- queries ----------------------------------------------------------------------------

    @abstractmethod
    def functions(self) -> ModuleType:
        """The functions module whose Columns this session's DataFrames take."""

    @abstractmethod
    def start(self, writer: Any) -> Any:
        """``writer.start()``: a streaming query."""

    # -- what runs the engine in this process, or asks the driver directly -------------------

    @abstractmethod
    def requireClassic(self, what: str, why: str, instead: str) -> None:
        """Refuses ``what`` where only a classic session can run it."""

    @abstractmethod
    def streamingSources(self, df: DataFrame) -> list[dict[str, str]]:
        """Each streaming source of ``df``'s plan, as its format and options."""

    @abstractmethod
    def replay(self, df: DataFrame, planJson: str, endOfInput: bool) -> Any:
        """The JVM's replay of a bounded DataFrame (its first pass run)."""

    @abstractmethod
    def localSession(self, what: str) -> Any:
        """The classic session whose JVM runs in this process (for ``what``, which needs one)."""

    @abstractmethod
    def harness(self, planJson: str, channels: int, generateWatermarks: bool) -> Any:
        """A harness of the engine alone, in this process's JVM."""

    @abstractmethod
    def addJar(self, jar: str) -> bool:
        """Adds a jar of the user's classes to the session (False: its driver cannot)."""

    @abstractmethod
    def classLocation(self, className: str) -> str | None:
        """Where the session's driver loads ``className`` from (None: it cannot, or a server's
        classes are not visible from here)."""

    # -- checkpoints --------------------------------------------------------------------------

    @abstractmethod
    def stateBatch(self, checkpoint: str, batchId: int | None) -> int:
        """The committed batch a state read of ``checkpoint`` sees."""

    @abstractmethod
    def stateRead(
        self, checkpoint: str, planJson: str | None, batchId: int, operator: int
    ) -> DataFrame:
        """The union of a checkpoint's state views at a committed batch."""

    @abstractmethod
    def stateRelocate(self, checkpoint: str) -> int:
        """Points a copied checkpoint's operator metadata at its own schema files."""

    @abstractmethod
    def stateMigrate(self, unioned: DataFrame, source: str, target: str) -> str:
        """Moves a checkpoint for the query of ``unioned``; what it did, as JSON."""
