"""Checks of a builder call's own arguments against the input DataFrame's schema: a column
exists (exactly once, case-sensitively), has a type the call can use, declared channels are
values of the channel column, a ``process()`` schema parses.

Each raises TypeError or ValueError naming the parameter and saying how to fix it, as
delta-spark checks its arguments. These are checks of one call alone: how a plan's pieces
combine is the JVM's to say (``PlanRules``, asked through `sparkwin._plan.refusal`). This module
reads schemas only: it never asks the JVM, builds a plan, or imports anything of sparkwin.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql.types import (
    ByteType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    NumericType,
    ShortType,
    StringType,
    StructField,
    StructType,
    _parse_datatype_string,
)

INTEGRAL_TYPES = (ByteType, ShortType, IntegerType, LongType)
_NUMERIC_WORDS = "byte, short, int, long, float, double or decimal"


def columnOf(schema: StructType, column: str, what: str) -> StructField:
    """The top-level field `column`, or a ValueError naming `what` and the available columns."""
    matches = [f for f in schema.fields if f.name == column]
    if len(matches) == 1:
        return matches[0]
    names = schema.fieldNames()
    if len(matches) > 1:
        raise ValueError(
            f"{what}: the DataFrame has {len(matches)} columns named {column!r}; rename them "
            "(e.g. withColumnRenamed or select with aliases) so the name is unique"
        )
    hint = ""
    similar = [n for n in names if n.lower() == column.lower()]
    if similar:
        hint = f" (column names are case-sensitive here: did you mean {similar[0]!r}?)"
    raise ValueError(
        f"{what}: {column!r} is not a column of the DataFrame{hint}; available columns: "
        f"{', '.join(names) if names else '(none)'}"
    )


def requireType(
    field: StructField, accepted: tuple[type[DataType], ...], what: str, words: str
) -> None:
    if not isinstance(field.dataType, accepted):
        raise TypeError(
            f"{what}: column {field.name!r} is {field.dataType.simpleString()}, but {words}"
        )


def columnName(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a column name (str), got {type(value).__name__} {value!r}")
    if not value:
        raise ValueError(f"{what} must be a non-empty column name")
    return value


def checkDeltaColumns(schema: StructType, columns: tuple[str, ...], what: str) -> None:
    for column in columns:
        field = columnOf(schema, column, f"{what} columns")
        requireType(field, (NumericType,), f"{what} columns", f"a delta needs {_NUMERIC_WORDS}")


def looseChannels(channels: object) -> tuple[str, ...]:
    """Declared channels as the plan writes them, where no channel column says their type."""
    if isinstance(channels, str | bytes) or not isinstance(channels, Iterable):
        return ()
    return tuple(str(c) for c in channels)


def declaredChannels(field: StructField, channels: object) -> tuple[str, ...]:
    """The declared channel values as the JVM names channels: the column's value as a string."""
    if isinstance(channels, str | bytes) or not isinstance(channels, Iterable):
        raise TypeError(
            f"channels must be a list (or range) of the channel column's values, got "
            f"{channels!r}; e.g. channels=range(8) for a topic of 8 partitions"
        )
    values = list(channels)
    if not values:
        raise ValueError("channels: give at least one channel, or leave channels out")
    integral = isinstance(field.dataType, INTEGRAL_TYPES)
    if not integral and not isinstance(field.dataType, StringType):
        raise TypeError(
            f"channels: column {field.name!r} is {field.dataType.simpleString()}; declared "
            "channels are ints of an integer column or strings of a string column: make the "
            "channel one, e.g. F.concat_ws(':', 'topic', F.col('partition').cast('string'))"
        )
    want, kind = (int, "int") if integral else (str, "string")
    names: list[str] = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, want) or value == "":
            raise TypeError(
                f"channels: {value!r} is not a {kind} value of column {field.name!r} "
                f"({field.dataType.simpleString()})"
            )
        if str(value) in names:
            raise ValueError(f"channels: {value!r} is declared twice")
        names.append(str(value))
    return tuple(names)


def checkChannel(field: StructField) -> None:
    """A channel column identifies channels by value: no maps, no floating-point numbers."""
    if isinstance(field.dataType, MapType | FloatType | DoubleType | NullType):
        raise TypeError(
            f"channel: column {field.name!r} is {field.dataType.simpleString()}, which cannot "
            "name an input channel; use a column that identifies one, such as an int partition, "
            "a string shard id, or F.struct('topic', 'partition')"
        )


def outputSchema(schema: object) -> StructType:
    if isinstance(schema, StructType):
        parsed = schema
    elif isinstance(schema, str):
        try:
            # StructType.fromDDL is PySpark 4's; 3.5 parses with the same JVM parser here.
            fromDDL = getattr(StructType, "fromDDL", None) or _parse_datatype_string
            parsedType = fromDDL(schema)
        except Exception as exc:  # ParseException from the JVM, or no active session
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ValueError(
                f"schema: could not parse {schema!r} as a DDL schema ({first}); write it like "
                "'user string, n long' or pass a StructType"
            ) from None
        if not isinstance(parsedType, StructType):
            raise ValueError(
                f"schema: {schema!r} is a single type, not a list of columns; write it like "
                "'user string, n long' or pass a StructType"
            )
        parsed = parsedType
    else:
        raise TypeError(
            "schema must be a pyspark StructType or a DDL string such as 'user string, n long', "
            f"got {type(schema).__name__} {schema!r}"
        )
    if not parsed.fields:
        raise ValueError("schema must have at least one column, e.g. 'user string, n long'")
    return parsed
