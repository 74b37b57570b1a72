"""The README's testing example runs and prints exactly what the README shows."""

from __future__ import annotations

import contextlib
import io
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")  # a markdown link's target, without #anchor


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


def test_readme_replay_example_runs_on_a_history(spark) -> None:
    text = README.read_text()
    match = re.search(r"<!-- readme-replay -->\n```python\n(.*?)```", text, re.DOTALL)
    assert match, "README lost its replay example"
    base = datetime(2026, 1, 1, tzinfo=UTC)
    rows = []
    for i in range(1200):
        arrival = base + timedelta(milliseconds=250 * i)
        # every 40th event happened 8 minutes before it arrived: later than 5 s of disorder plus
        # 5 minutes of lateness allow, so the live job sent it to "late"
        behind = timedelta(minutes=8) if i % 40 == 39 else timedelta(seconds=i % 4)
        rows.append((f"u{i % 2}", i, arrival - behind, arrival, i % 3))
    history = spark.createDataFrame(
        rows, "user string, amount long, ts timestamp, kafka_offset_time timestamp, partition int"
    )
    scope: dict = {"history": history}
    prelude = "from datetime import timedelta as td\nimport sparkwin as sw\n"
    exec(compile(prelude + match.group(1), "README.md", "exec"), scope)
    results = scope["replayed"].toDF().collect()
    late = {r["amount"] for r in scope["replayed"].getSideOutput("late").collect()}
    assert late == {i for i in range(1200) if i % 40 == 39}
    assert {r["pane_timing"] for r in results} == {"EARLY", "ON_TIME"}
    assert all(r["fired_at"] is not None for r in results)
    # accumulating panes: the last pane of a window holds all its events; only the newest
    # minute is still open, as the live job would have it without a watermark past its end
    expected: dict = {}
    for row in history.collect():  # collected like the results: local, naive datetimes
        if row["amount"] not in late:
            start = row["ts"].replace(second=0, microsecond=0)
            expected[(row["user"], start)] = expected.get((row["user"], start), 0) + row["amount"]
    closed = {(r["user"], r["window_start"]): r["sum_amount"] for r in results if r["pane_is_last"]}
    still_open = {k for k in expected if k not in closed}
    newest = max(start for _, start in expected)
    assert still_open == {("u0", newest), ("u1", newest)}
    assert closed == {k: v for k, v in expected.items() if k not in still_open}


def relative_links(page: Path) -> list[str]:
    """The targets of a page's markdown links that are not web addresses or anchors."""
    return [t for t in LINK.findall(page.read_text()) if not t.startswith(("http://", "https://"))]


def test_the_readme_stays_a_short_user_document() -> None:
    text = README.read_text()
    assert len(text.splitlines()) < 260, "history goes to CHANGELOG.md and docs/benchmarks.md"
    assert not re.search(r"^#+ .*What changed", text, re.M)
    links = relative_links(README)
    assert links, "README has no relative links"
    for target in links:
        assert (README.parent / target).exists(), f"README links to a missing {target}"
    for page in ("CHANGELOG.md", "docs/benchmarks.md", "docs/DESIGN.md"):
        assert f"]({page}" in text, f"README does not link {page}"


@pytest.mark.parametrize(
    "name",
    [
        "CHANGELOG.md",
        "docs/benchmarks.md",
        "docs/benchmarks-history.md",
        "docs/DESIGN.md",
        "docs/design-history.md",
    ],
)
def test_links_in_the_history_pages_resolve(name: str) -> None:
    page = README.parent / name
    for target in relative_links(page):
        assert (page.parent / target).exists(), f"{name} links to a missing {target}"


def test_the_benchmarks_page_is_read_in_one_sitting() -> None:
    """The method and the latest figures; what changed between runs goes to the history page."""
    page = README.parent / "docs" / "benchmarks.md"
    assert len(page.read_text().splitlines()) < 600
    assert "](benchmarks-history.md)" in page.read_text()


def test_the_support_table_says_what_the_support_table_in_the_code_says() -> None:
    """The README's table of Spark versions follows python/sparkwin/_support.py, and names the
    patch releases the matrix proves."""
    from sparkwin._support import LINES

    text = README.read_text()
    rows = [r for r in text.splitlines() if r[:3] in ("| 3", "| 4")]
    for line in LINES:
        (row,) = [r for r in rows if line.name in r.split("|")[1]]
        delta = row.split("|")[4].strip()
        assert delta.startswith("yes") == (line.delta is not None), row
        realTime = row.split("|")[5].strip()
        assert realTime.startswith("yes") == line.realTime, row
        assert line.tested in text, f"README does not name {line.tested}, which CI proves"
