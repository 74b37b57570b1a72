"""What a pipeline will run, in words: the builder chain, where its watermarks come from, the
engine's algorithm and state layout, Spark's time mode and the outputs' schemas. Behind
``Pipeline.describe()`` and ``Pipeline.explain()``; the JVM decides the algorithm and time mode,
so the answer is the jar's, on classic and Connect sessions alike."""

from __future__ import annotations

from typing import Any

from sparkwin._plan.contract import EVENT_TIME_METADATA
from sparkwin._spark import runtime as _runtime

__all__ = ["describe", "render"]


def describe(
    pipeline: Any, realTime: bool = False, checkpointLocation: str | None = None
) -> dict[str, Any]:
    """A ``Pipeline``'s run as a dict of plain values (see ``Pipeline.describe``); typed loosely
    because ``pipeline`` imports this module."""
    plan = pipeline.plan
    streaming = pipeline.df.isStreaming
    jvm = _runtime.describe(
        pipeline.df.sparkSession,
        pipeline.planJson(),
        realTime and streaming,
        checkpointLocation if streaming else None,
    )
    mode = None
    if streaming and jvm["mode"] == "realTime":
        mode = (
            "real-time: one long batch, rows processed as they arrive; windows fire while it "
            "runs, as the key groups' own watermark passes their end"
        )
        runtime = (
            f"streaming: {jvm['operator']} over key groups ({jvm['operatorOrigin']}), "
            "one real-time query"
        )
    elif streaming:
        mode = "micro-batch: windows fire in the batch whose watermark passes their end"
        runtime = (
            f"streaming: {jvm['operator']} over key groups ({jvm['operatorOrigin']}), "
            "one query for every output"
        )
    elif plan.get("arrival"):
        runtime = f"replay: bounded input in arrival order of column {plan['arrival']!r}"
    else:
        runtime = "bounded: each key's events in event-time order, then watermark +infinity"
    outputs = {tag: schema.simpleString() for tag, schema in pipeline.schemas().items()}
    watermarks = _watermarks(plan, streaming)
    if mode is not None and jvm["mode"] == "realTime" and jvm["ownWatermark"]:
        watermarks = _realTimeWatermarks(plan)
    return {
        "pipeline": repr(pipeline),
        "runtime": runtime,
        "mode": mode or "batch (a bounded input)",
        "watermarks": watermarks,
        "operator": jvm["algorithm"],
        "timeMode": jvm["timeMode"],
        "timers": jvm["timers"],
        "timerDomains": jvm["timerDomains"],
        "clock": bool(jvm["clock"]) and streaming,
        "keyGroups": jvm["keyGroups"] if streaming else None,
        "outputs": outputs,
    }


def render(described: dict[str, Any]) -> str:
    """``describe()``'s dict as the text ``explain()`` prints."""
    lines = [
        described["pipeline"],
        f"  runtime:    {described['runtime']}",
        f"  mode:       {described['mode']}",
        f"  watermarks: {described['watermarks']}",
        f"  operator:   {described['operator']}",
        f"  timers:     {described['timers']} (engine timers: "
        f"{described['timerDomains']})"
        + (", processing time from sparkwin's clock source" if described["clock"] else ""),
    ]
    groups = described.get("keyGroups")
    if groups:
        lines.append(f"  key groups: {groups['count']} ({groups['origin']})")
    lines += [
        "  outputs:",
    ]
    width = max(len(tag) for tag in described["outputs"])
    lines += [f"    {tag:<{width}}  {s}" for tag, s in described["outputs"].items()]
    return "\n".join(lines)


def _watermarks(plan: dict[str, Any], streaming: bool) -> str:
    strategy = plan.get("watermark")
    if strategy is None and streaming and _inherits(plan):
        return "inherited: Spark's watermark, set by the upstream pipeline (chained windows)"
    if strategy is None:
        return "none (processing time)"
    text = _strategy(strategy)
    channel = plan.get("channel")
    if channel is not None:
        where = "at micro-batch boundaries, kept in the checkpoint" if streaming else "by arrival"
        declared = plan.get("channels")
        if declared:
            where += f"; channels {', '.join(declared)} hold it back from the first data"
        return f"{text} per channel of {channel!r}, a valve over the channels ({where})"
    if streaming:
        return f"{text}, as Spark's global watermark (no rows dropped before sparkwin)"
    return f"{text}; a bounded input ends at +infinity"


def _realTimeWatermarks(plan: dict[str, Any]) -> str:
    text = _strategy(plan["watermark"])
    channel = plan.get("channel")
    over = (
        f"per channel of {channel!r}, a valve over the channels"
        if channel
        else (
            "per source partition (a channel each, every one the batch reads holding it back "
            "until it delivers or goes idle), a valve over them"
        )
    )
    return (
        f"{text} {over}, moved while a batch runs by the map side's summaries, kept in the "
        "checkpoint (no Spark watermark)"
    )


def _inherits(plan: dict[str, Any]) -> bool:
    fields = {f["name"]: f for f in plan["inputSchema"]["fields"]}
    meta = fields.get(plan["timestamp"], {}).get("metadata", {})
    return bool(meta.get(EVENT_TIME_METADATA, False))


def _strategy(strategy: dict[str, Any]) -> str:
    kind = strategy.get("kind")
    if kind == "boundedOutOfOrderness":
        text = f"bounded out-of-orderness {strategy.get('boundMs')} ms"
    elif kind == "stormLag":
        text = f"Storm lag {strategy.get('lagMs')} ms"
    elif kind == "punctuated":
        text = f"punctuated by {strategy.get('markerColumn')!r}"
    else:
        text = str(kind)
    idle = strategy.get("idleTimeoutMs")
    if idle is not None:
        text += f", idle after {idle} ms"
    return text
