"""Exceptions of sparkwin's own, so callers can catch them without knowing about Py4J or
Spark Connect, and which JVM exceptions become which (the contract's ``errors``).
"""

from __future__ import annotations

from sparkwin._contract import JVM_ERRORS


class SparkwinError(Exception):
    """Base class of every error sparkwin raises on purpose."""


class JarNotFoundError(SparkwinError):
    """The sparkwin jar is not in the installed package or not on the session's classpath."""


class VersionMismatchError(SparkwinError):
    """The Python package and the jar on the JVM are different versions."""


class UnsupportedSparkError(SparkwinError):
    """The running Spark is outside the versions sparkwin supports, or lacks a feature asked for;
    the message names the versions that have it and the fix."""


class PlanError(SparkwinError, ValueError):
    """The JVM rejected a pipeline plan (Python's checks let it through)."""


class WindowMergeError(SparkwinError):
    """A session merge would move an event-time window's end behind the watermark."""


class ConnectUnsupportedError(SparkwinError, NotImplementedError):
    """An operation a Spark Connect client cannot run; the message says what to use instead."""


def fromJvm(jvmClass: str | None, message: str) -> SparkwinError | None:
    """The sparkwin exception a JVM exception of class `jvmClass` becomes, or None.

    Example::

        fromJvm("sparkwin.plan.PlanException", "no column 'x'")  # PlanError("no column 'x'")
    """
    name = JVM_ERRORS.get(jvmClass) if jvmClass is not None else None
    target = globals().get(name) if name is not None else None
    return (
        target(message) if isinstance(target, type) and issubclass(target, SparkwinError) else None
    )
