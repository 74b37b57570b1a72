"""The package carries its jar, finds it, and explains what is wrong when it cannot."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import sparkwin
from sparkwin import _jvm
from sparkwin._support import LINES, lineFor
from sparkwin.errors import (
    JarNotFoundError,
    PlanError,
    UnsupportedSparkError,
    VersionMismatchError,
)

ROOT = Path(__file__).resolve().parent.parent


def test_jar_path_is_the_jar_inside_the_package() -> None:
    jar = Path(sparkwin.jarPath())
    assert jar.is_file()
    assert jar.parent == Path(sparkwin.__file__).resolve().parent / "jars"
    assert jar.name == f"sparkwin-core_2.13-{sparkwin.__version__}.jar"


@pytest.mark.compat
def test_the_jvm_reports_the_package_version(spark) -> None:
    assert sparkwin.jvm_version(spark) == sparkwin.__version__


def test_a_wheel_carries_the_jar(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("sparkwin-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert f"sparkwin/jars/sparkwin-core_2.13-{sparkwin.__version__}.jar" in names
    assert "sparkwin/py.typed" in names


def test_a_session_without_the_jar_says_how_to_fix_it() -> None:
    script = (
        "from pyspark.sql import SparkSession\n"
        "import sparkwin\n"
        "spark = SparkSession.builder.master('local[1]').getOrCreate()\n"
        "try:\n"
        "    sparkwin.jvm_version(spark)\n"
        "except sparkwin.errors.JarNotFoundError as e:\n"
        "    print('ERROR:', e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    ).stdout
    assert "ERROR: this SparkSession was started without the sparkwin jar" in out
    assert "sparkwin.configure(SparkSession.builder)" in out


def test_a_jar_of_another_version_is_refused(spark, monkeypatch) -> None:
    monkeypatch.setattr(_jvm, "__version__", "0.0.0-other")
    monkeypatch.setattr(_jvm, "_checked", set())
    with pytest.raises(VersionMismatchError, match="jar on the JVM is version"):
        _jvm.entryPoint(spark)


def test_a_plan_the_jvm_rejects_raises_plan_error(spark) -> None:
    with pytest.raises(PlanError, match="plan version 99"):
        with _jvm.translated():
            _jvm.entryPoint(spark).describe('{"planVersion": 99}', False)


def test_configure_rejects_what_is_not_a_builder() -> None:
    with pytest.raises(TypeError, match="SparkSession.Builder"):
        sparkwin.configure("not a builder")  # type: ignore[arg-type]


def test_jar_not_found_error_is_a_sparkwin_error() -> None:
    assert issubclass(JarNotFoundError, sparkwin.errors.SparkwinError)


def test_a_session_commits_rocksdb_state_by_changelog_unless_told_otherwise(spark) -> None:
    # The shared session keeps sparkwin's state-store defaults: its own settings are others.
    key = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
    assert spark.conf.get(key) == "true"
    assert spark.conf.get("spark.sql.streaming.stateStore.providerClass") == (
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    )


def test_a_spark_outside_the_supported_lines_is_refused_naming_them() -> None:
    for line in LINES:
        assert lineFor(line.tested) is line
    with pytest.raises(
        UnsupportedSparkError,
        match=r"is Spark 3\.5\.2; sparkwin runs on Spark 4\.0 to 4\.3 .*pip install 'pyspark==",
    ):
        lineFor("3.5.2", "this SparkSession")
    with pytest.raises(
        UnsupportedSparkError, match=r"Spark 4\.4\.0; .*a newer sparkwin may support it"
    ):
        lineFor("4.4.0")


def test_configure_refuses_an_unsupported_pyspark(monkeypatch) -> None:
    import pyspark
    from pyspark.sql import SparkSession

    monkeypatch.setattr(pyspark, "__version__", "3.5.2")
    with pytest.raises(UnsupportedSparkError, match=r"the installed PySpark is Spark 3\.5\.2"):
        sparkwin.configure(SparkSession.builder)


def test_a_session_whose_jvm_runs_an_unsupported_spark_is_refused(spark, monkeypatch) -> None:
    from pyspark.sql import SparkSession

    monkeypatch.setattr(SparkSession, "version", property(lambda self: "4.4.1"))
    monkeypatch.setattr(_jvm, "_checked", set())
    with pytest.raises(UnsupportedSparkError, match=r"this SparkSession is Spark 4\.4\.1"):
        sparkwin.jvm_version(spark)
