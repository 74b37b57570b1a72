"""Settings on a SparkSession builder that hold comma-separated lists (jars, packages,
extensions, plugin classes): sparkwin adds its item and keeps every item already there.
"""

from __future__ import annotations

from typing import Any


def withItem(builder: Any, key: str, item: str) -> Any:
    """``builder`` with ``item`` added to the list option ``key`` unless it is there already.

    Example::

        withItem(SparkSession.builder, "spark.sql.extensions", "a.B")
    """
    existing = builder._options.get(key)
    items = [i.strip() for i in str(existing or "").split(",") if i.strip()]
    if item not in items:
        items.append(item)
    return builder.config(key, ",".join(items))
