"""The install paths users take, from a clean copy of the source, as a new user runs them.

`pip install .` into a plain virtual environment that already has an older PySpark: pip builds
sparkwin in an isolated build environment (the build backend compiles both jars with bin/sbt),
installs it, and must leave that PySpark as it was; a pipeline then runs. Then `pip install
".[connect]"` beside the same PySpark adds Spark Connect's client libraries, again without
touching PySpark, and a pipeline runs from a Connect client. bin/matrix covers the built wheel
on every older line (on Spark 3.5 with whichever pandas, numpy and pyarrow pip picks).

Nothing of this run's own environment leaks in: the copy holds only the repository's files (no
built jar), and the build sees none of sparkwin's variables, so it finds its PySpark jars and
Spark 3.5 the way a user's build does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sparkwin._support import LINES

ROOT = Path(__file__).resolve().parent.parent

# The user's PySpark: an older 4.x line than the one the jar compiles against.
USERS_PYSPARK = next(line.tested for line in LINES if line.minor == (4, 2))

PIPELINE = """
import sys
import pyspark
import sparkwin as sw
spark = sw.session(connect=sys.argv[1] == "connect")
df = spark.createDataFrame(
    [("a", 1, 1_000), ("a", 2, 4_000), ("b", 5, 2_000), ("a", 7, 12_000)],
    "user string, amount long, ts long",
)
out = (sw.stream(df, "ts").keyBy("user").window(sw.TumblingEventTimeWindows.of(10_000))
       .aggregate(sw.agg.sum("amount")).toDF())
ends = out.selectExpr("user", "unix_millis(window_start) AS start", "sum_amount")
rows = sorted(tuple(r) for r in ends.collect())
print("PYSPARK", pyspark.__version__)
print("ROWS", rows)
spark.stop()
"""


def _userEnv() -> dict[str, str]:
    """This process's environment less what only sparkwin's own runs set (where jars are,
    which python to compile against, the test session's settings). The caches stay: bin/test's
    full run makes them new and empty, as a new user's are."""
    return {
        # pip's isolated build installs PySpark (the jar compiles against it) for each build:
        # compiling all its modules cost ~40 s of CPU per build, and this is not what is tested.
        "PIP_NO_COMPILE": "1",
        **{
            k: v
            for k, v in os.environ.items()
            if k == "SPARKWIN_CACHE"
            or not k.startswith(("SPARKWIN_", "SPARK_", "PYSPARK_", "PYTEST_", "_PYPROJECT_HOOKS"))
            and k not in ("PYTHONPATH", "VIRTUAL_ENV")
        },
    }


def _run(cmd: list[str], cwd: Path | None = None, timeout: int = 1200) -> str:
    done = subprocess.run(
        cmd, cwd=cwd, env=_userEnv(), capture_output=True, text=True, timeout=timeout
    )
    tail = f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{tail}"
    return done.stdout


def _cleanCopy(target: Path) -> Path:
    """The repository's files (tracked, or new and not ignored) as they are, nothing built."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / name.decode()
        if source.is_file():  # a file deleted in the work tree but still tracked is left out
            dest = target / name.decode()
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(source.read_bytes())
            dest.chmod(source.stat().st_mode)
    assert not list(target.rglob("*.jar")), "the clean copy must not carry a built jar"
    return target


@pytest.fixture(scope="module")
def plainVenv(tmp_path_factory) -> Path:
    """A new virtual environment with the user's PySpark and nothing else."""
    venv = tmp_path_factory.mktemp("user") / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", f"pyspark=={USERS_PYSPARK}"])
    return python


def _pysparkOf(python: Path) -> str:
    return _run([str(python), "-c", "import pyspark; print(pyspark.__version__)"]).strip()


def _pipelineRows(python: Path, transport: str) -> str:
    out = _run([str(python), "-c", PIPELINE, transport], timeout=600)
    lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    assert lines.get("PYSPARK") == USERS_PYSPARK, f"the pipeline printed:\n{out[-3000:]}"
    return lines["ROWS"]


EXPECTED = "[('a', 0, 3), ('a', 10000, 7), ('b', 0, 5)]"


def test_pip_install_dot_then_the_connect_extra_keep_the_users_pyspark_and_run(
    plainVenv: Path, tmp_path: Path
) -> None:
    source = _cleanCopy(tmp_path / "sparkwin")

    _run([str(plainVenv), "-m", "pip", "install", "-q", str(source)])
    assert _pysparkOf(plainVenv) == USERS_PYSPARK, "pip install . changed the user's PySpark"
    assert _pipelineRows(plainVenv, "classic") == EXPECTED

    _run([str(plainVenv), "-m", "pip", "install", "-q", f"{source}[connect]"])
    assert _pysparkOf(plainVenv) == USERS_PYSPARK, "the [connect] extra changed the user's PySpark"
    assert _pipelineRows(plainVenv, "connect") == EXPECTED
