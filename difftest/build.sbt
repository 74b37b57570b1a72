// Differential tests: sparkwin's engine (through its Harness) against Flink's own
// WindowOperator (its operator test harness) and Storm's WindowManager. Test-only: nothing here
// is published, aggregated into the root project, or shipped in the jar or the wheel.
val flinkVersion = "2.1.0"
val stormVersion = "2.8.1"

name := "sparkwin-difftest"
publish / skip := true
scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked")

libraryDependencies ++= Seq(
  "org.apache.flink" % "flink-streaming-java" % flinkVersion % Test,
  "org.apache.flink" % "flink-runtime" % flinkVersion % Test,
  ("org.apache.flink" % "flink-runtime" % flinkVersion % Test).classifier("tests"),
  "org.apache.flink" % "flink-test-utils-junit" % flinkVersion % Test,
  "org.apache.storm" % "storm-client" % stormVersion % Test,
  "org.scalameta" %% "munit" % "1.2.4" % Test
)

testFrameworks := Seq(new TestFramework("munit.Framework"))
Test / fork := true
Test / javaOptions ++= Seq("-Xmx2g")
Test / parallelExecution := false
// SPARKWIN_DIFF_SEQUENCES, SPARKWIN_DIFF_SEED and SPARKWIN_DIFF_REPLAY reach the forked tests
// through the environment (see DifferentialSuites.scala).
