"""The concept pages' examples run, and print exactly what the pages show.

Each page's ```python blocks run in order in one namespace (with ``spark`` and ``sw``); a block
followed by an ```output block must print exactly that. Blocks marked ``python notest`` are
illustrations that need a real cluster path and are not run. A page that names the example
extensions (``sw.jvm``) runs with their jar on the session, as its notest block would add it.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import sparkwin as sw

PAGES = sorted((Path(__file__).resolve().parent.parent / "docs" / "concepts").glob("*.md"))
BLOCK = re.compile(r"```python\n(.*?)```\n(?:```output\n(.*?)```\n)?", re.S)


def test_every_concept_page_is_there() -> None:
    names = {p.name for p in PAGES}
    assert {
        "README.md",
        "windows.md",
        "watermarks.md",
        "lateness.md",
        "triggers.md",
        "beam-triggers-and-panes.md",
        "evictors.md",
        "storm.md",
        "spark.md",
        "testing.md",
        "extending.md",
    } <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_examples_print_what_the_page_shows(spark, request, page: Path) -> None:
    namespace = {"spark": spark, "sw": sw}
    text = page.read_text()
    if "sw.jvm." in text:
        request.getfixturevalue("extendingJar")
    for match in BLOCK.finditer(text):
        code, expected = match.groups()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(page), "exec"), namespace)
        if expected is not None:
            assert out.getvalue() == expected, f"{page.name}: output differs for\n{code}"
