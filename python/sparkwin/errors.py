"""Exceptions of sparkwin's own, so callers can catch them without knowing about Py4J or
Spark Connect, and which JVM exceptions become which (the contract's ``errors``): ``translated``
is the one translation, for both transports.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sparkwin._plan.contract import JVM_ERRORS


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


class CorruptStateError(SparkwinError):
    """A checkpoint's state does not read as its layout says (damaged, or written by another
    program); the message names the layout, the byte offset and, on a stream, the key group."""


class CheckpointError(SparkwinError):
    """A checkpoint a query cannot resume, or sparkwin cannot read or move, as it is: written by a
    newer sparkwin, for another pipeline or Spark line, with another time mode, or damaged. The
    message says which and what to do; nothing was read into a query or written before it."""


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


@contextmanager
def translated() -> Iterator[None]:
    """Turns a sparkwin exception of the JVM into its ``sparkwin.errors`` class, message kept,
    whether it came through Py4J (a classic session) or from a Spark Connect server; any other
    exception passes unchanged.

    Example::

        with translated():
            entryPoint(spark).describe(planJson, False)   # PlanError, not Py4JJavaError
    """
    try:
        yield
    except Exception as exc:
        found = _fromJvmException(exc)
        target = fromJvm(*found) if found is not None else None
        if target is None:
            raise
        # Py4J's error keeps the JVM's stack trace for whoever debugs; Connect's is gRPC noise.
        raise target from (exc if _javaException(exc) is not None else None)


def _fromJvmException(exc: BaseException) -> tuple[str, str] | None:
    """The JVM class and message behind ``exc``, or None when it did not come from the JVM."""
    java = _javaException(exc)
    if java is not None:
        try:
            return str(java.getClass().getName()), str(java.getMessage())
        except Exception:  # not a live Java object: leave the error as it is
            return None
    # A Connect error exists only once PySpark imported its Connect client: no import here.
    connect = sys.modules.get("pyspark.errors.exceptions.connect")
    if connect is None or not isinstance(exc, connect.SparkConnectException):
        return None
    name = _connectJvmClass(exc)
    return None if name is None else (name, _connectMessage(exc, name))


def _javaException(exc: BaseException) -> Any:
    # Py4J raises Py4JJavaError (java_exception); PySpark converts some into captured
    # exceptions that keep the original as _origin.
    return getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)


def _connectJvmClass(exc: BaseException) -> str | None:
    # The server's error details list the exception's class first in the JVM stack trace
    # ("sparkwin.plan.PlanException" or "sparkwin.plan.PlanException: message").
    getStackTrace = getattr(exc, "getStackTrace", None)
    trace = getStackTrace() if callable(getStackTrace) else None
    if not trace:
        return None
    first = str(trace).splitlines()[0]
    return first.split(":", 1)[0].strip() or None


def _connectMessage(exc: BaseException, jvmClass: str) -> str:
    message = getattr(exc, "_message", None)  # without the JVM stack trace some errors append
    text = str(message) if message else str(exc).split("\n\nJVM stacktrace:", 1)[0]
    reason = f"({jvmClass}) "  # errors PySpark has no class for start with their JVM class
    return text[len(reason) :] if text.startswith(reason) else text
