"""PEP 517 backend: setuptools, plus building the JVM jars into the package first.

`pip install .` / `pip wheel .` / `pip install -e .` all land here. Both jars are built with the
project's own `bin/sbt` (which fetches sbt itself) and copied to `python/sparkwin/jars/` so the
wheel carries them: Scala 2.13 (Spark 4) against the newest PySpark's jars, which the build
environment has (that release is not on Maven Central), and Scala 2.12 (Spark 3.5) against Spark
3.5 as sbt resolves it from Maven Central. Nothing here runs pip: a pip started inside a build
hook inherits the hook's environment and would look for its sdists' backends in ours. A jar
newer than every JVM source is reused.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import build_meta as _setuptools

ROOT = Path(__file__).resolve().parent.parent
JAR_DIR = ROOT / "python" / "sparkwin" / "jars"

prepare_metadata_for_build_wheel = _setuptools.prepare_metadata_for_build_wheel
prepare_metadata_for_build_editable = _setuptools.prepare_metadata_for_build_editable
get_requires_for_build_sdist = _setuptools.get_requires_for_build_sdist
build_sdist = _setuptools.build_sdist


def _supportRows() -> list[tuple[str, str]]:
    """(tested PySpark, Scala version) of each line of the support table
    (python/sparkwin/_support.py), oldest first."""
    text = (ROOT / "python" / "sparkwin" / "_support.py").read_text()
    rows = re.findall(r'SparkLine\(\(\d+, \d+\), "([^"]+)"(.*)', text)
    if not rows:
        raise RuntimeError("python/sparkwin/_support.py has no SparkLine rows")
    return [(v, "2.12" if 'scala="2.12"' in rest else "2.13") for v, rest in rows]


# The 2.13 jar compiles against the newest line's PySpark (the 2.12 jar against Maven's Spark 3.5).
PINNED_PYSPARK = f"pyspark=={_supportRows()[-1][0]}"
SCALAS = ("2.13", "2.12")


def _version() -> str:
    text = (ROOT / "python" / "sparkwin" / "_version.py").read_text()
    match = re.search(r'__version__ = "([^"]+)"', text)
    if not match:
        raise RuntimeError("python/sparkwin/_version.py has no __version__")
    return match.group(1)


def _jar_name(scala: str) -> str:
    return f"sparkwin-core_{scala}-{_version()}.jar"


def _newer_than_sources(jar: Path) -> bool:
    if not jar.exists():
        return False
    inputs = [
        ROOT / "build.sbt",
        ROOT / "project" / "build.properties",
        ROOT / "python" / "sparkwin" / "_version.py",
        ROOT / "python" / "sparkwin" / "_support.py",
    ]
    inputs += [p for p in (ROOT / "jvm" / "src" / "main").rglob("*") if p.is_file()]
    newest = max((p.stat().st_mtime for p in inputs if p.exists()), default=0.0)
    return jar.stat().st_mtime >= newest


def _built_jar(scala: str) -> Path:
    return ROOT / "jvm" / "target" / f"scala-{scala}" / _jar_name(scala)


def _jar_is_fresh(scala: str) -> bool:
    return _newer_than_sources(JAR_DIR / _jar_name(scala)) or _newer_than_sources(_built_jar(scala))


def _needs_pyspark_to_build() -> bool:
    return not _jar_is_fresh("2.13") and "SPARK_JARS_DIR" not in os.environ


def _build_jars() -> None:
    stale = [scala for scala in SCALAS if not _newer_than_sources(JAR_DIR / _jar_name(scala))]
    if not stale:
        return
    unbuilt = [scala for scala in stale if not _newer_than_sources(_built_jar(scala))]
    if unbuilt:  # sbt has not built them already (bin/test does)
        env = dict(os.environ)
        env.setdefault("SPARKWIN_PYTHON", sys.executable)  # the build env has the pinned pyspark
        sbt = ROOT / "bin" / "sbt"
        tasks = [
            "core/package" if scala == "2.13" else f"++{scala} core/package" for scala in unbuilt
        ]
        print(
            f"sparkwin: building {', '.join(map(_jar_name, unbuilt))} with {sbt}", file=sys.stderr
        )
        subprocess.run(
            [str(sbt), *tasks],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=sys.stderr,
            stdin=subprocess.DEVNULL,
        )
    JAR_DIR.mkdir(parents=True, exist_ok=True)
    for scala in stale:
        built = _built_jar(scala)
        if not built.exists():
            raise RuntimeError(f"sbt did not produce {built}")
        for old in JAR_DIR.glob(f"sparkwin-core_{scala}-*.jar"):
            old.unlink()
        shutil.copy2(built, JAR_DIR / _jar_name(scala))
        os.utime(JAR_DIR / _jar_name(scala))


def get_requires_for_build_wheel(config_settings=None):  # noqa: ANN001, ANN201
    extra = [PINNED_PYSPARK] if _needs_pyspark_to_build() else []
    return _setuptools.get_requires_for_build_wheel(config_settings) + extra


def get_requires_for_build_editable(config_settings=None):  # noqa: ANN001, ANN201
    extra = [PINNED_PYSPARK] if _needs_pyspark_to_build() else []
    return _setuptools.get_requires_for_build_editable(config_settings) + extra


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    _build_jars()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    _build_jars()
    return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
