"""Watermark strategies: how a pipeline's event-time clock (the watermark) follows the data.

Flink's ``WatermarkStrategy`` factories plus Storm's lag, as immutable values that turn into
the WATERMARK part of the plan (`docs/plan.md`). A strategy is only a description; the JVM
generates the watermarks. This module does not look at DataFrames: the punctuated marker
column is checked against the schema by `sparkwin.stream`.

Example::

    from datetime import timedelta
    from sparkwin import WatermarkStrategy
    WatermarkStrategy.forBoundedOutOfOrderness(timedelta(seconds=5)).withIdleness(60_000)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sparkwin._plan.durations import toMillis

__all__ = ["WatermarkStrategy"]

DEFAULT_INTERVAL_MS = 200
STORM_DEFAULT_INTERVAL_MS = 1000

_BOUNDED = "boundedOutOfOrderness"
_PUNCTUATED = "punctuated"
_STORM_LAG = "stormLag"
_NONE = "none"


@dataclass(frozen=True, repr=False)
class WatermarkStrategy:
    """How watermarks are generated. Build one with a factory (`forBoundedOutOfOrderness`,
    `forMonotonousTimestamps`, `noWatermarks`, `forPunctuated`, `forStormLag`), then refine it
    with `withIdleness` and `withAutoWatermarkInterval`, which return new strategies.
    """

    kind: str
    boundMs: int | None = None
    lagMs: int | None = None
    markerColumn: str | None = None
    idleTimeoutMs: int | None = None
    intervalMs: int = DEFAULT_INTERVAL_MS

    @staticmethod
    def forBoundedOutOfOrderness(maxOutOfOrderness: Any) -> WatermarkStrategy:
        """Watermark = largest timestamp seen - `maxOutOfOrderness` - 1, emitted periodically.
        `maxOutOfOrderness` is a ``timedelta`` or int milliseconds, >= 0.

        Example::

            sparkwin.stream(df, "ts",
                            watermark=WatermarkStrategy.forBoundedOutOfOrderness(
                                timedelta(seconds=5)))
        """
        return WatermarkStrategy(
            _BOUNDED, boundMs=toMillis(maxOutOfOrderness, "maxOutOfOrderness", allowZero=True)
        )

    @staticmethod
    def forMonotonousTimestamps() -> WatermarkStrategy:
        """For timestamps that never go backwards: bounded out-of-orderness with bound 0.

        Example::

            sparkwin.stream(df, "ts", watermark=WatermarkStrategy.forMonotonousTimestamps())
        """
        return WatermarkStrategy(_BOUNDED, boundMs=0)

    @staticmethod
    def noWatermarks() -> WatermarkStrategy:
        """No watermarks at all (processing-time pipelines); the plan's watermark is null.

        Example::

            sparkwin.stream(df, "ts", watermark=WatermarkStrategy.noWatermarks())
        """
        return WatermarkStrategy(_NONE)

    @staticmethod
    def forPunctuated(markerColumn: str, maxOutOfOrderness: Any = 0) -> WatermarkStrategy:
        """Emit a watermark (largest timestamp seen - `maxOutOfOrderness` - 1) on every element
        whose boolean `markerColumn` is true, and none periodically.

        Example::

            sparkwin.stream(df, "ts", watermark=WatermarkStrategy.forPunctuated("is_marker"))
        """
        if not isinstance(markerColumn, str):
            raise TypeError(
                f"markerColumn must be the name (str) of a boolean column, got "
                f"{type(markerColumn).__name__} {markerColumn!r}"
            )
        if not markerColumn:
            raise ValueError("markerColumn must be a non-empty column name")
        return WatermarkStrategy(
            _PUNCTUATED,
            boundMs=toMillis(maxOutOfOrderness, "maxOutOfOrderness", allowZero=True),
            markerColumn=markerColumn,
        )

    @staticmethod
    def forStormLag(lag: Any) -> WatermarkStrategy:
        """Storm's watermark: largest timestamp seen - `lag` (``timedelta`` or int
        milliseconds, >= 0), emitted every second by default.

        Example::

            sparkwin.stream(df, "ts", watermark=WatermarkStrategy.forStormLag(5_000))
        """
        return WatermarkStrategy(
            _STORM_LAG,
            lagMs=toMillis(lag, "lag", allowZero=True),
            intervalMs=STORM_DEFAULT_INTERVAL_MS,
        )

    def withIdleness(self, timeout: Any) -> WatermarkStrategy:
        """A copy that marks an input channel idle after `timeout` (``timedelta`` or int
        milliseconds, > 0) without elements, so it stops holding the watermark back.

        Example::

            WatermarkStrategy.forBoundedOutOfOrderness(5_000).withIdleness(timedelta(minutes=1))
        """
        self._requireWatermarks("withIdleness")
        return replace(self, idleTimeoutMs=toMillis(timeout, "timeout"))

    def withAutoWatermarkInterval(self, interval: Any) -> WatermarkStrategy:
        """A copy that emits periodic watermarks every `interval` (``timedelta`` or int
        milliseconds, > 0) instead of 200 ms (1000 ms for `forStormLag`).

        Example::

            WatermarkStrategy.forMonotonousTimestamps().withAutoWatermarkInterval(1_000)
        """
        self._requireWatermarks("withAutoWatermarkInterval")
        return replace(self, intervalMs=toMillis(interval, "interval"))

    @property
    def generatesWatermarks(self) -> bool:
        """False only for `noWatermarks()`.

        Example::

            WatermarkStrategy.noWatermarks().generatesWatermarks  # False
        """
        return self.kind != _NONE

    @property
    def referencedColumns(self) -> frozenset[str]:
        """The input columns the strategy reads: the marker column of `forPunctuated`.

        Example::

            WatermarkStrategy.forPunctuated("is_marker").referencedColumns
            # frozenset({'is_marker'})
        """
        return frozenset() if self.markerColumn is None else frozenset({self.markerColumn})

    def jsonValue(self) -> dict[str, Any] | None:
        """The WATERMARK fragment of the plan as a JSON-ready dict; None for `noWatermarks()`.

        Example::

            WatermarkStrategy.forStormLag(5_000).jsonValue()
            # {'kind': 'stormLag', 'lagMs': 5000, 'idleTimeoutMs': None, 'intervalMs': 1000}
        """
        common = {"idleTimeoutMs": self.idleTimeoutMs, "intervalMs": self.intervalMs}
        if self.kind == _BOUNDED:
            return {"kind": _BOUNDED, "boundMs": self.boundMs, **common}
        if self.kind == _PUNCTUATED:
            return {
                "kind": _PUNCTUATED,
                "markerColumn": self.markerColumn,
                "boundMs": self.boundMs,
                **common,
            }
        if self.kind == _STORM_LAG:
            return {"kind": _STORM_LAG, "lagMs": self.lagMs, **common}
        return None

    def _requireWatermarks(self, method: str) -> None:
        if not self.generatesWatermarks:
            raise ValueError(
                f"{method}() does not apply to WatermarkStrategy.noWatermarks(), which emits no "
                "watermarks; start from a strategy that does, e.g. "
                "WatermarkStrategy.forBoundedOutOfOrderness(5_000)"
            )

    def __repr__(self) -> str:
        if self.kind == _BOUNDED and self.boundMs == 0:
            text = "WatermarkStrategy.forMonotonousTimestamps()"
        elif self.kind == _BOUNDED:
            text = f"WatermarkStrategy.forBoundedOutOfOrderness({self.boundMs})"
        elif self.kind == _PUNCTUATED:
            bound = f", maxOutOfOrderness={self.boundMs}" if self.boundMs else ""
            text = f"WatermarkStrategy.forPunctuated({self.markerColumn!r}{bound})"
        elif self.kind == _STORM_LAG:
            text = f"WatermarkStrategy.forStormLag({self.lagMs})"
        else:
            return "WatermarkStrategy.noWatermarks()"
        if self.idleTimeoutMs is not None:
            text += f".withIdleness({self.idleTimeoutMs})"
        default = STORM_DEFAULT_INTERVAL_MS if self.kind == _STORM_LAG else DEFAULT_INTERVAL_MS
        if self.intervalMs != default:
            text += f".withAutoWatermarkInterval({self.intervalMs})"
        return text
