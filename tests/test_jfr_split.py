"""benchmarks/jfr_split.py puts each task thread's sample where the profile's reader expects:
the first rule (in a fixed order) any frame matches wins, a sample is the stateful stage's by its
stack, and a native sample that waits is not counted as work."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.jfr_split import category, parse, split  # noqa: E402

TEXT = """
jdk.ExecutionSample {
  startTime = 05:00:00.100 (2026-11-28)
  sampledThread = "Executor task launch worker-5" (javaThreadId = 80)
  state = "STATE_RUNNABLE"
  stackTrace = [
    org.rocksdb.RocksDB.get(long, byte[], int, int, long) line: 1
    org.apache.spark.sql.execution.streaming.state.MapStateImpl.getValue(Object) line: 2
    sparkwin.runtime.spark.KeyBuckets.bucket(int) line: 3
    sparkwin.runtime.spark.KeyGroupLoop.run(LinkedHashMap) line: 4
    org.apache.spark.sql.execution.streaming.TransformWithStateExec.processNewData(Iterator) line: 5
    ...
  ]
}

jdk.ExecutionSample {
  startTime = 05:00:01.100 (2026-11-28)
  sampledThread = "Executor task launch worker-5" (javaThreadId = 80)
  state = "STATE_RUNNABLE"
  stackTrace = [
    sparkwin.operator.WindowOperator.processElement(Record) line: 1
    sparkwin.runtime.spark.KeyGroupLoop.processKey(Row) line: 2
  ]
}

jdk.NativeMethodSample {
  startTime = 05:00:01.500 (2026-11-28)
  sampledThread = "Executor task launch worker-4" (javaThreadId = 79)
  state = "STATE_IN_NATIVE"
  stackTrace = [
    sun.nio.ch.EPoll.wait(int, long, int, int)
    org.apache.kafka.common.network.Selector.select(long) line: 2
  ]
}

jdk.NativeMethodSample {
  startTime = 05:00:02.100 (2026-11-28)
  sampledThread = "Executor task launch worker-4" (javaThreadId = 79)
  state = "STATE_IN_NATIVE"
  stackTrace = [
    org.apache.kafka.common.record.DefaultRecord.readFrom(ByteBuffer) line: 1
    org.apache.kafka.clients.consumer.internals.CompletedFetch.fetchRecords(int) line: 2
  ]
}

jdk.ExecutionSample {
  startTime = 05:00:03.100 (2026-11-28)
  sampledThread = "kafka-producer-network-thread | producer-1" (javaThreadId = 90)
  state = "STATE_RUNNABLE"
  stackTrace = [
    org.apache.kafka.clients.producer.internals.Sender.run() line: 1
  ]
}
"""


def test_rules_pick_the_store_before_the_encoding_and_the_engine_before_the_loop() -> None:
    assert (
        category(["org.rocksdb.RocksDB.get", "sparkwin.runtime.spark.KeyBuckets.get"]) == "rocksdb"
    )
    assert (
        category(
            [
                "org.apache.spark.sql.x.MapStateImpl.getValue",
                "sparkwin.runtime.spark.KeyBuckets.get",
            ]
        )
        == "spark state encoding"
    )
    assert category(
        ["sparkwin.operator.WindowOperator.x", "sparkwin.runtime.spark.KeyGroupLoop.run"]
    ) == ("engine")
    assert category(["sparkwin.runtime.spark.ChannelSummaries$Tap.see"]) == "sparkwin map side"
    assert category(["java.util.HashMap.get"]) == "other"
    # Spark's row conversion, run lazily inside the loop's frames, is Spark's.
    projection = (
        "org.apache.spark.sql.catalyst.expressions.GeneratedClass$SpecificSafeProjection.apply"
    )
    assert category([projection, "sparkwin.runtime.spark.KeyGroupLoop.call"]) == "spark projection"


def test_samples_split_by_stage_kind_and_time() -> None:
    samples = list(parse(TEXT.splitlines()))
    assert len(samples) == 5 and samples[0].frames[0] == "org.rocksdb.RocksDB.get"
    result = split(samples)
    # The second sample's stack does not reach the operator, but shows its loop.
    assert result["stateful"] == {"rocksdb": 1, "engine": 1}
    assert result["map side"] == {"(waiting in native code)": 1, "kafka": 1}
    assert result["other threads"] == {"kafka-producer-network-thread | producer": 1}
    assert split(samples, after=1.5)["stateful"] == {}
