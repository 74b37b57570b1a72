"""Checking the plain values users pass to factories: durations (``datetime.timedelta`` or int
milliseconds, turned into the integer milliseconds of the plan), counts, thresholds, flags and
lists of column names, with errors that name the parameter and say how to fix it.

Only argument checking lives here: no Spark, no JVM, no knowledge of what a value is for.
Checks against a DataFrame's schema belong to `sparkwin.stream`.
"""

from __future__ import annotations

import numbers
from datetime import timedelta

_ONE_MS = timedelta(milliseconds=1)
_LONG_MAX = 2**63 - 1
_ACCEPTED = "datetime.timedelta or int milliseconds"


def toMillis(
    value: object, name: str, *, allowZero: bool = False, allowNegative: bool = False
) -> int:
    """The duration `value` in whole milliseconds, checked for type and sign.

    `value` is a ``datetime.timedelta`` (which must be a whole number of milliseconds) or an
    integer of milliseconds; ``bool`` and floats are refused so that ``1.5`` or ``True`` never
    turn silently into a duration. By default the duration must be positive; `allowZero`
    also accepts 0 and `allowNegative` accepts any sign (offsets). `name` is the parameter's
    name, used in the error messages.

    Example::

        toMillis(timedelta(seconds=5), "size")       # 5000
        toMillis(0, "lateness", allowZero=True)      # 0
        toMillis(-500, "offset", allowNegative=True)  # -500
    """
    if isinstance(value, timedelta):
        if value % _ONE_MS:
            raise ValueError(
                f"{name} must be a whole number of milliseconds, got {value!r}; "
                "round it to milliseconds or pass int milliseconds"
            )
        millis = value // _ONE_MS
        shown = f"{value!r} ({millis} ms)"
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        millis = int(value)
        shown = str(millis)
    else:
        hint = ""
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            hint = "; write fractions of a second as datetime.timedelta or int milliseconds"
        raise TypeError(
            f"{name} must be a duration ({_ACCEPTED}), got {type(value).__name__} {value!r}{hint}"
        )

    if abs(millis) > _LONG_MAX:
        raise ValueError(f"{name} is too large for 64-bit milliseconds, got {shown}")
    if allowNegative:
        return millis
    if allowZero and millis < 0:
        raise ValueError(f"{name} must be a non-negative duration ({_ACCEPTED}), got {shown}")
    if not allowZero and millis <= 0:
        raise ValueError(f"{name} must be a positive duration ({_ACCEPTED}), got {shown}")
    return millis


def toCount(value: object, name: str, *, allowZero: bool = False) -> int:
    """A positive (or, with `allowZero`, non-negative) integer count such as a number of
    elements; ``bool`` and floats are refused.

    Example::

        toCount(100, "count")  # 100
    """
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    count = int(value)
    if count > _LONG_MAX:
        raise ValueError(f"{name} is too large for a 64-bit count, got {count}")
    if allowZero and count < 0:
        raise ValueError(f"{name} must be a non-negative int, got {count}")
    if not allowZero and count <= 0:
        raise ValueError(f"{name} must be a positive int, got {count}")
    return count


def toThreshold(value: object, name: str) -> float:
    """A finite, non-negative number (int or float, not bool) such as a delta threshold.

    Example::

        toThreshold(5, "threshold")  # 5.0
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a number (int or float), got {type(value).__name__}")
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be a finite number, got {number}")
    if number < 0:
        raise ValueError(f"{name} must not be negative, got {number}")
    return number


def toBool(value: object, name: str) -> bool:
    """`value` itself when it is a bool; a TypeError naming `name` otherwise.

    Example::

        toBool(True, "doEvictAfter")  # True
    """
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool (True or False), got {type(value).__name__}")
    return value


def toColumnNames(columns: tuple[object, ...], name: str, factory: str) -> tuple[str, ...]:
    """At least one column name, all non-empty strings, none repeated; `factory` is the call
    the names were given to, for the messages.

    Example::

        toColumnNames(("x", "y"), "columns", "DeltaTrigger.of")  # ('x', 'y')
    """
    if len(columns) == 1 and isinstance(columns[0], list | tuple):
        raise TypeError(
            f"{factory} takes its {name} as separate arguments, e.g. {factory}(5.0, 'x', 'y'); "
            f"unpack the list with *{name}"
        )
    if not columns:
        raise ValueError(f"{factory} needs at least one column in {name}, e.g. {factory}(5.0, 'x')")
    for i, column in enumerate(columns):
        if not isinstance(column, str):
            raise TypeError(
                f"{name}[{i}] must be a column name (str), got {type(column).__name__} {column!r}"
            )
        if not column:
            raise ValueError(f"{name}[{i}] must be a non-empty column name, got ''")
    names = tuple(str(c) for c in columns)
    seen: set[str] = set()
    for column in names:
        if column in seen:
            raise ValueError(f"{name} names {column!r} twice; list each column once")
        seen.add(column)
    return names
