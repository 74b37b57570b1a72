"""The API reference (``bin/apidocs``, docs/apidocs.py) builds from the docstrings without a
warning, finds broken ``Example::`` blocks, and every link the concept pages make into it lands
on a page and an anchor that exist."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONCEPTS = sorted((ROOT / "docs" / "concepts").glob("*.md"))
API_LINK = re.compile(r"\]\((?:\.\./)+build/api/([^)#\s]+)(?:#([^)\s]+))?\)")


def _apidocs():
    spec = importlib.util.spec_from_file_location("apidocs", ROOT / "docs" / "apidocs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def apidocs():
    return _apidocs()


@pytest.fixture(scope="module")
def built(apidocs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("api")
    assert apidocs.build(out) == []
    return out


def test_the_reference_documents_the_public_modules(built) -> None:
    for page in ("index.html", "sparkwin.html", "sparkwin/testing.html", "sparkwin/plot.html"):
        assert (built / page).is_file(), page
    text = (built / "sparkwin/plot.html").read_text()
    assert 'id="timeline"' in text and "sparkwin[plot]" in text


def test_concept_pages_link_into_the_reference_and_every_link_lands(built) -> None:
    linking = 0
    for page in CONCEPTS:
        links = API_LINK.findall(page.read_text())
        linking += bool(links)
        for target, anchor in links:
            html = built / target
            assert html.is_file(), f"{page.name} links to a missing {target}"
            if anchor:
                assert f'id="{anchor}"' in html.read_text(), (
                    f"{page.name}: no #{anchor} in {target}"
                )
    assert linking == len(CONCEPTS), "every concept page links into the API reference"


def test_a_broken_example_or_an_unresolvable_annotation_fails(apidocs, tmp_path, monkeypatch):
    (tmp_path / "broken_docs.py").write_text(
        '"""A module with broken docstrings."""\n'
        "from __future__ import annotations\n\n"
        "def f(x: NoSuchType) -> int:\n"
        '    """Does f.\n\n    Example::\n\n        f(1,\n    """\n'
        "    return 1\n\n"
        "def g() -> None:\n"
        '    """Does g.\n\n    Example::\n    """\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(apidocs, "MODULES", ["broken_docs"])
    try:
        found = apidocs.build(tmp_path / "out")
    finally:
        sys.modules.pop("broken_docs", None)
    assert any("broken_docs.f" in p and "not Python" in p for p in found), found
    assert any("broken_docs.g" in p and "no indented code" in p for p in found), found
    assert any(p.startswith("pdoc:") and "NoSuchType" in p for p in found), found
