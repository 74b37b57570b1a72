"""The demo: what it prints is what happened, in an order a reader can follow."""

from __future__ import annotations

import itertools

from sparkwin.demo import clickstream, laggingPartitions, report


def test_the_lagging_partition_loses_events_to_spark_and_none_to_sparkwin(spark, tmp_path):
    lag = laggingPartitions(spark, str(tmp_path), batches=4)
    assert lag["lagging"] == 16
    # Spark's watermark follows the three fast partitions: once it moved (it trails by a batch
    # or two), the lagging one's events are behind it.
    assert 0 < lag["nativeDropped"] <= lag["lagging"]
    assert lag["sparkwinLate"] == 0


def test_the_demo_prints_each_output_in_order_and_draws_its_timeline(spark, tmp_path, capsys):
    run = clickstream(spark, str(tmp_path), users=4, files=4, seed=7)
    report(spark, str(tmp_path), run)
    out = capsys.readouterr().out
    headers = [line.split(":")[0] for line in out.splitlines() if line.startswith("== ")]
    assert headers == [
        "== main",
        "== late",
        "== errors",
        "== counters (observedMetrics['sparkwin'], summed over micro-batches)",
        "== timeline",
    ]
    main = out[out.index("== main") : out.index("== late")]
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in main.splitlines()
        if line.startswith("|") and not line.startswith("|start")
    ]
    assert len(rows) == run["counters"]["panesFired"] > 0
    # By window start, then user; a window's panes in the order they fired: by micro-batch, then
    # the growing session's end, then pane index. Nothing of one window between another's rows.
    keys = [(r[0], r[1], int(r[3]), r[2], int(r[5])) for r in rows]
    assert keys == sorted(keys)
    windows = [k for k, _ in itertools.groupby(rows, key=lambda r: (r[0], r[1]))]
    assert len(windows) == len(set(windows))
    assert (tmp_path / "timeline.png").read_bytes().startswith(b"\x89PNG")
