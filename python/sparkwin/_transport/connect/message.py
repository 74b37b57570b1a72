"""The Spark Connect relation sparkwin sends: a ``LogicalPlan`` whose ``plan()`` is a
``spark.connect.Relation`` with ``extension`` set to a packed ``SparkwinRelation``.

The message's one definition is contract.json's ``connect`` section (type URL, field numbers
and types, operations), which the server's plugin (``sparkwin.gateway.connect.RelationMessage``)
reads too; it is written here in protobuf's wire format by hand rather than generated. This
module imports PySpark's Connect client, which needs ``pyspark[connect]``; the Connect transport
(``sparkwin._transport.connect``) imports it only for Connect sessions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyspark.sql.connect.proto as proto
from pyspark.sql.connect.plan import LogicalPlan

from sparkwin._plan.contract import CONNECT_FIELDS, CONNECT_OPERATIONS, CONNECT_TYPE_URL

if TYPE_CHECKING:
    from pyspark.sql.connect.client import SparkConnectClient

TYPE_URL = CONNECT_TYPE_URL


def _operation(name: str) -> str:
    if name not in CONNECT_OPERATIONS:  # pragma: no cover - a contract without it
        raise RuntimeError(f"contract.json's connect message has no operation {name!r}")
    return name


WINDOWED, DESCRIBE, VERSION, VALIDATE, STATE_READ, STATE_BATCH = map(
    _operation, ("windowed", "describe", "version", "validate", "stateRead", "stateBatch")
)

# Protobuf's wire types of the contract's field types.
_WIRE_TYPES = {"string": 2, "relation": 2, "bool": 0}


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


def _field(name: str, payload: bytes | bool) -> bytes:
    """One field of the message, tagged as the contract numbers and types it."""
    number, kind = CONNECT_FIELDS[name]
    tag = _varint(number << 3 | _WIRE_TYPES[kind])
    if isinstance(payload, bool):
        return tag + _varint(int(payload))
    return tag + _varint(len(payload)) + payload


def encode(
    operation: str,
    planJson: str,
    inputRelation: bytes | None,
    streaming: bool = False,
    argumentsJson: str = "",
) -> bytes:
    """``SparkwinRelation`` in protobuf's wire format; proto3 leaves empty fields out."""
    out = _field("operation", operation.encode("utf-8"))
    if planJson:
        out += _field("plan_json", planJson.encode("utf-8"))
    if inputRelation is not None:
        out += _field("input", inputRelation)
    if streaming:
        out += _field("streaming", True)
    if argumentsJson:
        out += _field("arguments_json", argumentsJson.encode("utf-8"))
    return out


class SparkwinRelation(LogicalPlan):
    """A sparkwin operation on the server, on top of the input DataFrame's plan (``child``)."""

    def __init__(
        self,
        operation: str,
        planJson: str,
        child: LogicalPlan | None = None,
        streaming: bool = False,
        argumentsJson: str = "",
    ) -> None:
        super().__init__(child)
        self._operation = operation
        self._planJson = planJson
        self._streaming = streaming
        self._argumentsJson = argumentsJson

    def plan(self, session: SparkConnectClient) -> proto.Relation:
        relation = self._create_proto_relation()
        inputRelation = None
        if self._child is not None:
            inputRelation = self._child.plan(session).SerializeToString()
        relation.extension.type_url = TYPE_URL
        relation.extension.value = encode(
            self._operation, self._planJson, inputRelation, self._streaming, self._argumentsJson
        )
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
