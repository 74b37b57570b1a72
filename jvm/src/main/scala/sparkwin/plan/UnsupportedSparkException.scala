package sparkwin.plan

/** A pipeline this Spark line cannot run; the message names the lines that can (Python's
  * `UnsupportedSparkError`).
  */
final class UnsupportedSparkException(message: String) extends UnsupportedOperationException(message)
