package sparkwin.spark

import sparkwin.BuildInfo

/** The one object Python reaches through Py4J (`jvm.sparkwin.spark.PythonEntryPoint`).
  *
  * Every method takes and returns Py4J-friendly values (strings, longs, Java collections,
  * Java Datasets), so the Python side stays a thin wrapper.
  */
object PythonEntryPoint {

  /** The jar's version; Python refuses to run against a jar of another version. */
  def version(): String = BuildInfo.version

  /** The Spark version the jar was compiled against. */
  def sparkVersion(): String = BuildInfo.sparkVersion
}
