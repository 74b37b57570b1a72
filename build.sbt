// sparkwin's JVM core. Spark is `provided`. The engine cross-builds: Scala 2.13 against the newest
// supported PySpark's own jars (its release is not on Maven Central; bin/matrix links that one jar
// against every 4.x line), Scala 2.12 against Spark 3.5 from Maven Central (`++2.12 core/test`),
// each with its Spark line's shim (`spark4Only` below).
import scala.sys.process._

val supportTable = IO.read(file("python/sparkwin/_support.py"))

// python/sparkwin/_support.py's support table (the one table of versions): each row's tested
// PySpark and whether it names `scala="2.12"` (Spark 3.5's jars; the other rows are 2.13).
val supportRows: List[(String, Boolean)] =
  "SparkLine\\(\\(\\d+, \\d+\\), \"([^\"]+)\"([^\\n]*)".r
    .findAllMatchIn(supportTable)
    .map(m => (m.group(1), m.group(2).contains("scala=\"2.12\"")))
    .toList

// The newest line: Scala 2.13 compiles against its jars.
val pinnedSpark = supportRows.lastOption
  .map(_._1)
  .getOrElse(sys.error("python/sparkwin/_support.py has no SparkLine rows"))

// The Scala 2.12 line (Spark 3.5: the last line with 2.12 jars).
val pinnedSpark212 = supportRows
  .collectFirst { case (v, true) => v }
  .getOrElse(sys.error("python/sparkwin/_support.py has no SparkLine row with scala=\"2.12\""))

val scala213 = "2.13.18"
val scala212 = "2.12.18" // the scala-library PySpark 3.5 ships

// The Python package version is the one source of truth; the jar carries the same string.
val sparkwinVersion = {
  val text = IO.read(file("python/sparkwin/_version.py"))
  "__version__ = \"([^\"]+)\"".r
    .findFirstMatchIn(text)
    .map(_.group(1))
    .getOrElse(
      sys.error("python/sparkwin/_version.py has no __version__")
    )
}

/** The `jars/` folder of PySpark `version`: `$dirVar` if set, else that of the pyspark that
  * `python` imports, which must be that version. `fix` says how to get one.
  */
def pysparkJars(version: String, dirVar: String, python: String, fix: String): File =
  sys.env.get(dirVar).map(file).getOrElse {
    val probe =
      "import os, pyspark; print(pyspark.__version__); " +
        "print(os.path.join(os.path.dirname(pyspark.__file__), 'jars'))"
    val lines =
      try Seq(python, "-c", probe).!!(ProcessLogger(_ => ())).trim.linesIterator.toList
      catch { case _: Exception => Nil }
    // MessageOnlyException: sbt prints the message and the fix, without a stack trace.
    lines match {
      case v :: dir :: Nil if v == version => file(dir)
      case v :: _ :: Nil =>
        throw new MessageOnlyException(
          s"sparkwin compiles against PySpark $version but $python has pyspark $v. $fix"
        )
      case _ =>
        throw new MessageOnlyException(
          s"sparkwin compiles against PySpark $version's jars and found no pyspark in $python. $fix"
        )
    }
  }

// Scala 2.13: $SPARK_JARS_DIR, else the pyspark of `$SPARKWIN_PYTHON` (default python3).
lazy val sparkJarsDir: File = {
  val python = sys.env.getOrElse("SPARKWIN_PYTHON", "python3")
  pysparkJars(
    pinnedSpark,
    "SPARK_JARS_DIR",
    python,
    s"Run `$python -m pip install pyspark==$pinnedSpark`, point SPARKWIN_PYTHON at a python " +
      "that has it, or set SPARK_JARS_DIR."
  )
}

// The jars of the Spark that this Scala version compiles against, for the lines whose PySpark
// release Maven Central lacks (the newest, 4.3.0): a task, so a build that never compiles for 2.13
// never needs PySpark. Scala 2.12 (Spark 3.5) resolves Spark from Maven Central instead (below).
lazy val sparkJars = Def.task {
  if (scalaBinaryVersion.value == "2.12") Nil else (sparkJarsDir ** "*.jar").classpath
}

// Spark 3.5 for the Scala 2.12 jar, `provided` as every Spark library has it: sbt resolves it from
// Maven Central with its dependencies (its scala-collection-compat gives 2.12 the
// `scala.jdk.CollectionConverters` of 2.13). No PySpark is installed to build it, so a wheel built
// from nothing needs no pip inside the build (DESIGN.md, "Building from nothing").
lazy val spark35 = Def.setting {
  if (scalaBinaryVersion.value != "2.12") Nil
  else Seq("org.apache.spark" %% "spark-sql" % pinnedSpark212 % Provided)
}

ThisBuild / scalaVersion := scala213
ThisBuild / version := sparkwinVersion
ThisBuild / organization := "io.sparkwin"

// What differs between Spark lines lives in per-version source folders that sbt adds by Scala
// version, which is the Spark line here (as Iceberg's spark/v3.5, spark/v4.0): src/main/scala-2.13
// (Spark 4: `transformWithState`) and src/main/scala-2.12 (Spark 3.5: `flatMapGroupsWithState`),
// each an object `SparkShim` and its operator's host. The Spark Connect plugin (Spark 4's
// RelationPlugin; Spark 3.5's jars have no Connect server) is left out of the 2.12 build by path,
// with its old name's alias beside it. A folder ends with '/'.
val spark4Only = Seq("sparkwin/gateway/connect/")

/** `sources` without the Spark-4-only ones when compiling for Scala 2.12. */
def forSpark(sources: Seq[File], root: File, scalaBinary: String): Seq[File] =
  if (scalaBinary != "2.12") sources
  else
    sources.filterNot { f =>
      IO.relativize(root, f)
        .exists(path => spark4Only.exists(p => path == p || (p.endsWith("/") && path.startsWith(p))))
    }

// Spark 3.5 runs on Java 8, 11 and 17, so the 2.12 jar keeps to Java 8's API and class files.
val javaRelease = Def.setting(if (scalaBinaryVersion.value == "2.12") "8" else "17")

lazy val core = (project in file("jvm"))
  .settings(
    name := "sparkwin-core",
    crossScalaVersions := Seq(scala213, scala212),
    scalacOptions ++= Seq(
      "-release",
      javaRelease.value,
      "-deprecation",
      "-feature",
      "-unchecked",
      "-Xlint:-unused,_"
    ),
    javacOptions ++= Seq("--release", javaRelease.value),
    Compile / unmanagedSources := forSpark(
      (Compile / unmanagedSources).value,
      (Compile / scalaSource).value,
      scalaBinaryVersion.value
    ),
    Test / unmanagedSources := forSpark(
      (Test / unmanagedSources).value,
      (Test / scalaSource).value,
      scalaBinaryVersion.value
    ),
    // `provided`: on the compile and test classpaths, never in the jar.
    Compile / unmanagedJars ++= sparkJars.value,
    Test / unmanagedJars ++= sparkJars.value,
    libraryDependencies ++= spark35.value,
    // munit's releases for Scala 2.12 stop at 1.2.2 (munit-scalacheck's at 1.0.0).
    libraryDependencies ++= {
      val (munit, scalacheck) =
        if (scalaBinaryVersion.value == "2.12") ("1.2.2", "1.0.0") else ("1.2.4", "1.2.0")
      Seq(
        "org.scalameta" %% "munit" % munit % Test,
        "org.scalameta" %% "munit-scalacheck" % scalacheck % Test
      )
    },
    // The one contract with the Python package: the jar carries the package's contract.json.
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "sparkwin" / "contract.json"
      IO.copyFile(file("python/sparkwin/contract.json"), out)
      Seq(out)
    }.taskValue,
    // The jar knows its own version so Python can check it matches the package.
    Compile / sourceGenerators += Def.task {
      val out = (Compile / sourceManaged).value / "sparkwin" / "BuildInfo.scala"
      IO.write(
        out,
        s"""package sparkwin
           |
           |/** Generated by build.sbt from python/sparkwin/_version.py. */
           |object BuildInfo {
           |  val version: String = "${version.value}"
           |  val sparkVersion: String = "${if (scalaBinaryVersion.value == "2.12") pinnedSpark212
          else pinnedSpark}"
           |  val scalaVersion: String = "${scalaBinaryVersion.value}"
           |}
           |""".stripMargin
      )
      Seq(out)
    }.taskValue,
    Test / fork := true,
    Test / javaOptions ++= Seq(
      "-Xmx3g",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED"
    ),
    Test / parallelExecution := false,
    testFrameworks := Seq(new TestFramework("munit.Framework"))
  )

// Engine-alone benchmarks (benchmarks/run.py drives them); never part of the shipped jar.
lazy val bench = (project in file("benchmarks/jvm"))
  .dependsOn(core)
  .settings(
    name := "sparkwin-bench",
    publish / skip := true,
    scalacOptions ++= Seq("-release", "17"),
    Compile / unmanagedJars ++= sparkJars.value,
    Compile / run / fork := true,
    Compile / run / javaOptions ++= Seq("-Xmx4g", "-XX:+UseParallelGC")
  )

// Flink's own WindowOperator as a benchmark peer (run.py's flink-operator row), driven by its
// operator test harness, and the latency benchmark's Kafka producer and Kafka-source Flink job:
// benchmark-only, never aggregated into root, the jar or the wheel.
lazy val flinkBench = (project in file("benchmarks/flink"))
  .settings(
    name := "sparkwin-flink-bench",
    publish / skip := true,
    scalacOptions ++= Seq("-release", "17"),
    libraryDependencies ++= Seq(
      "org.apache.flink" % "flink-streaming-java" % "2.1.0",
      "org.apache.flink" % "flink-runtime" % "2.1.0",
      ("org.apache.flink" % "flink-runtime" % "2.1.0").classifier("tests"),
      "org.apache.flink" % "flink-test-utils-junit" % "2.1.0",
      // The latency benchmark's Flink job reads and writes the local broker (its producer too).
      "org.apache.flink" % "flink-connector-kafka" % "5.0.0-2.1",
      "org.apache.flink" % "flink-connector-base" % "2.1.0",
      "org.scalameta" %% "munit" % "1.2.4" % Test
    ),
    testFrameworks := Seq(new TestFramework("munit.Framework")),
    // Flink's job master deserialises the job's classes by name: in a JVM of its own, with a
    // flat classpath, not in sbt's layered class loaders.
    Test / fork := true
  )

// Differential tests against Flink's and Storm's own operators (difftest/build.sbt has the
// rest); test-only, never aggregated into root, never in the jar or the wheel.
lazy val difftest = (project in file("difftest")).dependsOn(core)

lazy val root = (project in file("."))
  .aggregate(core)
  .settings(publish / skip := true, Compile / sources := Nil, Test / sources := Nil)
