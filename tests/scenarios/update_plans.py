"""Fills in each scenario's ``plan`` from its ``builder``.

    python tests/scenarios/update_plans.py

The scenarios here are engine transcripts kept as data (as Beam keeps its trigger transcripts):
a pipeline, steps that drive the engine (elements, watermarks per channel, idleness, processing
time, end of input) and what must come out. ``tests/test_scenarios.py`` runs them through the
Python harness and checks that the builder still makes the stored plan; the JVM's
``ScenarioSuite`` runs the stored plan through the same engine without Python. Run this after
changing a builder expression or the plan format, and review the diff.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    import sparkwin as sw

    sys.path.insert(0, str(HERE.parent))
    from test_scenarios import build

    spark = sw.session(master="local[1]")
    for path in sorted(HERE.glob("*.json")):
        doc = json.loads(path.read_text())
        df = spark.createDataFrame([], doc["schema"])
        for scenario in doc["scenarios"]:
            pipeline = build(spark, df, scenario)
            scenario["plan"] = json.loads(pipeline.planJson())
        path.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"{path.name}: {len(doc['scenarios'])} scenarios", file=sys.stderr)
    spark.stop()


if __name__ == "__main__":
    main()
