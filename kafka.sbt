// Test-only jars for the Kafka tests (a broker, Spark's connector): not aggregated, never shipped,
// not in the sdist. `kafkaJars/kafkaClasspath` lists them in target/kafka/ for tests/kafka_broker.py:
// see project/KafkaTestJars.scala.
lazy val kafkaJars = KafkaTestJars.project
