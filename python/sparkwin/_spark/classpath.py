"""What a running SparkContext must carry for sparkwin, made so once per context: every jar its
JVM was launched with, sparkwin's jar on the driver and the executors, and (on a cluster) the
sparkwin Python package for the executors' Python workers.

Why after the context exists (docs/DESIGN.md, "Jars on a cluster"): ``configure`` puts the jar
in the builder's ``spark.jars`` so the driver's class path has it from launch, and PySpark sets
builder options over the JVM's, so that value hides the jars spark-submit merged into the JVM's
``spark.jars`` (from ``spark.jars.packages``, ``--jars``, ``PYSPARK_SUBMIT_ARGS``): the driver
loads them, the executors never receive them. `ensure` gives the context what it lacks with
``SparkContext.addJar``, which executors fetch before their next task. A JVM started without
sparkwin's jar (spark-submit without ``--jars``, a context made before sparkwin) gets it at
run time as Spark's own ``ADD JAR`` does.

Only `sparkwin._transport.classic.entryPoint` calls `ensure`; nothing here decides versions or
talks Connect.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from sparkwin._spark.jar import jarPath
from sparkwin._version import __version__
from sparkwin.errors import JarNotFoundError

_PACKAGE = Path(__file__).resolve().parents[1]  # sparkwin/


def _name(jar: str) -> str:
    """A jar's file name: Spark lists a local jar as ``spark://host:port/jars/<name>``."""
    return Path(urlparse(jar).path).name or jar


def jarsToAdd(launched: str | None, ours: str | None, listed: Iterable[str]) -> list[str]:
    """The jars a context must still add: each of `launched` (the JVM's ``spark.jars``, a
    comma-separated list) and then `ours`, unless one of that file name is in `listed` (the
    context's ``listJars()``) or comes earlier. Spark keys added jars by file name: a second
    jar of a name is refused, so it is never asked for.

    Example::

        jarsToAdd("/ivy/kafka.jar,/x/sw.jar", "/x/sw.jar", ["spark://h:1/jars/sw.jar"])
        # ['/ivy/kafka.jar']
    """
    seen = {_name(jar) for jar in listed}
    wanted = []
    for jar in [*(launched or "").split(","), ours or ""]:
        jar = jar.strip()
        if jar and _name(jar) not in seen:
            seen.add(_name(jar))
            wanted.append(jar)
    return wanted


def ensure(spark: Any, entryClass: str) -> bool:
    """Give a classic session's context every launched jar and sparkwin's, and (unless its
    master is local) the sparkwin package for Python workers. Returns whether `entryClass`
    loads on the driver afterwards.
    """
    jvm = spark._jvm
    sc = spark.sparkContext
    jsc = sc._jsc
    try:
        ours: str | None = jarPath(spark.version)  # the jar of the running Spark's Scala version
    except JarNotFoundError:  # a source checkout before its build: the JVM may have one
        ours = None
    listed = str(jsc.sc().listJars().mkString("\n")).splitlines()  # a Scala Seq
    launched = jvm.java.lang.System.getProperty("spark.jars")
    for jar in jarsToAdd(launched, ours, listed):
        jsc.addJar(jar)
    loaded = _driverLoads(jvm, entryClass) or (
        ours is not None and _addToDriver(jvm, ours, entryClass)
    )
    if not str(sc.master).startswith("local"):
        sc.addPyFile(_packageZip())
    return loaded


def classLocation(jvm: Any, className: str) -> str | None:
    """Where the driver loads ``className`` from (a jar's URL, or the name itself for a class
    without a code source), or None if it cannot load it.
    """
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        found = jvm.java.lang.Class.forName(className, False, loader)
    except Exception:  # Py4JJavaError: ClassNotFoundException
        return None
    source = found.getProtectionDomain().getCodeSource()
    return str(source.getLocation()) if source is not None else className


def _driverLoads(jvm: Any, entryClass: str) -> bool:
    return classLocation(jvm, entryClass) is not None


def _addToDriver(jvm: Any, jar: str, entryClass: str) -> bool:
    """sparkwin's jar on a running driver, as ``ADD JAR`` puts one (see `_onDriver`)."""
    return _onDriver(jvm, jar) and _driverLoads(jvm, entryClass)


def _onDriver(jvm: Any, jar: str) -> bool:
    """`jar` on the driver's context class loader, which is Spark's MutableURLClassLoader in a
    JVM that spark-submit started (PySpark's too) and the parent of the class loaders of local
    executors and Connect sessions. False for a loader of another kind.
    """
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    mutable = jvm.java.lang.Class.forName("org.apache.spark.util.MutableURLClassLoader")
    if not mutable.isInstance(loader):
        return False
    url = jvm.java.io.File(jar).toURI().toURL()
    if str(url) not in {str(u) for u in loader.getURLs()}:
        loader.addURL(url)
    return True


def addJar(spark: Any, jar: str) -> bool:
    """A user's jar on a running classic session: the executors fetch it before their next task
    (``SparkContext.addJar``, unless a jar of that file name is listed already) and the driver
    loads it now. Returns whether the driver could take it.
    """
    jsc = spark.sparkContext._jsc
    listed = str(jsc.sc().listJars().mkString("\n")).splitlines()
    if jarsToAdd(None, jar, listed):
        jsc.addJar(jar)
    return _onDriver(spark._jvm, jar)


_zips: dict[str, str] = {}


def _packageZip() -> str:
    """A zip of the sparkwin package without its jar (the JVM has that), made once per process
    and removed at exit.
    """
    if "zip" not in _zips:
        directory = tempfile.mkdtemp(prefix="sparkwin-py-")
        atexit.register(shutil.rmtree, directory, True)
        path = Path(directory) / f"sparkwin-{__version__}.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for file in sorted(_PACKAGE.rglob("*")):
                relative = file.relative_to(_PACKAGE)
                if file.is_file() and relative.parts[0] not in ("jars", "__pycache__"):
                    if "__pycache__" not in relative.parts:
                        zf.write(file, Path("sparkwin") / relative)
        _zips["zip"] = str(path)
    return _zips["zip"]
