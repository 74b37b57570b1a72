import sbt._
import sbt.Keys._

/** The jars the Kafka tests need, resolved from Maven Central into coursier's cache: never committed,
  * never in the shipped jar or the wheel.
  *
  *   - a KRaft broker (kafka_2.13 and its runtime dependencies, with log4j2 as its logging), which
  *     tests/kafka_broker.py runs as a JVM of its own;
  *   - Spark's Kafka connector for the tests' SparkSession, less every jar PySpark's `jars/` folder
  *     already has (Spark, Scala, Hadoop, slf4j, compression codecs...): PySpark's copies are the ones
  *     that run.
  *
  * `kafkaJars/kafkaClasspath` writes the two lists, one path a line, to target/kafka/.
  */
object KafkaTestJars {
  val kafkaVersion = "4.1.1"

  // The connector of the newest line in the support table (python/sparkwin/_support.py), the one
  // `sparkwin.session(kafka=True)` adds there: Maven Central has no spark-sql-kafka 4.3.0 yet, and
  // 4.2.0 runs on PySpark 4.3.0 (tests/test_kafka.py reads and writes through it).
  lazy val connectorVersion: String =
    "SparkLine\\(.*kafka=\"([^\"]+)\"".r
      .findAllMatchIn(IO.read(file("python/sparkwin/_support.py")))
      .map(_.group(1))
      .toList
      .lastOption
      .getOrElse(sys.error("python/sparkwin/_support.py has no SparkLine row with kafka=\"...\""))

  // Kafka's poms bring log4j-core (2.24.3) but no slf4j binding, and the broker logs through
  // slf4j: bind it to log4j2, binding and core at one version. The test fixture configures it.
  val log4jVersion = "2.25.4"

  val Broker = config("kafkaBroker").hide
  val Connector = config("kafkaConnector").hide

  val kafkaClasspath =
    taskKey[Seq[File]]("Writes target/kafka/broker-classpath.txt and connector-jars.txt for the Kafka tests")

  /** The project (kafka.sbt names it). PySpark's jars are those `core` compiles against. */
  def project: Project =
    // Its directory holds only sbt's own files, so it lives under the (ignored) target/.
    Project("kafkaJars", file("target/kafka-jars"))
      .configs(Broker, Connector)
      .settings(
        // Nothing to compile or publish: only two dependency graphs, each resolved on its own
        // (the broker and the connector may want different kafka-clients).
        Compile / sources := Nil,
        Test / sources := Nil,
        publish / skip := true,
        autoScalaLibrary := false,
        crossPaths := false,
        // Each graph gets the Scala library its own poms ask for.
        scalaModuleInfo ~= (_.map(_.withOverrideScalaVersion(false))),
        libraryDependencies ++= Seq(
          "org.apache.kafka" % "kafka_2.13" % kafkaVersion % Broker,
          "org.apache.logging.log4j" % "log4j-slf4j2-impl" % log4jVersion % Broker,
          "org.apache.logging.log4j" % "log4j-core" % log4jVersion % Broker,
          // Hadoop's client (48 MB) is in PySpark's jars/: not worth fetching only to leave it out.
          ("org.apache.spark" % "spark-sql-kafka-0-10_2.13" % connectorVersion % Connector)
            .excludeAll(ExclusionRule(organization = "org.apache.hadoop"))
        ),
        kafkaClasspath := {
          val log = streams.value.log
          val report = update.value
          def jars(c: Configuration): Seq[(ModuleID, File)] =
            report
              .configuration(c)
              .toSeq
              .flatMap(_.modules)
              .filterNot(_.evicted)
              .flatMap(m =>
                m.artifacts.collect {
                  case (a, f) if a.`type` == "jar" || a.`type` == "bundle" => (m.module, f)
                }
              )
              .groupBy(_._2) // a module may list the same file twice
              .values
              .map(_.head)
              .toSeq
              .sortBy(_._2.getName)
          val broker = jars(Broker)
          // PySpark's jars are named `artifact-version.jar`.
          val spark = (LocalProject("core") / Compile / unmanagedJars).value.map(_.data.getName)
          def pysparkCopy(m: ModuleID): Option[String] =
            spark
              .find(n => n.startsWith(m.name + "-") && n.drop(m.name.length + 1).headOption.exists(_.isDigit))
          val (shared, connector) = jars(Connector).partition { case (m, _) => pysparkCopy(m).isDefined }
          if (broker.isEmpty || connector.isEmpty)
            sys.error("kafkaClasspath: the broker or connector resolved to no jars")
          val out = (ThisBuild / baseDirectory).value / "target" / "kafka"
          val brokerFile = out / "broker-classpath.txt"
          val connectorFile = out / "connector-jars.txt"
          IO.writeLines(brokerFile, broker.map(_._2.getAbsolutePath))
          IO.writeLines(connectorFile, connector.map(_._2.getAbsolutePath))
          val brokerMb = broker.map(_._2.length).sum / 1e6
          log.info(f"kafkaClasspath: broker: ${broker.size} jars, $brokerMb%.0f MB -> $brokerFile")
          val left = shared.map { case (m, _) => s"${m.name} ${m.revision} (PySpark: ${pysparkCopy(m).get})" }
          log.info(
            s"kafkaClasspath: connector: ${connector.map(_._2.getName).mkString(", ")} -> $connectorFile"
          )
          log.info(s"kafkaClasspath: connector dependencies PySpark's jars/ has: ${left.mkString(", ")}")
          Seq(brokerFile, connectorFile)
        }
      )
}
