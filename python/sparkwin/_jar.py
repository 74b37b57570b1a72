"""Where the sparkwin jar is: the copy shipped inside this package.

A leaf module: the session builders and the JVM bridges both name the jar in their messages.
"""

from __future__ import annotations

from pathlib import Path

from sparkwin._version import __version__
from sparkwin.errors import JarNotFoundError, VersionMismatchError


def jarPath() -> str:
    """The path of the jar shipped inside this package.

    Example::

        spark = SparkSession.builder.config("spark.jars", sparkwin.jarPath()).getOrCreate()
    """
    name = f"sparkwin-core_2.13-{__version__}.jar"
    jar = Path(__file__).resolve().parent / "jars" / name
    if not jar.is_file():
        raise JarNotFoundError(
            f"{name} is missing from the sparkwin package at {jar.parent}. A source checkout "
            "needs a build first: run `pip install -e .` (or `pip install .`) in the repository."
        )
    return str(jar)


def jarHint() -> str:
    """The jar's path for an error message, or a placeholder when the package has none."""
    try:
        return jarPath()
    except JarNotFoundError:
        return "<path to sparkwin-core jar>"


def checkJarVersion(found: str, where: str, fix: str) -> None:
    """Refuses a jar of another version than this package (VersionMismatchError), for both
    transports: ``where`` says whose jar (``"on the JVM"``), ``fix`` what to do."""
    if found != __version__:
        raise VersionMismatchError(
            f"the sparkwin jar {where} is version {found} but the Python package is "
            f"{__version__}; {fix}"
        )
