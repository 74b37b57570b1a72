"""The local services a benchmark runs against, borrowed from the tests: a KRaft Kafka broker and
Spark's Kafka connector jars (tests/kafka_broker.py), and a Spark standalone cluster
(tests/standalone_cluster.py).

The one module of benchmarks/ that reaches into tests/: every other one imports these names from
here. It starts nothing itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parent.parent / "tests")
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

from kafka_broker import (  # noqa: E402
    JVM_OPTIONS,
    SERVER_JVM_OPTIONS,
    KafkaBroker,
    connectorJars,
    createTopic,
    endOffsets,
)
from standalone_cluster import APP_CONF, StandaloneCluster  # noqa: E402

# The broker's JVM (`latency.py --broker`): as Kafka's start scripts run it, or as the tests do.
BROKER_JVMS = {"server": SERVER_JVM_OPTIONS, "test": JVM_OPTIONS}

__all__ = [
    "APP_CONF",
    "BROKER_JVMS",
    "KafkaBroker",
    "StandaloneCluster",
    "connectorJars",
    "createTopic",
    "endOffsets",
]
