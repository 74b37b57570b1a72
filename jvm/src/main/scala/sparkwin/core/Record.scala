package sparkwin.core

/** An input row as the engine sees it: positional fields, no Spark types.
  *
  * Runtimes wrap their own rows (an array for the local runtime, a Spark Row on Spark), so
  * the engine never copies a row it only aggregates. It is the row extensions see
  * (`sparkwin.api.Input`), so they get it without a copy either.
  */
trait Record extends sparkwin.api.Input {
  def length: Int
  // AnyRef, as the Java interface it implements says (Scala 2.12 holds overrides to it).
  def get(i: Int): AnyRef
  def isNullAt(i: Int): Boolean = get(i) == null

  /** The field as a value state may keep: a runtime's nested rows (a struct's, an array's of
    * structs) become records, which state stores. What aggregates keep goes through here.
    */
  def stored(i: Int): Any = get(i)

  /** A numeric or time field as a long (timestamps as epoch milliseconds). */
  def getLong(i: Int): Long = Values.toLong(get(i))

  /** A numeric field as a double. */
  def getDouble(i: Int): Double = Values.toDouble(get(i))

  /** The fields as an array the caller may keep. */
  def toArray: Array[Any] = Array.tabulate(length)(get)

  /** A value of this record that the runtime could not give the engine in the form it gives
    * every other (null: none), so the record goes to the errors output as it came.
    */
  def unheld: UnheldValue = null
}

/** A value Spark holds that has no form in the session's types (`java.sql.Timestamp` cannot hold
  * `timestamp_micros(Long.MinValue)`): the top-level column it is in, the value as words
  * (`the timestamp -290308-12-21T19:59:05.224192Z`), and the form it lacks.
  */
final case class UnheldValue(column: String, value: String, form: String)

/** The local runtime's record: an array of field values. */
final class ArrayRecord(val values: Array[Any]) extends Record {
  def length: Int = values.length
  def get(i: Int): AnyRef = values(i).asInstanceOf[AnyRef]
  override def toArray: Array[Any] = values
  override def toString: String = values.mkString("ArrayRecord(", ", ", ")")
  override def equals(o: Any): Boolean = o match {
    case r: ArrayRecord => java.util.Arrays.deepEquals(toRefs(values), toRefs(r.values))
    case _ => false
  }
  override def hashCode: Int = java.util.Arrays.deepHashCode(toRefs(values))
  private def toRefs(a: Array[Any]): Array[AnyRef] = a.map(_.asInstanceOf[AnyRef])
}

/** A record the engine cannot process (for example a non-positive dynamic session gap).
  * Runtimes route it to the error side output instead of failing.
  */
final class RecordError(message: String) extends IllegalArgumentException(message)

/** The event times the engine takes: Spark's timestamp range, 0001-01-01 to 9999-12-31 (UTC).
  * Windows, cleanup times and lateness of any duration the API accepts stay far inside a long
  * from there, so no arithmetic on a window can overflow; a record outside goes to the error
  * output instead of failing a task (which, on a stream, would fail every restart).
  */
object EventTime {
  val Min: Long = -62135596800000L // 0001-01-01T00:00:00Z
  val Max: Long = 253402300799999L // 9999-12-31T23:59:59.999Z
  /** The longest span (a size, slide, gap or lateness) that keeps every window inside a long. */
  val MaxSpan: Long = (Long.MaxValue - Max) / 4

  @inline def inRange(ts: Long): Boolean = ts >= Min && ts <= Max

  def outOfRange(ts: Long): String =
    s"the event time $ts ms is outside 0001-01-01..9999-12-31 (Spark's timestamp range), where " +
      "sparkwin's windows are defined"
}

/** A stored element of a window: its timestamp and its record. */
final case class Element(timestamp: Long, record: Record) extends sparkwin.api.Element

/** Conversions between the value kinds that reach the engine. */
object Values {
  def toLong(v: Any): Long = v match {
    case n: java.lang.Number => n.longValue
    case t: java.sql.Timestamp => t.getTime
    case i: java.time.Instant => i.toEpochMilli
    case null => throw new IllegalArgumentException("null where a number was needed")
    case other =>
      throw new IllegalArgumentException(s"not a number or timestamp: $other (${other.getClass})")
  }

  def toDouble(v: Any): Double = v match {
    case n: java.lang.Number => n.doubleValue
    case null => throw new IllegalArgumentException("null where a number was needed")
    case other => throw new IllegalArgumentException(s"not a number: $other (${other.getClass})")
  }

  /** Epoch milliseconds of a timestamp field, whatever its representation. */
  def toMillis(v: Any): Long = v match {
    case t: java.sql.Timestamp => t.getTime
    case i: java.time.Instant => i.toEpochMilli
    case n: java.lang.Number => n.longValue
    case null => throw new IllegalArgumentException("null timestamp")
    case other => throw new IllegalArgumentException(s"not a timestamp: $other (${other.getClass})")
  }
}
