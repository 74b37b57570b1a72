"""PEP 517 backend: setuptools, plus building the JVM jar into the package first.

`pip install .` / `pip wheel .` / `pip install -e .` all land here. The jar is built with the
project's own `bin/sbt` (which fetches sbt itself) against the pinned PySpark's jars, and copied
to `python/sparkwin/jars/` so the wheel carries it. A jar newer than every JVM source is reused.
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


def _newestSpark() -> str:
    """The newest line of the support table (python/sparkwin/_support.py): the jar compiles
    against that PySpark's jars."""
    text = (ROOT / "python" / "sparkwin" / "_support.py").read_text()
    rows = re.findall(r'SparkLine\(\(\d+, \d+\), "([^"]+)"', text)
    if not rows:
        raise RuntimeError("python/sparkwin/_support.py has no SparkLine rows")
    return rows[-1]


PINNED_PYSPARK = f"pyspark=={_newestSpark()}"


def _version() -> str:
    text = (ROOT / "python" / "sparkwin" / "_version.py").read_text()
    match = re.search(r'__version__ = "([^"]+)"', text)
    if not match:
        raise RuntimeError("python/sparkwin/_version.py has no __version__")
    return match.group(1)


def _jar_name() -> str:
    return f"sparkwin-core_2.13-{_version()}.jar"


def _newer_than_sources(jar: Path) -> bool:
    if not jar.exists():
        return False
    inputs = [ROOT / "build.sbt", ROOT / "project" / "build.properties",
              ROOT / "python" / "sparkwin" / "_version.py",
              ROOT / "python" / "sparkwin" / "_support.py"]
    inputs += [p for p in (ROOT / "jvm" / "src" / "main").rglob("*") if p.is_file()]
    newest = max((p.stat().st_mtime for p in inputs if p.exists()), default=0.0)
    return jar.stat().st_mtime >= newest


def _built_jar() -> Path:
    return ROOT / "jvm" / "target" / "scala-2.13" / _jar_name()


def _jar_is_fresh() -> bool:
    return _newer_than_sources(JAR_DIR / _jar_name()) or _newer_than_sources(_built_jar())


def _needs_pyspark_to_build() -> bool:
    return not _jar_is_fresh() and "SPARK_JARS_DIR" not in os.environ


def _build_jar() -> None:
    if _newer_than_sources(JAR_DIR / _jar_name()):
        return
    built = _built_jar()
    if not _newer_than_sources(built):  # sbt has not built it already (bin/test does)
        env = dict(os.environ)
        env.setdefault("SPARKWIN_PYTHON", sys.executable)  # the build env has the pinned pyspark
        sbt = ROOT / "bin" / "sbt"
        print(f"sparkwin: building {_jar_name()} with {sbt}", file=sys.stderr)
        subprocess.run([str(sbt), "core/package"], cwd=ROOT, env=env, check=True,
                       stdout=sys.stderr)
    if not built.exists():
        raise RuntimeError(f"sbt did not produce {built}")
    JAR_DIR.mkdir(parents=True, exist_ok=True)
    for old in JAR_DIR.glob("sparkwin-core_*.jar"):
        old.unlink()
    shutil.copy2(built, JAR_DIR / _jar_name())
    os.utime(JAR_DIR / _jar_name())


def get_requires_for_build_wheel(config_settings=None):  # noqa: ANN001, ANN201
    extra = [PINNED_PYSPARK] if _needs_pyspark_to_build() else []
    return _setuptools.get_requires_for_build_wheel(config_settings) + extra


def get_requires_for_build_editable(config_settings=None):  # noqa: ANN001, ANN201
    extra = [PINNED_PYSPARK] if _needs_pyspark_to_build() else []
    return _setuptools.get_requires_for_build_editable(config_settings) + extra


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    _build_jar()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    _build_jar()
    return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
