"""sparkwin: Flink-grade event-time windowing for Apache Spark.

The Python package builds a pipeline plan and hands it to the JVM core; no Python runs per
event unless a pipeline asks for a Python window function.
"""

from sparkwin._jvm import jvm_version
from sparkwin._session import configure, jarPath, session
from sparkwin._version import __version__

__all__ = ["__version__", "configure", "jarPath", "jvm_version", "session"]
