"""Spark Columns where a user writes logic: an aggregate's input, a trigger's condition. Spark
computes each into a hidden column of the pipeline's input (named here, ``__sparkwin_...``)
before the engine reads it, so no Python runs per event and the JVM sees a plain column."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from pyspark.sql import Column

# A column a piece reads: its name, or a Spark Column Spark computes before the engine.
ColumnOrName = str | Column
COMPUTED_PREFIX = "__sparkwin_"


def expressionText(expression: Any) -> str:
    """A Column's SQL text, as Spark prints it: ``Column<'(price * qty)'>`` gives
    ``(price * qty)``."""
    text = str(expression)
    found = re.fullmatch(r"Column<'(.*)'>", text, re.S)
    return found.group(1) if found else text


def label(column: str) -> str:
    """A column's name as aliases use it: a computed column's readable part."""
    if column.startswith(COMPUTED_PREFIX):
        return column[len(COMPUTED_PREFIX) :].rsplit("__", 1)[0]
    return column


def isColumn(value: object) -> bool:
    """Whether `value` is a Spark Column, of a classic or a Spark Connect session. Connect's
    class (one of its own on PySpark 3.5) is told by its module, never imported: importing
    pyspark.sql.connect without its extra's libraries ends the process on some lines."""
    if isinstance(value, Column):
        return True
    kind = type(value)
    return kind.__name__ == "Column" and kind.__module__.startswith("pyspark.sql.connect")


def computedName(expression: Any) -> str:
    """The hidden input column of a computed input: its expression's words (for a readable
    default alias, ``sum_price_qty``) and a digest of its text (two expressions, two columns)."""
    text = expressionText(expression)
    words = "_".join(re.findall(r"[A-Za-z0-9]+", text))[:40] or "expr"
    digest = hashlib.sha1(text.encode()).hexdigest()[:8]
    return f"{COMPUTED_PREFIX}{words}__{digest}"


def columnInput(
    value: Any, what: str, example: str
) -> tuple[str, tuple[tuple[str, Any, str], ...]]:
    """A piece's input column: its name, and the (hidden name, Column, `what`) Spark computes it
    from when `value` is a Spark Column; `example` shows a valid one in the error otherwise."""
    if isColumn(value):
        name = computedName(value)
        return name, ((name, value, what),)
    if not isinstance(value, str) or not value:
        raise TypeError(
            f"{what}: must be a column's name or a Spark Column such as {example}, got "
            f"{type(value).__name__} {value!r}"
        )
    return value, ()


def shown(column: str, computed: tuple[tuple[str, Any, str], ...]) -> str:
    """How a repr shows an input column: its Column's text when computed, else its name."""
    for name, expression, _ in computed:
        if name == column:
            return str(expression)
    return repr(column)


def columnInputs(
    columns: tuple[Any, ...], what: str
) -> tuple[tuple[Any, ...], tuple[tuple[str, Any, str], ...]]:
    """Several input columns (a delta's): Spark Columns become their hidden names, each with its
    (hidden name, Column, `what`) in the second part; names and anything else stay as given,
    for the caller's checks."""
    out: list[Any] = []
    computed: list[tuple[str, Any, str]] = []
    for value in columns:
        if isColumn(value):
            name, own = columnInput(value, what, "")
            out.append(name)
            computed.extend(own)
        else:
            out.append(value)
    return tuple(out), tuple(computed)
