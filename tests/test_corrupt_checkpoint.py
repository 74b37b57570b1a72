"""A damaged checkpoint on a real stream: what Spark's own checks catch before sparkwin sees a
byte, and what sparkwin says when a damaged value that passes them reaches its codecs (the key
group, the layout and the offset; never an ArrayIndexOutOfBounds, a NegativeArraySize or an
OutOfMemoryError). docs/DESIGN.md, "Hostile input".
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from sparkstreams import SCHEMA, SCRIPT, onOperator, tumbling, writeBatches

# Crashes a damaged value must never turn into.
CRASHES = ("ArrayIndexOutOfBounds", "NegativeArraySize", "OutOfMemoryError", "BufferUnderflow")


def _run(spark: SparkSession, dirs: Path, batches: list, start: int) -> None:
    """The script's tumbling pipeline over `batches` (numbered from `start`), to its end."""
    source = dirs / "source"
    writeBatches(source, batches, start=start)
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
    paths = {t: str(dirs / "out" / t) for t in ("main", "late", "errors")}
    q = tumbling(df).writeStream(str(dirs / "checkpoint"), paths)
    try:
        q.processAllAvailable()
    finally:
        q.stop()


def _changelogs(dirs: Path) -> list[Path]:
    """The state store's changelog files, newest batch last."""
    logs = list((dirs / "checkpoint" / "state").rglob("*.changelog"))
    return sorted(logs, key=lambda p: int(p.name.split(".")[0].split("_")[0]))


def _codec(spark: SparkSession):  # noqa: ANN202 (a Py4J object)
    """Spark's codec of state-store files (lz4 unless the session says otherwise)."""
    name = spark.conf.get("spark.sql.streaming.stateStore.compression.codec", "lz4")
    conf = spark.sparkContext._jsc.sc().conf()
    return spark.sparkContext._jvm.org.apache.spark.io.CompressionCodec.createCodec(conf, name)


def _failure(spark: SparkSession, dirs: Path) -> str:
    """The restarted query's failure, as text with its causes."""
    with pytest.raises(Exception) as raised:
        _run(spark, dirs, [[{"user": u, "amount": 1, "ts": 50000} for u in "abcz"]], len(SCRIPT))
    return str(raised.value)


def test_flipped_bytes_in_a_state_file_are_caught_by_spark_before_sparkwin(
    spark: SparkSession, tmp_path: Path
) -> None:
    _run(spark, tmp_path, SCRIPT, 0)
    log = _changelogs(tmp_path)[-1]
    data = bytearray(log.read_bytes())
    for at in range(len(data) // 3, len(data) // 3 + 8):  # inside the compressed body
        data[at] ^= 0x5A
    log.write_bytes(bytes(data))
    message = _failure(spark, tmp_path)
    assert not any(c in message for c in CRASHES), message
    # lz4's block checksum on Spark 4.3 ("Stream is corrupted"); Hadoop's sidecar .crc is not
    # checked on this read. Either is Spark's own word, never sparkwin's.
    assert "Stream is corrupted" in message or "Checksum" in message, message
    assert "corrupt sparkwin state" not in message, message


def test_a_damaged_value_that_passes_sparks_checks_names_the_key_group_and_layout(
    spark: SparkSession, tmp_path: Path
) -> None:
    with onOperator(spark, "transformWithState"):  # its map state keeps records as entries
        _run(spark, tmp_path, SCRIPT, 0)
    codec = _codec(spark)
    jvm = spark.sparkContext._jvm
    # A key group's record in buckets: layout 1 + 16, then the key groups (2, conftest.py).
    header = bytes([0x11]) + struct.pack(">i", 2)
    damaged = 0
    for log in _changelogs(tmp_path):
        stream = codec.compressedInputStream(jvm.java.io.FileInputStream(str(log)))
        data = bytearray(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        stream.close()
        at = data.find(header)
        while at >= 0:
            # The wake-up count, after the version, key groups, timer, live keys and buckets.
            data[at + 25 : at + 29] = struct.pack(">i", 0x7FFFFFFF)
            damaged += 1
            at = data.find(header, at + 1)
        out = codec.compressedOutputStream(jvm.java.io.FileOutputStream(str(log)))
        out.write(bytes(data))
        out.close()
        # Hadoop's sidecar checksum is stale now; Spark 4.3 does not check it when it reads a
        # changelog, and a file system that did would need the rewrite's own.
        log.with_name(f".{log.name}.crc").unlink(missing_ok=True)
    assert damaged, "no group record found in the changelogs"
    message = _failure(spark, tmp_path)
    assert not any(c in message for c in CRASHES), message
    assert "corrupt sparkwin state in the key group labelled" in message, message
    assert "(one of 2, sparkwin's " in message, message
    assert "a key group's record, layout 17" in message, message
    assert "2147483647 wake-ups" in message and "at byte" in message, message
