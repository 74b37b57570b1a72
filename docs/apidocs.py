"""Builds the API reference from the docstrings: ``bin/apidocs [directory]`` (default
``build/api/``), with pdoc.

A broken docstring fails the build (bin/test runs this): any warning pdoc gives (an annotation
it cannot resolve, a module that does not import, a docstring it cannot process) is an error,
and so is an ``Example::`` block that is not Python or has no indented code under it.
"""

from __future__ import annotations

import ast
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import pdoc
import pdoc.doc
import pdoc.render

ROOT = Path(__file__).resolve().parent.parent
# The public modules: sparkwin's page documents everything `import sparkwin as sw` exports,
# with the modules in its __all__ (sparkwin.agg, sparkwin.plot); the others are imported by name.
MODULES = ["sparkwin", "sparkwin.testing", "sparkwin.errors"]


def examples(docstring: str) -> Iterator[tuple[int, str | None]]:
    """Each ``Example::`` block of a docstring: (line, its code), or (line, None) when no
    indented block follows it (reST would then render the text after it wrongly)."""
    lines = docstring.splitlines()
    for i, line in enumerate(lines):
        if not line.rstrip().endswith("Example::"):
            continue
        indent = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        block = []
        while j < len(lines) and (
            not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent
        ):
            block.append(lines[j])
            j += 1
        code = textwrap.dedent("\n".join(block)).strip()
        yield i + 1, code or None


def problems(module: pdoc.doc.Module) -> Iterator[str]:
    """Example blocks of a module's members that are not Python."""
    members: list[pdoc.doc.Doc] = [module]
    seen: set[str] = set()
    while members:
        doc = members.pop()
        if doc.fullname in seen:
            continue
        seen.add(doc.fullname)
        if isinstance(doc, pdoc.doc.Module):  # what the page shows: __all__ when it has one
            members.extend([*doc.members.values(), *doc.submodules])
        elif isinstance(doc, pdoc.doc.Class):
            members.extend(m for m in doc.own_members if not m.name.startswith("_"))
        for line, code in examples(doc.docstring):
            where = f"{doc.fullname} (docstring line {line})"
            if code is None:
                yield f"{where}: Example:: has no indented code under it"
                continue
            try:
                ast.parse(code)
            except SyntaxError as exc:
                yield f"{where}: the example is not Python: {exc.msg} at its line {exc.lineno}"


def build(output: Path) -> list[str]:
    """Renders MODULES into ``output``; returns what is wrong (empty when nothing is)."""
    pdoc.render.configure(docformat="google", footer_text="sparkwin API reference")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*MODULES, output_directory=output)
        modules = [pdoc.doc.Module.from_name(name) for name in MODULES]
    pdocDir = str(Path(pdoc.__file__).parent)
    found = [f"pdoc: {w.message}" for w in caught if w.filename.startswith(pdocDir)]
    for module in modules:
        found.extend(problems(module))
    return found


def main(argv: list[str]) -> int:
    output = Path(argv[0]) if argv else ROOT / "build" / "api"
    found = build(output)
    for problem in found:
        print(f"apidocs: {problem}", file=sys.stderr)
    if found:
        print(f"apidocs: {len(found)} problem(s): fix the docstrings", file=sys.stderr)
        return 1
    print(f"apidocs: wrote {output / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
