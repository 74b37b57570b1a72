"""The package carries its jar, finds it, and explains what is wrong when it cannot."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pyspark
import pytest

import sparkwin
from sparkwin._spark import classpath as _classpath
from sparkwin._spark import jar as _jar
from sparkwin._spark.session import _LOCAL_FILE_SYSTEMS
from sparkwin._support import LINES, lineFor
from sparkwin._transport import classic as _py4j
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
    # The installed PySpark's Scala version: 2.13 for Spark 4, 2.12 for Spark 3.5.
    scala = lineFor(pyspark.__version__).scala
    assert jar.name == f"sparkwin-core_{scala}-{sparkwin.__version__}.jar"
    other = "2.12" if scala == "2.13" else "2.13"
    assert Path(sparkwin.jarPath(next(x.tested for x in LINES if x.scala == other))).is_file()


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
    for scala in ("2.13", "2.12"):  # Spark 4's and Spark 3.5's
        assert f"sparkwin/jars/sparkwin-core_{scala}-{sparkwin.__version__}.jar" in names
    assert "sparkwin/py.typed" in names


def test_a_context_started_without_the_jar_gains_it_at_the_first_sparkwin_call() -> None:
    # As under spark-submit without --jars: the driver's class loader takes the jar (as ADD JAR
    # does), the context lists it for the executors, and a pipeline runs.
    script = (
        "from pyspark.sql import SparkSession\n"
        "import sparkwin as sw\n"
        "spark = SparkSession.builder.master('local[1]').getOrCreate()\n"
        "print('VERSION', sw.jvm_version(spark))\n"
        "print('JARS', spark.sparkContext._jsc.sc().listJars().mkString(','))\n"
        "df = spark.createDataFrame([('a', 1, 5)], 'user string, amount long, ts long')\n"
        "p = sw.stream(df, 'ts').keyBy('user').window(sw.TumblingEventTimeWindows.of(10))\n"
        "print('ROWS', p.aggregate(sw.agg.sum('amount')).toDF().count())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    ).stdout
    assert f"VERSION {sparkwin.__version__}" in out
    assert Path(sparkwin.jarPath()).name in out.split("JARS", 1)[1]
    assert "ROWS 1" in out


def test_a_driver_that_cannot_take_the_jar_says_how_to_fix_it(spark, monkeypatch) -> None:
    monkeypatch.setattr(_py4j, "_checked", set())
    monkeypatch.setattr(_classpath, "ensure", lambda spark, entryClass: False)
    with pytest.raises(JarNotFoundError, match="started without the sparkwin jar") as error:
        _py4j.entryPoint(spark)
    assert "sparkwin.configure(SparkSession.builder)" in str(error.value)
    assert '--jars "$(python -m sparkwin jar)"' in str(error.value)


def test_jars_to_add_restores_what_the_builder_hid_and_adds_ours_once() -> None:
    listed = ["spark://127.0.0.1:4040/jars/sparkwin.jar", "hdfs://nn/libs/extra.jar"]
    launched = "/ivy/jars/kafka.jar, /opt/sparkwin.jar,hdfs://nn/libs/extra.jar,/ivy/jars/pool.jar"
    assert _classpath.jarsToAdd(launched, "/site/sparkwin.jar", listed) == [
        "/ivy/jars/kafka.jar",
        "/ivy/jars/pool.jar",
    ]
    # A JVM launched without ours, a context without jars: ours is added, once.
    assert _classpath.jarsToAdd(None, "/site/sparkwin.jar", []) == ["/site/sparkwin.jar"]
    assert _classpath.jarsToAdd("/site/sparkwin.jar", "/site/sparkwin.jar", []) == [
        "/site/sparkwin.jar"
    ]
    assert _classpath.jarsToAdd("", None, []) == []


def test_python_m_sparkwin_jar_prints_the_jar_for_spark_submit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sparkwin", "jar"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == sparkwin.jarPath()
    wrong = subprocess.run([sys.executable, "-m", "sparkwin"], capture_output=True, text=True)
    assert wrong.returncode == 2 and "python -m sparkwin jar" in wrong.stderr


def test_the_package_zip_for_executors_has_the_code_and_not_the_jar() -> None:
    names = zipfile.ZipFile(_classpath._packageZip()).namelist()
    assert "sparkwin/__init__.py" in names and "sparkwin/contract.json" in names
    assert not [n for n in names if n.endswith(".jar") or "__pycache__" in n]


def test_a_jar_of_another_version_is_refused(spark, monkeypatch) -> None:
    monkeypatch.setattr(_jar, "__version__", "0.0.0-other")  # the package's, as the check sees it
    monkeypatch.setattr(_py4j, "_checked", set())
    with pytest.raises(VersionMismatchError, match="jar on the JVM is version"):
        _py4j.entryPoint(spark)


def test_a_plan_the_jvm_rejects_raises_plan_error(spark) -> None:
    with pytest.raises(PlanError, match="plan version 99"):
        with _py4j.translated():
            _py4j.entryPoint(spark).describe('{"planVersion": 99}', False)


def test_configure_rejects_what_is_not_a_builder() -> None:
    with pytest.raises(TypeError, match="SparkSession.Builder"):
        sparkwin.configure("not a builder")  # type: ignore[arg-type]


def test_jar_not_found_error_is_a_sparkwin_error() -> None:
    assert issubclass(JarNotFoundError, sparkwin.errors.SparkwinError)


def test_a_session_commits_rocksdb_state_by_changelog_unless_told_otherwise(spark) -> None:
    # The shared session keeps sparkwin's state-store defaults: its own settings are others.
    key = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
    assert spark.conf.get(key) == "true"
    assert spark.conf.get("spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows") == (
        "false"
    )
    assert spark.conf.get("spark.sql.streaming.stateStore.providerClass") == (
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    )


def test_a_local_session_writes_files_without_forking_processes(spark) -> None:
    # The session's Hadoop configuration names the jar's forkless local file system (Python
    # must name it before the JVM starts; the jar's own list is the rule), and Hadoop builds it
    # for FileContext's file: paths, through which Spark writes checkpoint files.
    jvm = spark._jvm
    rule = jvm.sparkwin.runtime.spark.localfs.LocalFileSystems.Settings()
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    assert {key.removeprefix("spark.hadoop.") for key in _LOCAL_FILE_SYSTEMS} == set(
        rule.keySet().toSeq().mkString("\n").split("\n")
    )
    for key, name in _LOCAL_FILE_SYSTEMS.items():
        hadoopKey = key.removeprefix("spark.hadoop.")
        assert rule.apply(hadoopKey) == name == hadoop.get(hadoopKey)
    context = jvm.org.apache.hadoop.fs.FileContext.getLocalFSFileContext(hadoop)
    assert context.getDefaultFileSystem().getClass().getName() == (
        "sparkwin.runtime.spark.localfs.ForklessLocalFs"
    )


def test_a_spark_outside_the_supported_lines_is_refused_naming_them() -> None:
    for line in LINES:
        assert lineFor(line.tested) is line
    with pytest.raises(
        UnsupportedSparkError,
        match=r"is Spark 3\.4\.1; sparkwin runs on Spark 3\.5 to 4\.3 .*pip install 'pyspark==",
    ):
        lineFor("3.4.1", "this SparkSession")
    with pytest.raises(
        UnsupportedSparkError, match=r"Spark 4\.4\.0; .*a newer sparkwin may support it"
    ):
        lineFor("4.4.0")


def test_configure_refuses_an_unsupported_pyspark(monkeypatch) -> None:
    import pyspark
    from pyspark.sql import SparkSession

    monkeypatch.setattr(pyspark, "__version__", "3.4.1")
    with pytest.raises(UnsupportedSparkError, match=r"the installed PySpark is Spark 3\.4\.1"):
        sparkwin.configure(SparkSession.builder)


def test_a_session_whose_jvm_runs_an_unsupported_spark_is_refused(spark, monkeypatch) -> None:
    from pyspark.sql import SparkSession

    monkeypatch.setattr(SparkSession, "version", property(lambda self: "4.4.1"))
    monkeypatch.setattr(_py4j, "_checked", set())
    with pytest.raises(UnsupportedSparkError, match=r"this SparkSession is Spark 4\.4\.1"):
        sparkwin.jvm_version(spark)


@pytest.mark.compat
def test_configure_with_kafka_adds_the_connector_of_the_installed_line() -> None:
    from pyspark.sql import SparkSession

    builder = sparkwin.configure(SparkSession.builder, kafka=True)
    line = lineFor(pyspark.__version__)
    packages = builder._options["spark.jars.packages"].split(",")
    assert line.kafkaPackage in packages
    assert line.kafkaPackage.startswith(f"org.apache.spark:spark-sql-kafka-0-10_{line.scala}:")
    with pytest.raises(TypeError, match="kafka must be a bool"):
        sparkwin.configure(SparkSession.builder, kafka="yes")  # type: ignore[arg-type]


@pytest.mark.compat
def test_asking_a_running_session_for_packages_it_lacks_fails_at_once_with_the_fix() -> None:
    # A user's first session had neither; a later session(kafka=True) / session(delta=True) gets
    # that same JVM back, where spark.jars.packages can no longer take effect.
    script = (
        "import sparkwin as sw\n"
        "spark = sw.session(master='local[1]')\n"
        "for flag in ('kafka', 'delta'):\n"
        "    try:\n"
        "        sw.session(**{flag: True})\n"
        "        print('ACCEPTED', flag)\n"
        "    except Exception as e:\n"
        "        print('REFUSED', flag, type(e).__name__, str(e).replace(chr(10), ' '))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    refused = {
        line.split(" ", 3)[1]: line.split(" ", 3)[2:]
        for line in done.stdout.splitlines()
        if line.startswith("REFUSED")
    }
    assert set(refused) == {"kafka", "delta"}, done.stdout + done.stderr[-3000:]
    kind, message = refused["kafka"]
    line = lineFor(pyspark.__version__)
    assert kind == "UnsupportedSparkError"
    assert "started without Spark's Kafka connector" in message and "spark.stop()" in message
    assert line.kafkaPackage in message
    kind, message = refused["delta"]
    assert kind == "UnsupportedSparkError"
    if line.delta is not None:
        assert "started without Delta Lake" in message and line.delta in message
    else:  # a line Delta has no release for is refused by the builder, naming the lines it has
        assert "Delta Lake has no release yet" in message
