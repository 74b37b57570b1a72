"""The local services a benchmark runs against, borrowed from the tests: a KRaft Kafka broker and
Spark's Kafka connector jars (tests/kafka_broker.py), and a Spark standalone cluster
(tests/standalone_cluster.py).

The one module of benchmarks/ that reaches into tests/: every other one imports these names from
here. It starts nothing itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parent.parent / "tests")
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

from kafka_broker import (  # noqa: E402
    BROKER_CLASSPATH,
    BUILD_COMMAND,
    CONNECTOR_JARS,
    JVM_OPTIONS,
    REPO,
    SERVER_JVM_OPTIONS,
    KafkaBroker,
    connectorJars,
    createTopic,
    endOffsets,
)
from standalone_cluster import APP_CONF, StandaloneCluster  # noqa: E402

# The broker's JVM (`latency.py --broker`): as Kafka's start scripts run it, or as the tests do.
BROKER_JVMS = {"server": SERVER_JVM_OPTIONS, "test": JVM_OPTIONS}


def fetchKafkaJars() -> None:
    """Has the build list Kafka's broker and connector jars, unless a build did: `bin/setup`
    builds sparkwin's jars only, and a benchmark should not stop at a step it can take itself."""
    if BROKER_CLASSPATH.is_file() and CONNECTOR_JARS.is_file():
        return
    print(f"fetching Kafka's jars: {BUILD_COMMAND}", file=sys.stderr, flush=True)
    # The build reads Spark's jars from a Python's PySpark: this one's, unless one is named.
    env = {"SPARKWIN_PYTHON": sys.executable, **os.environ}
    subprocess.run(BUILD_COMMAND.split(), cwd=REPO, check=True, env=env)


__all__ = [
    "APP_CONF",
    "BROKER_JVMS",
    "KafkaBroker",
    "StandaloneCluster",
    "connectorJars",
    "createTopic",
    "endOffsets",
    "fetchKafkaJars",
]
