"""How each system under test is built and run, a module per benchmark: a function per system
that turns the benchmark's input into its results, and how the runs are started.

- windows: run.py's, scale.py's and cluster.py's workloads on Spark (sparkwin, Spark's own
  windows, applyInPandasWithState, the stateless floor);
- pandas_windows: the applyInPandasWithState implementation;
- jvm: the systems in a JVM of their own (sparkwin's engine alone, Flink's WindowOperator, a
  Flink job), from the sbt projects `bench` and `flinkBench`;
- nexmark, nexmark_jvm: Nexmark's queries on Spark, and their input for the JVM systems;
- latency: latency.py's systems, from a Kafka topic to another (Spark's and a Flink job);
- soak: soak.py's pipeline, its input's shape and its run's settings.

A system module builds and runs; checks, reports and command lines are the benchmarks'.
"""
