"""Where a Spark JVM's task threads spend their time: a JFR recording's samples, split by what
they were doing. For the latency benchmark's profiles (`benchmarks/latency.py --jfr`).

    python benchmarks/jfr_split.py /tmp/rt.jfr            # the table
    python benchmarks/jfr_split.py /tmp/rt.jfr --json      # the same, as JSON
    python benchmarks/jfr_split.py /tmp/rt.jfr --after 30  # only samples 30 s after the first

Each sample of a Spark task thread (`Executor task launch worker`) goes to one category, the
first of these that any of its frames belongs to (so RocksDB called from Spark's state encoding
called from sparkwin's buckets counts as RocksDB, and the engine called from the loop as the
engine); a sample is the stateful stage's when its stack shows the stateful operator, else the
map side's (Spark 4 names task threads without their stage, so the stack decides; the recording
needs a stack depth that reaches the operator, as `latency.py --jfr` sets). Java samples
(`jdk.ExecutionSample`) and threads in native code (`jdk.NativeMethodSample`, where RocksDB's
JNI calls spend their time) are both counted; a native sample waiting (a poll, a sleep) is not
work, and is counted apart.

It reads the `jfr` tool's text output and does not run Spark: it must not start anything.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

# (category, pattern on a frame's method name `package.Class.method`), in the order they win.
RULES: list[tuple[str, re.Pattern[str]]] = [
    (c, re.compile(p))
    for c, p in [
        ("rocksdb", r"^org\.rocksdb\.|\.state\.RocksDB|RocksDBStateStore"),
        (
            "spark state encoding",
            r"StateEncoder|StateTypesEncoder|ValueStateImpl|MapStateImpl|ListStateImpl|"
            r"TimerStateImpl|StatefulProcessorHandleImpl|StateStoreColumnFamilySchemaUtils",
        ),
        (
            "sparkwin codecs",
            r"^sparkwin\.runtime\.spark\.(?:task\.)?(GroupRecord|KeyBuckets|KeyBytes|WakeupTable|KeyId|"
            r"StoreMirror|DecodedStates)|"
            r"^sparkwin\.operator\.store\.",
        ),
        # Spark turning rows into objects and back for sparkwin's functions (lazily, inside
        # sparkwin's frames, so before them): Spark's row handling, not sparkwin's.
        (
            "spark projection",
            r"GeneratedClass\$Specific(Safe|Unsafe)Projection|ObjectOperator|ExpressionEncoder|"
            r"^org\.apache\.spark\.unsafe\.types\.UTF8String",
        ),
        (
            "sparkwin map side",
            r"^sparkwin\.runtime\.spark\.(?:task\.|query\.)?(ChannelSummaries\$Tap|SparkRuntime|Combiner)",
        ),
        (
            "engine",
            r"^sparkwin\.(operator|core|algorithm|windowing)\.|^sparkwin\.runtime\.Driver",
        ),
        (
            "sparkwin loop",
            r"^sparkwin\.runtime\.spark\.(?:task\.)?(KeyGroupLoop|KeyGroupProcessor|ChannelSummaries|"
            r"RowCollector|OutputLayout|Rows|RowRecord|SparkKeyBackend)|"
            r"^sparkwin\.plan\.|^sparkwin\.runtime\.TimePolicy|^sparkwin\.",
        ),
        ("kafka", r"^org\.apache\.kafka\.|\.kafka010\."),
        ("shuffle", r"\.shuffle\.|ShuffleExchange|\.storage\.|\.network\.|\.serializer\."),
        ("spark rows", r"^org\.apache\.spark\.|^scala\.|GeneratedClass"),
    ]
]

# What says a stage runs the stateful operator.
STATEFUL = re.compile(r"TransformWithStateExec|KeyGroupProcessor|KeyGroupLoop")
TASK_THREAD = re.compile(r"Executor task launch worker")
# A thread in native code that waits rather than works (the top frame).
WAITING = re.compile(
    r"EPoll\.wait|epollWait|Net\.poll|Net\.accept|\.poll0|socketRead|\.read0|accept0|sleep|park|wait0"
)
# The brief's groups of categories (Spark's own row handling takes three).
GROUPS = {
    "spark rows": "spark row handling",
    "spark projection": "spark row handling",
    "kafka": "spark row handling",
    "shuffle": "spark row handling",
}


@dataclass
class Sample:
    thread: str
    seconds: float  # from the first sample
    frames: list[str] = field(default_factory=list)  # top first, `package.Class.method`
    native: bool = False  # a jdk.NativeMethodSample


def category(frames: list[str]) -> str:
    """The first rule (in RULES' order) that any frame matches; `other` when none does."""
    for name, pattern in RULES:
        if any(pattern.search(f) for f in frames):
            return name
    return "other"


def _clock(text: str) -> float:
    """`04:50:19.123` as seconds of the day."""
    m = re.match(r"(\d+):(\d+):(\d+)(?:\.(\d+))?", text)
    if not m:
        return 0.0
    h, mi, s, frac = m.groups()
    return int(h) * 3600 + int(mi) * 60 + int(s) + (float(f"0.{frac}") if frac else 0.0)


def parse(lines: Iterable[str]) -> Iterator[Sample]:
    """Samples out of `jfr print --events jdk.ExecutionSample,jdk.NativeMethodSample` text."""
    thread, at, frames, inStack, native = "", 0.0, [], False, False
    for raw in lines:
        line = raw.strip()
        if line.startswith("jdk.ExecutionSample") or line.startswith("jdk.NativeMethodSample"):
            thread, at, frames, inStack = "", 0.0, [], False
            native = line.startswith("jdk.NativeMethodSample")
        elif line.startswith("startTime ="):
            at = _clock(line.split("=", 1)[1].strip())
        elif line.startswith("sampledThread ="):
            m = re.search(r'"(.*)"', line)
            thread = m.group(1) if m else ""
        elif line.startswith("stackTrace = ["):
            inStack = True
        elif inStack and line == "]":
            inStack = False
        elif inStack and line and line != "...":
            frames.append(line.split("(", 1)[0].strip())
        elif line == "}" and thread:
            yield Sample(thread, at, frames, native)
            thread = ""


def split(samples: Iterable[Sample], after: float = 0.0) -> dict:
    """Per stage kind (stateful, map side, other threads): samples per category."""
    samples = list(samples)
    start = min((s.seconds for s in samples), default=0.0)
    kinds: dict[str, Counter[str]] = {"stateful": Counter(), "map side": Counter()}
    others: list[Sample] = []
    for s in samples:
        if s.seconds - start < after:
            continue
        if not TASK_THREAD.search(s.thread):
            others.append(s)
            continue
        stateful = any(STATEFUL.search(f) for f in s.frames)
        counts = kinds["stateful" if stateful else "map side"]
        if s.native and s.frames and WAITING.search(s.frames[0]):
            counts["(waiting in native code)"] += 1
        else:
            counts[category(s.frames)] += 1
    kinds["other threads"] = Counter(
        "(waiting in native code)"
        if s.native and s.frames and WAITING.search(s.frames[0])
        else re.sub(r"[\d-]+$", "", s.thread).strip() or "?"
        for s in others
    )
    return {k: dict(v.most_common()) for k, v in kinds.items()}


def table(result: dict) -> str:
    out = []
    for kind, counts in result.items():
        total = sum(n for c, n in counts.items() if not c.startswith("("))
        out.append(f"{kind}: {total} samples at work")
        grouped: Counter[str] = Counter()
        for name, n in counts.items():
            share = "" if name.startswith("(") else f" {100.0 * n / max(total, 1):5.1f}%"
            out.append(f"  {name:28s} {n:7d}{share}")
            grouped[GROUPS.get(name, name)] += n
        if kind != "other threads" and grouped.get("spark row handling"):
            n = grouped["spark row handling"]
            out.append(f"  {'= spark row handling':28s} {n:7d} {100.0 * n / max(total, 1):5.1f}%")
    return "\n".join(out)


def read(path: str) -> list[Sample]:
    text = subprocess.run(
        [
            "jfr",
            "print",
            "--stack-depth",
            "256",
            "--events",
            "jdk.ExecutionSample,jdk.NativeMethodSample",
            path,
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return list(parse(text.splitlines()))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("recording")
    p.add_argument("--after", type=float, default=0.0, help="skip the first seconds of samples")
    p.add_argument("--json", action="store_true")
    p.add_argument("--top", metavar="CATEGORY", help="the stateful stage's top methods in one")
    args = p.parse_args(argv)
    samples = read(args.recording)
    if args.top:
        print(top(samples, args.top, args.after))
        return
    result = split(samples, args.after)
    print(json.dumps(result, indent=2) if args.json else table(result))


def top(samples: list[Sample], name: str, after: float = 0.0, count: int = 25) -> str:
    """The stateful stage's samples of category `name`: the sparkwin or Spark method each was
    in (its first frame of those packages), most frequent first."""
    start = min((s.seconds for s in samples), default=0.0)
    methods: Counter[str] = Counter()
    for s in samples:
        if s.seconds - start < after or not TASK_THREAD.search(s.thread):
            continue
        if not any(STATEFUL.search(f) for f in s.frames) or category(s.frames) != name:
            continue
        own = [
            f for f in s.frames if f.startswith(("sparkwin.", "org.apache.spark.", "org.rocksdb."))
        ]
        methods[(own or s.frames or ["?"])[0]] += 1
    return "\n".join(f"{n:7d}  {m}" for m, n in methods.most_common(count))


if __name__ == "__main__":
    main(sys.argv[1:])
