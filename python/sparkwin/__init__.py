"""sparkwin: Flink-grade event-time windowing for Apache Spark.

The Python package builds a pipeline plan and hands it to the JVM core; no Python runs per
event unless a pipeline asks for a Python window function.

Example::

    import sparkwin as sw
    spark = sw.session()
    pipeline = (
        sw.stream(df, "ts", watermark=sw.WatermarkStrategy.forBoundedOutOfOrderness(5_000))
        .keyBy("user")
        .window(sw.TumblingEventTimeWindows.of(60_000))
        .aggregate(sw.agg.count(), sw.agg.sum("amount"))
    )
"""

from sparkwin import agg, jvm, plot, state
from sparkwin._spark.jar import jarPath
from sparkwin._spark.runtime import PaneWindow
from sparkwin._spark.session import configure, jvm_version, session
from sparkwin._transport import observedMetrics
from sparkwin._version import __version__
from sparkwin.agg import Aggregate
from sparkwin.assigners import (
    CalendarWindows,
    ComputedWindows,
    Count,
    EventTimeSessionWindows,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    StormWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)
from sparkwin.evictors import ConditionEvictor, CountEvictor, DeltaEvictor, Evictor, TimeEvictor
from sparkwin.outputs import (
    DeltaOutput,
    KafkaOutput,
    Output,
    RowOutput,
    forEachRow,
    toDelta,
    toKafka,
    toTable,
)
from sparkwin.pipeline import Pipeline
from sparkwin.replay import Replay
from sparkwin.stream import DataStream, KeyedStream, WindowedStream, stream
from sparkwin.triggers import (
    AfterAll,
    AfterEach,
    AfterFirst,
    AfterPane,
    AfterProcessingTime,
    AfterWatermark,
    AggregateTrigger,
    ConditionTrigger,
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    DeltaTrigger,
    EventTimeTrigger,
    NeverTrigger,
    OrFinally,
    ProcessingTimeoutTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Repeatedly,
    Trigger,
)
from sparkwin.watermark import WatermarkStrategy

__all__ = [
    "AfterAll",
    "AfterEach",
    "AfterFirst",
    "AfterPane",
    "AfterProcessingTime",
    "AfterWatermark",
    "AggregateTrigger",
    "CalendarWindows",
    "ComputedWindows",
    "ConditionEvictor",
    "Aggregate",
    "ConditionTrigger",
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "Count",
    "CountEvictor",
    "CountTrigger",
    "DataStream",
    "DeltaEvictor",
    "DeltaOutput",
    "DeltaTrigger",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "Evictor",
    "GlobalWindows",
    "KafkaOutput",
    "KeyedStream",
    "NeverTrigger",
    "OrFinally",
    "Output",
    "PaneWindow",
    "Pipeline",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "ProcessingTimeoutTrigger",
    "PurgingTrigger",
    "Repeatedly",
    "Replay",
    "RowOutput",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "StormWindows",
    "TimeEvictor",
    "Trigger",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "WatermarkStrategy",
    "WindowAssigner",
    "WindowedStream",
    "__version__",
    "agg",
    "configure",
    "forEachRow",
    "jarPath",
    "jvm",
    "jvm_version",
    "observedMetrics",
    "plot",
    "session",
    "state",
    "stream",
    "toDelta",
    "toKafka",
    "toTable",
]
