"""sparkwin from a Spark Connect client: the same pipelines through both transports.

Tests that take `session` run twice: on the classic session (Py4J) and on a Spark Connect
session (the extension relation and the jar's plugin), served from the classic session's JVM
(`connectSpark` in conftest.py). Each run is checked against the harness, which neither
transport touches, so both runs give the same answer or one of them fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from pyspark.sql import DataFrame
from pyspark.sql.types import TimestampType
from sparkstreams import (
    BOUND,
    SCHEMA,
    SCRIPT,
    StreamResult,
    canonical,
    channelHarness,
    dataRows,
    replayInHarness,
    row,
    scripted,
    tumbling,
    writeBatches,
)

import sparkwin as sw
from sparkwin._spark import jar as _jar
from sparkwin._spark import runtime as _runtime
from sparkwin._transport import connect as _connect
from sparkwin._transport.connect import message as _connect_plan
from sparkwin.errors import (
    ConnectUnsupportedError,
    JarNotFoundError,
    PlanError,
    VersionMismatchError,
)
from sparkwin.testing import WindowHarness

ROWS = [r for batch in SCRIPT for r in batch]


@pytest.fixture(params=["classic", "connect"])
def session(request, spark):
    """The classic session, then a Spark Connect session of the same JVM."""
    return spark if request.param == "classic" else request.getfixturevalue("connectSpark")


def sessions(df: DataFrame) -> sw.Pipeline:
    return (
        scripted(df)
        .keyBy("user")
        .window(sw.EventTimeSessionWindows.withGap(5_000))
        .trigger(sw.CountTrigger.of(2))
        .aggregate(sw.agg.collectList("amount"), sw.agg.min("ts"))
    )


def windowAll(df: DataFrame) -> sw.Pipeline:
    return (
        scripted(df)
        .windowAll(sw.SlidingEventTimeWindows.of(10_000, 5_000))
        .aggregate(sw.agg.sum("amount"), sw.agg.max("ts"))
    )


def processed(df: DataFrame) -> sw.Pipeline:
    # Defined inside, so Python workers get the function by value.
    def paneSummary(key, window, pdf: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "user": [key[0]],
                "timing": [window.paneTiming],
                "n": [len(pdf)],
                "total": [int(pdf["amount"].sum())],
            }
        )

    return (
        scripted(df)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .allowedLateness(5_000)
        .process(paneSummary, "user string, timing string, n long, total long")
    )


def rowsOf(df: DataFrame) -> list[dict]:
    """Collected rows as dicts, timestamps as epoch milliseconds (as the harness gives them).

    SQL strings, not pyspark.sql.functions: those build classic or Connect Columns by a
    process-wide switch, and this process has both kinds of session.
    """
    columns = [
        f"unix_millis(`{f.name}`) AS `{f.name}`"
        if isinstance(f.dataType, TimestampType)
        else f"`{f.name}`"
        for f in df.schema.fields
    ]
    return [r.asDict(recursive=True) for r in df.selectExpr(*columns).collect()]


# ---------------------------------------------------------------------------------------------
# Both transports


@pytest.mark.compat
@pytest.mark.parametrize("build", [tumbling, sessions, windowAll], ids=lambda b: b.__name__)
def test_bounded_outputs_equal_the_harness(session, spark, build) -> None:
    pipeline = build(session.createDataFrame(ROWS, SCHEMA))
    assert isinstance(pipeline.toDF(), DataFrame)
    h = WindowHarness(build(spark.createDataFrame([], SCHEMA)))
    h.processElements(sorted((r for r in ROWS if r["ts"] is not None), key=lambda r: r["ts"]))
    h.processElements([r for r in ROWS if r["ts"] is None])
    h.endOfInput()
    got = rowsOf(pipeline.toDF())
    assert got and canonical(got) == canonical(h.extractOutput())
    errors = rowsOf(pipeline.getSideOutput("errors"))
    assert canonical(errors) == canonical(h.extractSideOutput("errors"))
    assert [(e["amount"], e["error"]) for e in errors] == [(99, "the timestamp is null")]
    if pipeline.lateOutputTag:  # bounded input: nothing is late
        assert rowsOf(pipeline.getSideOutput("late")) == []


@pytest.mark.compat
def test_process_function(session) -> None:
    rows = [r for r in ROWS if r["ts"] is not None]
    got = processed(session.createDataFrame(rows, SCHEMA)).toDF().collect()
    # Everything, then +infinity: nothing is late, every window fires once, on time.
    assert sorted(tuple(r) for r in got) == [
        ("a", "ON_TIME", 1, 4),
        ("a", "ON_TIME", 1, 10),
        ("a", "ON_TIME", 4, 19),
        ("b", "ON_TIME", 1, 7),
        ("b", "ON_TIME", 1, 11),
        ("b", "ON_TIME", 2, 7),
        ("c", "ON_TIME", 1, 8),
        ("c", "ON_TIME", 1, 12),
        ("z", "ON_TIME", 1, 0),
    ]


def test_schemas_describe_the_outputs(session, spark) -> None:
    pipeline = tumbling(session.createDataFrame(ROWS, SCHEMA))
    schemas = pipeline.schemas()
    assert set(schemas) == {"main", "late", "errors"}
    # Names and types; a select of the union's struct makes every column nullable.
    assert schemas["main"].simpleString() == pipeline.toDF().schema.simpleString()
    assert (
        schemas["errors"].simpleString() == pipeline.getSideOutput("errors").schema.simpleString()
    )
    assert schemas["late"].simpleString() == pipeline.getSideOutput("late").schema.simpleString()
    # The same as the classic transport's (a tautology on the classic run).
    assert schemas == tumbling(spark.createDataFrame([], SCHEMA)).schemas()
    proc = processed(session.createDataFrame([], SCHEMA)).schemas()
    assert proc["main"].simpleString() == "struct<user:string,timing:string,n:bigint,total:bigint>"


def _writeStream(
    session, workdir: Path, build, parts: list[list[list[dict]]], schema: str = SCHEMA
) -> StreamResult:
    """`pipeline.writeStream` over `parts`, one query per part on one checkpoint (a restart
    between parts); every output read back, and the batches' progress for the harness."""
    source, outputs = workdir / "source", workdir / "out"
    paths = {t: str(outputs / t) for t in ("main", "late", "errors")}
    result, start = StreamResult(), 0
    for part in parts:
        writeBatches(source, part, start=start)
        start += len(part)
        df = session.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(source))
        pipeline = build(df)
        tags = ["main", *pipeline.sideOutputTags()]
        query = pipeline.writeStream(str(workdir / "checkpoint"), {t: paths[t] for t in tags})
        try:
            query.processAllAvailable()
        finally:
            query.stop()
        result.progress += query.recentProgress
    # The properties, not p["numInputRows"]: Connect's progress (parsed from JSON) leaves that
    # key None and sums its sources only in the property.
    result.rowsByBatch = {_batchId(p): dataRows(p) for p in result.progress}
    result.checkpoint = workdir / "checkpoint"
    for tag, path in paths.items():
        if os.path.isdir(path):
            result.outputs[tag] = rowsOf(session.read.parquet(path).drop("batch_id"))
    return result


def _batchId(progress) -> int:
    # PySpark 3.5's progress is a dict; 4.x's an object with properties.
    return progress["batchId"] if isinstance(progress, dict) else progress.batchId


@pytest.mark.parametrize("build", [tumbling, processed], ids=lambda b: b.__name__)
def test_stream_restarted_from_its_checkpoint_equals_the_harness(
    session, spark, tmp_path: Path, build
) -> None:
    result = _writeStream(session, tmp_path, build, [SCRIPT[:3], SCRIPT[3:]])
    expected = replayInHarness(build(spark.createDataFrame([], SCHEMA)), result, SCRIPT)
    assert expected["main"]
    for tag, rows in expected.items():
        assert canonical(result.outputs.get(tag, [])) == canonical(rows), tag
    # Counters of every batch, no-data batches (where the watermark fires windows) too.
    metrics = [sw.observedMetrics(p) for p in result.progress]
    assert sum(m.get("errorRows", 0) for m in metrics) == 1
    if build is tumbling:
        assert sum(m.get("panesFired", 0) for m in metrics) == len(expected["main"])
        assert sum(m.get("lateSideOutput", 0) for m in metrics) == len(expected["late"]) == 3


CHANNEL_SCHEMA = "user string, amount long, ts long, part int"
# Partition 1 runs 20 s behind partition 0: one watermark for both would call its events late.
CHANNEL_SCRIPT = [
    [
        {
            "user": f"u{(b + i) % 2}",
            "amount": 1 + part,
            "ts": ts - 20_000 * part + 3_000 * i,
            "part": part,
        }
        for part in (0, 1)
        if b or not part  # partition 1, behind, is first read a batch later: declared, not late
        for i in range(3)
    ]
    for b, ts in enumerate(range(30_000, 80_000, 10_000))
]


def channeled(df: DataFrame) -> sw.Pipeline:
    strategy = sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND)
    return (
        sw.stream(df, "ts", channel="part", channels=[0, 1], watermark=strategy)
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .sideOutputLateData("late")
        .aggregate(sw.agg.sum("amount"))
    )


@pytest.mark.compat
def test_per_channel_watermarks_on_a_stream_equal_the_harness(session, spark, tmp_path) -> None:
    parts = [CHANNEL_SCRIPT[:2], CHANNEL_SCRIPT[2:]]
    result = _writeStream(session, tmp_path, channeled, parts, CHANNEL_SCHEMA)
    pipeline = channeled(spark.createDataFrame([], CHANNEL_SCHEMA))
    h = channelHarness(pipeline, result, CHANNEL_SCRIPT, "part", lambda m: m - BOUND - 1)
    expected = {"main": h.extractOutput(), "late": h.extractSideOutput("late")}
    assert expected["main"] and expected["late"] == []
    for tag, rows in expected.items():
        assert canonical(result.outputs.get(tag, [])) == canonical(rows), tag
    # The valve's watermark and the lagging channel holding it, from either transport.
    metrics = [m for m in map(sw.observedMetrics, result.progress) if m.get("channels")]
    last = metrics[-1]
    slowest = min(last["channels"], key=lambda c: c["watermark"])
    assert slowest["channel"] == "1" and last["watermark"] == slowest["watermark"]
    (tmp_path / "empty").mkdir()
    empty = session.readStream.schema(CHANNEL_SCHEMA).json(str(tmp_path / "empty"))
    described = channeled(empty).describe()
    assert "per channel of 'part'" in described["watermarks"]


def test_plan_errors_from_the_jvm_are_plan_errors(session) -> None:
    pipeline = tumbling(session.createDataFrame([], SCHEMA))
    pipeline.plan["planVersion"] = 99
    with pytest.raises(PlanError, match="plan version 99 is not supported") as raised:
        pipeline.schemas()
    assert "JVM stacktrace" not in str(raised.value)
    with pytest.raises(PlanError, match="plan version 99"):
        pipeline.toDF()


def test_a_plan_that_does_not_read_is_a_plan_error_on_both_transports(session) -> None:
    """docs/DESIGN.md, "Hostile input": nesting past the plan's limit (here 900 levels, under
    Jackson's own 1,000), text after the plan, a plan version of the wrong kind: each a
    PlanError from describe() and the rules, never a server error without details."""
    text = tumbling(session.createDataFrame([], SCHEMA)).planJson()
    wrongVersion = json.loads(text)
    wrongVersion["planVersion"] = "1"
    bad = [
        (
            text.replace('"keys":', f'"extra": {"[" * 899}{"]" * 899}, "keys":', 1),
            True,
            r"^the plan's JSON nests more than 128 levels deep \(objects and arrays\), at "
            r"/extra/0/",
        ),
        (
            text + text,
            True,
            r"^the plan's JSON goes on after its object ends, at character \d+: '\{",
        ),
        (
            text + " junk",
            True,
            r"^the plan's JSON goes on after its object ends, at character \d+: 'junk'; a plan "
            r"is one JSON object, with nothing after it$",
        ),
        (
            json.dumps(wrongVersion),
            False,
            r"^planVersion must be a whole number, the plan format's version \(1 for this jar\), "
            r'got string "1"$',
        ),
    ]
    for planJson, rulesRead, words in bad:
        with pytest.raises(PlanError, match=words):
            _runtime.describe(session, planJson)
        if rulesRead:  # the rules read a plan so far; its version is the decoder's
            with pytest.raises(PlanError, match=words):
                _runtime.verdict(session, planJson, True)


def test_a_bad_setting_names_the_setting(session, tmp_path: Path) -> None:
    stream = session.readStream.schema(SCHEMA).json(str(tmp_path))
    before = session.conf.get("spark.sparkwin.keyGroups", None)  # the shared session's "2"
    session.conf.set("spark.sparkwin.keyGroups", "0")
    try:
        with pytest.raises(PlanError, match="spark.sparkwin.keyGroups must be a whole number"):
            tumbling(stream).toDF()
    finally:
        if before is None:
            session.conf.unset("spark.sparkwin.keyGroups")
        else:
            session.conf.set("spark.sparkwin.keyGroups", before)


@pytest.mark.compat
def test_jvm_version(session) -> None:
    assert sw.jvm_version(session) == sw.__version__


# ---------------------------------------------------------------------------------------------
# Connect only


def test_the_harness_runs_in_the_local_jvm_of_a_connect_session(connectSpark, monkeypatch):
    pipeline = tumbling(connectSpark.createDataFrame([], SCHEMA))
    h = WindowHarness(pipeline)
    h.processElements([row("a", 1, 1000), row("a", 2, 3000)])
    h.endOfInput()
    assert [(r["user"], r["sum_amount"], r["count"]) for r in h.extractOutput()] == [("a", 3, 2)]
    # A client of a server elsewhere has no JVM in this process.
    from pyspark.sql import SparkSession

    monkeypatch.setattr(SparkSession, "_instantiatedSession", None)
    with pytest.raises(ConnectUnsupportedError, match=r"sparkwin.session\(\)"):
        WindowHarness(pipeline)


def test_replay_says_what_to_use_instead(connectSpark) -> None:
    df = connectSpark.createDataFrame([], "user string, amount long, ts long, arrival long")
    pipeline = (
        sw.stream(
            df,
            "ts",
            arrival="arrival",
            watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(BOUND),
        )
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .aggregate(sw.agg.count())
    )
    with pytest.raises(ConnectUnsupportedError, match="classic session") as raised:
        pipeline.replay()
    assert isinstance(raised.value, NotImplementedError)


def test_a_server_without_the_plugin_is_named(connectSpark, monkeypatch) -> None:
    # The plugin answers only its own type URL: to the server, this relation is one that no
    # plugin takes, as when the server runs without sparkwin's.
    monkeypatch.setattr(_connect_plan, "TYPE_URL", "type.googleapis.com/other.Relation")
    monkeypatch.setattr(_connect, "_checked", set())
    with pytest.raises(JarNotFoundError, match="spark.connect.extensions.relation.classes"):
        tumbling(connectSpark.createDataFrame([], SCHEMA)).toDF()


def test_a_jar_of_another_version_on_the_server_is_refused(connectSpark, monkeypatch) -> None:
    monkeypatch.setattr(_jar, "__version__", "0.0.0-other")  # the package's, as the check sees it
    monkeypatch.setattr(_connect, "_checked", set())
    with pytest.raises(VersionMismatchError, match="jar on the Spark Connect server is version"):
        sw.jvm_version(connectSpark)


def test_configure_registers_the_plugin_with_a_connect_builder() -> None:
    from pyspark.sql import SparkSession

    builder = sw.configure(SparkSession.builder.remote("local[2]"))
    assert builder._options["spark.connect.extensions.relation.classes"] == _connect.PLUGIN_CLASS
    assert builder._options["spark.jars"] == sw.jarPath()
    other = SparkSession.builder.config("spark.connect.extensions.relation.classes", "x.Plugin")
    classes = sw.configure(sw.configure(other))._options[
        "spark.connect.extensions.relation.classes"
    ]
    assert classes == f"x.Plugin,{_connect.PLUGIN_CLASS}"


def test_configure_names_the_gateway_plugin_and_a_failure_may_name_the_old_one() -> None:
    """Servers configured with the plugin's name up to 0.4.0 still load it (an alias in the jar,
    PluginNamesSuite); a failure to load either name reads as a missing plugin."""
    assert _connect.PLUGIN_CLASS == "sparkwin.gateway.connect.SparkwinRelationPlugin"
    for name in (_connect.PLUGIN_CLASS, _connect.OLD_PLUGIN_CLASS):
        assert _connect._missingPlugin(RuntimeError(f"ClassNotFoundException: {name}"))
    assert not _connect._missingPlugin(RuntimeError("some other failure"))


def test_the_wire_format_is_protobufs() -> None:
    """The hand-written encoding against protobuf's own encoder, with the message type built at
    run time from the .proto's fields (no generated code here either)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fileProto = descriptor_pb2.FileDescriptorProto(name="t.proto", package="t", syntax="proto3")
    message = fileProto.message_type.add(name="SparkwinRelation")
    field = descriptor_pb2.FieldDescriptorProto
    # `input` is a spark.connect.Relation; a message field's wire format is its bytes'.
    for number, name, kind in [
        (1, "operation", field.TYPE_STRING),
        (2, "plan_json", field.TYPE_STRING),
        (3, "input", field.TYPE_BYTES),
    ]:
        message.field.add(name=name, number=number, type=kind, label=field.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fileProto)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("t.SparkwinRelation"))
    plan = json.dumps({"planVersion": 1, "keys": ["ü" * 200]})  # non-ASCII, a 2-byte length
    relation = bytes(range(256)) * 3
    expected = cls(operation="windowed", plan_json=plan, input=relation).SerializeToString()
    assert _connect_plan.encode("windowed", plan, relation) == expected
    assert _connect_plan.encode("version", "", None) == cls(operation="version").SerializeToString()


def test_session_connect_starts_a_local_server_with_sparkwin(tmp_path: Path) -> None:
    """`sparkwin.session(connect=True)` as a user runs it: PySpark's own local Connect server,
    which cannot start next to this process's classic session, so in a process of its own."""
    script = textwrap.dedent(
        """
        import sparkwin as sw
        from sparkwin.errors import PlanError
        from sparkwin.testing import WindowHarness

        spark = sw.session(connect=True, **{"spark.sql.shuffle.partitions": "2"})
        assert type(spark).__module__ == "pyspark.sql.connect.session", type(spark)
        assert sw.jvm_version(spark) == sw.__version__
        df = spark.createDataFrame([("a", 1, 1000), ("a", 2, 4000), ("b", 5, 12000)],
                                   "user string, amount long, ts long")
        pipeline = (sw.stream(df, "ts").keyBy("user")
                    .window(sw.TumblingEventTimeWindows.of(10_000))
                    .aggregate(sw.agg.sum("amount")))
        got = sorted((r["user"], r["sum_amount"]) for r in pipeline.toDF().collect())
        assert got == [("a", 3), ("b", 5)], got
        def perPane(key, window, pdf):
            import pandas as pd
            return pd.DataFrame({"n": [len(pdf)]})
        proc = (sw.stream(df, "ts").keyBy("user")
                .window(sw.TumblingEventTimeWindows.of(10_000)).process(perPane, "n long"))
        assert sorted(r["n"] for r in proc.toDF().collect()) == [1, 2]  # Python workers run
        h = WindowHarness(pipeline)
        h.processElement({"user": "a", "amount": 1, "ts": 1000})
        h.endOfInput()
        assert len(h.extractOutput()) == 1
        spark.conf.set("spark.sparkwin.mapSideCombine", "maybe")
        stream = spark.readStream.schema("user string, amount long, ts long").json(".")
        try:
            (sw.stream(stream, "ts", watermark=sw.WatermarkStrategy.forMonotonousTimestamps())
             .keyBy("user").window(sw.TumblingEventTimeWindows.of(10_000))
             .aggregate(sw.agg.sum("amount")).toDF())
            raise AssertionError("no PlanError")
        except PlanError as e:
            assert "spark.sparkwin.mapSideCombine must be true or false" in str(e), e
        spark.stop()
        print("OK")
        """
    )
    env = dict(os.environ)
    # PySpark's local server takes port 15002 unless SPARK_TESTING is set, when it takes a free
    # port and the client asks the JVM for it: other test runs on this machine may hold 15002.
    env["SPARK_TESTING"] = "1"
    for var in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE"):
        env.pop(var, None)
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("OK"), done.stderr[-4000:]


def test_arrival_order_storm_windows_and_timestamp_combiners(session) -> None:
    # This round's plan fields (no timestamp, Storm's eventTime false, timestampCombiner) go
    # through the extension relation as through Py4J.
    taps = session.createDataFrame([("a", i) for i in range(1, 9)], "user string, id long")
    counted = (
        sw.stream(taps.coalesce(1))
        .keyBy("user")
        .window(sw.StormWindows.of(sw.Count(5), sw.Count(2)))
        .aggregate(sw.agg.collectList("id"))
    )
    got = sorted(r["collect_list_id"] for r in counted.toDF().collect())
    assert got == sorted([[1, 2], [1, 2, 3, 4], [2, 3, 4, 5, 6], [4, 5, 6, 7, 8]])
    latest = (
        scripted(session.createDataFrame(ROWS[:3], SCHEMA))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(10_000))
        .withTimestampCombiner("LATEST")
        .aggregate(sw.agg.count())
        .toDF()
    )
    got = {r["user"]: int(r["window_time"].timestamp() * 1000) for r in latest.collect()}
    assert got == {"a": 4000, "b": 2000}


def test_a_query_start_is_tried_again_only_while_the_foreachbatch_worker_times_out() -> None:
    calls: list[int] = []

    def failing(times: int, message: str):
        def start() -> str:
            calls.append(1)
            if len(calls) <= times:
                raise RuntimeError(f"{message}\n\nJVM stacktrace: ...")
            return "query"

        return start

    with pytest.warns(RuntimeWarning) as warned:
        assert _connect.startRetryingWorkerTimeouts(failing(2, _connect.WORKER_TIMEOUT)) == "query"
    assert len(calls) == 3
    assert [str(w.message).split("again ")[1] for w in warned] == ["(2 of 3)", "(3 of 3)"]
    calls.clear()
    with pytest.raises(RuntimeError, match="connect back"), pytest.warns(RuntimeWarning):
        _connect.startRetryingWorkerTimeouts(failing(3, _connect.WORKER_TIMEOUT))
    assert len(calls) == 3  # three attempts, then Spark's own error
    calls.clear()
    with pytest.raises(RuntimeError, match="a bad checkpoint"):
        _connect.startRetryingWorkerTimeouts(failing(1, "a bad checkpoint"))
    assert len(calls) == 1  # any other failure is the caller's at once
