"""The JVM's rules on how a plan's pieces combine, asked by the builder after every step, and
their refusals written in the user's words.

``PlanRules`` (in the jar) is the one home of those rules; `ask` sends it the plan so far and
raises its refusal as a `PlanError`, each piece it names (``{/assigner}``, a JSON pointer)
written as the builder object it came from (``TumblingEventTimeWindows.of(1000)``). A plan it
accepts comes back with what the JVM's decoder decides where the plan is silent (the watermark
of Storm windows, ``PlanDecoder.defaultWatermark``). This module decides nothing itself: it
holds no rule, checks no argument and builds no plan.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pyspark.sql import SparkSession

from sparkwin._spark import runtime as _runtime
from sparkwin.errors import PlanError

_PIECE = re.compile(r"\{(/[^{}]*)\}")


def ask(
    spark: SparkSession, streaming: bool, plan: dict[str, Any], pieces: Iterable[Any]
) -> dict[str, Any]:
    """Asks the JVM's rules about the plan so far; raises PlanError with the first refusal,
    each piece of the plan it names (``{/assigner}``) written as the builder's repr of it.
    Accepted, the answer is what the decoder decides where the plan is silent: ``{"watermark":
    ...}``, the strategy's JSON or None."""
    found = _runtime.verdict(spark, json.dumps(plan), streaming)
    if "message" in found:
        raise PlanError(render(str(found["message"]), plan, list(pieces)))
    return dict(found.get("defaults") or {})


def render(message: str, plan: dict[str, Any], pieces: list[Any]) -> str:
    """`message` with each ``{/pointer}`` written as the piece of `plan` it points at: the first
    of `pieces` whose JSON it is, else that JSON (a string in quotes)."""

    def piece(match: re.Match[str]) -> str:
        value: Any = plan
        for step in match.group(1).split("/")[1:]:
            step = step.replace("~1", "/").replace("~0", "~")  # JSON pointer escapes
            value = value[int(step)] if isinstance(value, list) else value.get(step)
        if isinstance(value, dict):
            named = [p for p in pieces if p.jsonValue() == value]
            if named:
                return repr(named[0])
        return repr(value) if isinstance(value, str) else json.dumps(value)

    return _PIECE.sub(piece, message)
