package sparkwin.runtime.spark.task

import java.io.{FileWriter, PrintWriter}
import java.time.Instant

/** Timestamps along a pane's path in real-time mode, for `benchmarks/latency.py --trace-panes`:
  * when the map side saw a row move its channel into a new tenth of a second of event time (`tap`), when it sent a summary
  * (`summary`), when a key group's call took one (`call`), and when such a call with output ended
  * (`done`: its rows and microseconds). Off unless the JVM runs with
  * `-Dsparkwin.trace=<file>`; then each point is a line `point epochMicros fields...` appended to
  * that file (one JVM: local mode). Off, a point costs one read of a final field.
  */
object PaneTrace {
  private val path: String = System.getProperty("sparkwin.trace")
  val on: Boolean = path != null && path.nonEmpty
  private lazy val out: PrintWriter = new PrintWriter(new FileWriter(path, true), true)

  private def micros(): Long = {
    val now = Instant.now()
    now.getEpochSecond * 1000000L + now.getNano / 1000
  }

  def mark(point: String, fields: String): Unit = if (on) {
    val line = s"$point ${micros()} $fields"
    out.synchronized(out.println(line))
  }
}
