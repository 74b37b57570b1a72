"""The README's testing example runs and prints exactly what the README shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_testing_example_prints_what_the_readme_shows(spark) -> None:
    text = README.read_text()
    match = re.search(
        r"<!-- readme-test -->\n```python\n(.*?)```\n```output\n(.*?)```", text, re.DOTALL
    )
    assert match, "README lost its tested example"
    code, expected = match.groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue() == expected
