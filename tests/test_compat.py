"""State outlives releases: a checkpoint written by any sparkwin release from 0.4.0 on resumes on
this build with the results an uninterrupted run gives (docs/DESIGN.md, "State outlives
releases").

Each release writes, once, a checkpoint of every pipeline family it has (tests/compat/
families.py), stopped mid-stream with windows open, timers pending and late data still to come
(tests/compat/write_checkpoints.py); they are committed under tests/compat/checkpoints/<release>-
spark<line>. Here each is copied, resumed with the rest of its input, and its outputs (the
release's, then this build's; a batch run again replaces what it wrote) are held to an
uninterrupted run: the harness fed every batch as the checkpoint records it (its time, Spark's
watermark, its rows), or for chained pipelines one query of this build over all the input. Where
Spark refuses the restart (sparkwin 0.4's processing time on Spark's timers), the query is refused
first with sparkwin's error naming ``sparkwin.state.migrate``, and the moved checkpoint resumes. A
Spark 3.5 checkpoint resumes on Spark 4 as it is (its operator, ``flatMapGroupsWithState``, runs on
both lines).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pyspark
import pytest
from sparkstreams import (
    canonical,
    channelHarnessOf,
    harnessOf,
    plainTimestamps,
    runStream,
    scheduleOf,
    writeBatches,
)

import sparkwin as sw
from sparkwin.errors import CheckpointError

sys.path.insert(0, str(Path(__file__).resolve().parent / "compat"))
import families  # noqa: E402

from sparkwin._support import LINES  # noqa: E402

CHECKPOINTS = Path(__file__).resolve().parent / "compat" / "checkpoints"
LINE = "3.5" if pyspark.__version__.startswith("3.") else "4"


# The newest Spark line resumes every family of every release; the older 4.x lines (bin/matrix)
# run the same jar, and resume a family of each kind of state: event time with a late output,
# channels with idleness, processing time on the clock, a user's own classes.
NEWEST = pyspark.__version__.startswith(LINES[-1].name)
OLDER_4X_FAMILIES = {"sessions_late", "channels_idle", "processing_windows", "java_extension"}


def _cases() -> list[Any]:
    out = []
    for release in sorted(p for p in CHECKPOINTS.iterdir() if p.is_dir()):
        for family in sorted(p for p in release.iterdir() if p.is_dir()):
            written = release.name.rsplit("-spark", 1)[1]
            # A Spark 4 checkpoint is read by Spark 4 only; a 3.5 one by either line.
            if written == "4" and LINE == "3.5":
                continue
            if LINE == "4" and not NEWEST and family.name not in OLDER_4X_FAMILIES:
                continue
            out.append(
                pytest.param(release.name, family.name, False, id=f"{release.name}/{family.name}")
            )
            # A 3.5 checkpoint also moves to transformWithState (real-time mode's operator).
            if written == "3.5" and LINE == "4" and NEWEST and family.name in OLDER_4X_FAMILIES:
                out.append(
                    pytest.param(
                        release.name, family.name, True, id=f"{release.name}/{family.name}/moved"
                    )
                )
    return out


@pytest.fixture
def releaseSession(spark):
    """The test session as a release's user has it: no key-group count set (the suite's
    session sets 2; a checkpoint keeps the count it was written with)."""
    before = spark.conf.get("spark.sparkwin.keyGroups", None)
    spark.conf.unset("spark.sparkwin.keyGroups")
    try:
        yield spark
    finally:
        if before is not None:
            spark.conf.set("spark.sparkwin.keyGroups", before)


@pytest.mark.compat
@pytest.mark.parametrize(("release", "name", "move"), _cases())
def test_a_release_checkpoint_resumes_with_an_uninterrupted_runs_results(
    request, releaseSession, tmp_path: Path, release: str, name: str, move: bool
) -> None:
    spark = releaseSession
    family = families.BY_NAME[name]
    if family.extending:
        request.getfixturevalue("extendingJar")  # the user's classes on the session
    written = CHECKPOINTS / release / name
    meta = json.loads((written / "meta.json").read_text())
    checkpoint = tmp_path / "checkpoint"
    shutil.copytree(written / "checkpoint", checkpoint)
    source = tmp_path / "source"
    source.mkdir()
    _sourceMovedTo(checkpoint, source)
    df = spark.readStream.schema(families.SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
    pipeline = family.build(df)

    refused = _needsMoving(release, family)
    if refused:
        with pytest.raises(CheckpointError, match=r"sparkwin\.state\.migrate"):
            pipeline.writeStream(str(checkpoint), {"main": lambda d, b: None})
    if refused or move:
        target = tmp_path / "moved"
        sw.state.relocate(str(checkpoint))  # the committed copy stood elsewhere when written
        report = sw.state.migrate(str(checkpoint), str(target), pipeline)
        assert report["batch"] == max(int(p.name) for p in (checkpoint / "commits").iterdir())
        checkpoint = target

    if LINE == "4":  # each checkpoint resumes on the operator its state is on
        onProcessor = refused or move or release.endswith("-spark4")
        host = "transformWithState" if onProcessor else "flatMapGroupsWithState"
        assert host in pipeline.describe(checkpointLocation=str(checkpoint))["runtime"]

    writeBatches(source, family.batches[family.stopAt :], start=family.stopAt)
    outputs = _resume(pipeline, checkpoint, family)
    before = {
        int(b): tags for b, tags in json.loads((written / "outputs.json").read_text()).items()
    }
    merged: dict[str, list[dict[str, Any]]] = {}
    for _batch, tags in sorted({**before, **outputs}.items()):
        for tag, rows in tags.items():
            merged.setdefault(tag, []).extend(rows)

    expected = _uninterrupted(spark, tmp_path, pipeline, family, checkpoint)
    for tag in ["main", *pipeline.sideOutputTags()]:
        got, want = canonical(merged.get(tag, [])), canonical(expected.get(tag, []))
        missing = [r for r in want if r not in got]
        extra = [r for r in got if r not in want]
        assert got == want, (
            f"{release} {name} ({meta['sparkwin']} on Spark {meta['spark']}): output {tag!r} "
            f"misses {missing} and has more {extra}"
        )
    assert merged.get("main"), "the family fires windows"


def _sourceMovedTo(checkpoint: Path, source: Path) -> None:
    """The file source's log names each file by its full path, where write_checkpoints.py wrote
    it. A query stopped after planning a batch it did not commit reads that batch's files again
    on restart, so they must be found here: the resumed test writes the same file names into
    ``source``, and the log is pointed there (a user's source stays where it was)."""
    written = re.compile(r"file:[^\"]*/compat-[^/\"]+/source/")
    for log in (checkpoint / "sources").rglob("*"):
        if log.is_file() and not log.name.startswith("."):
            text = log.read_text()
            moved = written.sub(f"file://{source}/", text)
            if moved != text:
                log.write_text(moved)


def _needsMoving(release: str, family: families.Family) -> bool:
    """Where Spark refuses the restart: sparkwin 0.4's pipelines that kept processing time on
    Spark's timers."""
    version = release.rsplit("-spark", 1)[0]
    return version == "0.4.0" and family.processingTime


def _resume(pipeline: sw.Pipeline, checkpoint: Path, family: families.Family) -> dict[int, Any]:
    """This build's outputs of the resumed query, per batch and output."""
    outputs: dict[int, dict[str, list[dict[str, Any]]]] = {}

    def collector(tag: str) -> Any:
        def collect(df: Any, batchId: int) -> None:
            rows = [r.asDict(recursive=True) for r in plainTimestamps(df).collect()]
            outputs.setdefault(batchId, {})[tag] = rows

        return collect

    tags = ["main", *pipeline.sideOutputTags()]
    query = pipeline.writeStream(
        str(checkpoint), {t: collector(t) for t in tags}, trigger=family.trigger
    )
    try:
        last = len(family.batches) - 1
        deadline = time.monotonic() + 120
        while not _read(query, last):
            if query.exception() is not None:
                raise query.exception()  # type: ignore[misc]
            assert time.monotonic() < deadline, "the resumed query did not read its input"
            time.sleep(0.05)
        if family.trigger is None:
            query.processAllAvailable()
        time.sleep(family.linger)
    finally:
        query.stop()
    # A batch the stop interrupted after its sink ran but before its commit runs again after a
    # restart (an idempotent sink's view): only committed batches count, as the harness's
    # schedule holds only those.
    committed = {int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit()}
    return {b: tags for b, tags in outputs.items() if b in committed}


def _read(query: Any, last: int) -> bool:
    progress = query.lastProgress
    if not progress:
        return False
    return any(
        str(s["endOffset"]).replace(" ", "").replace("'", '"') == f'{{"logOffset":{last}}}'
        for s in progress["sources"]
    )


def _uninterrupted(
    spark: Any, tmp_path: Path, pipeline: sw.Pipeline, family: families.Family, checkpoint: Path
) -> dict[str, list[dict[str, Any]]]:
    """What one run over all the input gives: the harness fed every batch as the checkpoint
    records it, or for chained pipelines one query of this build."""
    if family.chained:
        fresh = runStream(
            spark, tmp_path / "uninterrupted", families.SCHEMA, family.build, family.batches
        )
        return {t: rows for t, rows in fresh.outputs.items()}
    schedule = scheduleOf(checkpoint, family.batches)
    if family.channel is not None:
        bound = 1000  # the channel family's bounded out-of-orderness
        h = channelHarnessOf(
            pipeline, schedule, family.channel, lambda m: m - bound - 1, family.idleTimeout
        )
    else:
        h = harnessOf(pipeline, schedule, family.processingTime)
    out = {"main": h.extractOutput(), "errors": h.extractSideOutput("errors")}
    if pipeline.lateOutputTag:
        out[pipeline.lateOutputTag] = h.extractSideOutput(pipeline.lateOutputTag)
    return out
