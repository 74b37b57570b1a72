"""Where the sparkwin jar is: the copy shipped inside this package.

A leaf module: the session builders and the JVM bridges both name the jar in their messages.
"""

from __future__ import annotations

from pathlib import Path

from sparkwin._version import __version__
from sparkwin.errors import JarNotFoundError


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
