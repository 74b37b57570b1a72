"""The Spark Connect relation sparkwin sends: a ``LogicalPlan`` whose ``plan()`` is a
``spark.connect.Relation`` with ``extension`` set to a packed ``SparkwinRelation``.

The message is three fields (``jvm/src/main/protobuf/sparkwin_connect.proto``), so it is
written here in protobuf's wire format by hand rather than generated; the server's plugin
(``sparkwin.plan.connect.SparkwinRelationPlugin``) reads it the same way. This module imports
PySpark's Connect client, which needs ``pyspark[connect]``; ``sparkwin._connect`` imports it only
for Connect sessions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyspark.sql.connect.proto as proto
from pyspark.sql.connect.plan import LogicalPlan

if TYPE_CHECKING:
    from pyspark.sql.connect.client import SparkConnectClient

TYPE_URL = "type.googleapis.com/sparkwin.plan.connect.SparkwinRelation"
WINDOWED, DESCRIBE, VERSION = "windowed", "describe", "version"

# Field numbers of SparkwinRelation.
_OPERATION, _PLAN_JSON, _INPUT = 1, 2, 3
_LENGTH_DELIMITED = 2


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _lengthDelimited(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | _LENGTH_DELIMITED) + _varint(len(payload)) + payload


def encode(operation: str, planJson: str, inputRelation: bytes | None) -> bytes:
    """``SparkwinRelation`` in protobuf's wire format; proto3 leaves empty fields out."""
    out = _lengthDelimited(_OPERATION, operation.encode("utf-8"))
    if planJson:
        out += _lengthDelimited(_PLAN_JSON, planJson.encode("utf-8"))
    if inputRelation is not None:
        out += _lengthDelimited(_INPUT, inputRelation)
    return out


class SparkwinRelation(LogicalPlan):
    """A sparkwin operation on the server, on top of the input DataFrame's plan (``child``)."""

    def __init__(self, operation: str, planJson: str, child: LogicalPlan | None = None) -> None:
        super().__init__(child)
        self._operation = operation
        self._planJson = planJson

    def plan(self, session: SparkConnectClient) -> proto.Relation:
        relation = self._create_proto_relation()
        inputRelation = None
        if self._child is not None:
            inputRelation = self._child.plan(session).SerializeToString()
        relation.extension.type_url = TYPE_URL
        relation.extension.value = encode(self._operation, self._planJson, inputRelation)
        return relation

    # Shown by df.explain-like printing of the client's plan; the plan JSON is left out (long).
    def print(self, indent: int = 0) -> str:
        head = f"{' ' * indent}<SparkwinRelation operation='{self._operation}'>"
        return f"{head}\n{self._child_print(indent)}"

    def _repr_html_(self) -> str:
        return (
            f"<ul><li><b>SparkwinRelation</b> operation='{self._operation}'"
            f"{self._child_repr()}</li></ul>"
        )
