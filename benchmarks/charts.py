"""The benchmarks' pictures, drawn with matplotlib (imported only when one is drawn): scale.py's
cost per event as each factor grows, and soak.py's sampled series with the kills marked.

Each draws from what a run already measured into a PNG; nothing here runs a benchmark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def costPerEvent(points: list[dict], path: str) -> None:
    """scale.py's points: a panel per series, microseconds per event per system."""
    plt = _pyplot()
    series = list(dict.fromkeys(p["series"] for p in points))
    fig, axes = plt.subplots(1, len(series), figsize=(4.2 * len(series), 3.6), squeeze=False)
    for ax, name in zip(axes[0], series, strict=True):
        mine = [p for p in points if p["series"] == name]
        labels = list(dict.fromkeys(p["point"] for p in mine))
        for system in dict.fromkeys(p["system"] for p in mine):
            xs = [labels.index(p["point"]) for p in mine if p["system"] == system]
            ys = [p["us_per_event"] for p in mine if p["system"] == system]
            ax.plot(xs, ys, marker="o", label=system)
        ax.set_xticks(range(len(labels)), labels, fontsize=8)
        ax.set_title(name)
        ax.set_ylabel("µs per event")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def soakSeries(report: dict[str, Any], path: Path) -> None:
    """soak.py's samples over the run: state rows, open windows, checkpoint, state versions and
    the two JVMs' live heaps, each kill a vertical line."""
    plt = _pyplot()
    samples = report["samples"]
    t = [s["t"] / 60 for s in samples]
    series = [
        ("stateRows", "state store rows", 1),
        ("openWindows", "open windows", 1),
        ("checkpointBytes", "checkpoint (MiB)", 2**20),
        ("stateVersions", "state versions kept", 1),
        ("driverHeap", "driver live heap (MiB)", 2**20),
        ("executorHeap", "executor live heap (MiB)", 2**20),
    ]
    fig, axes = plt.subplots(len(series), 1, figsize=(8, 9), sharex=True)
    for ax, (name, label, scale) in zip(axes, series, strict=True):
        points = [(x, s[name] / scale) for x, s in zip(t, samples, strict=True) if s.get(name)]
        if points:
            ax.plot(*zip(*points, strict=True), marker=".", linewidth=1)
        for kill in report["kills"]:
            ax.axvline(
                kill["t"] / 60,
                color="red" if kill["target"] == "driver" else "orange",
                alpha=0.4,
                linewidth=0.8,
            )
        ax.set_ylabel(label, fontsize=8)
        ax.set_ylim(bottom=0)
    axes[-1].set_xlabel("minutes (red: driver killed, orange: executor killed)")
    fig.suptitle(
        f"sparkwin soak: {report['seconds'] / 60:.0f} min, {len(report['kills'])} kills, "
        f"lost {report['lost']}, duplicated {report['duplicated']}",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
