"""Where each pane's rows start and end in the Arrow batches `mapInPandas` hands over: the rows
of one pane are adjacent, and a pane may span batches, so the last one of a batch waits for the
next (or for the end). Both pane runners cut panes by position with it, never by grouping."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd


def paneBounds(
    batches: Iterator[pd.DataFrame], starts: Callable[[pd.DataFrame], np.ndarray]
) -> Iterator[tuple[pd.DataFrame, np.ndarray, np.ndarray]]:
    """Each batch (with the rows carried over) and its complete panes' start and end positions;
    `starts` gives a batch's pane starts, the first at 0."""
    pending: pd.DataFrame | None = None
    for batch in batches:
        if batch.empty:
            continue
        if pending is not None:
            batch = pd.concat([pending, batch], ignore_index=True)
        first = starts(batch)
        if len(first) > 1:
            yield batch, first[:-1], first[1:]
        pending = batch.iloc[first[-1] :].reset_index(drop=True)
    if pending is not None and not pending.empty:
        yield pending, np.array([0]), np.array([len(pending)])
