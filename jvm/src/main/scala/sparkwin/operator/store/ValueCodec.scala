package sparkwin.operator.store

import sparkwin.core._

import java.io.{DataInputStream, DataOutputStream}

import sparkwin.core.CorruptStateException.count
import sparkwin.core.agg.{Accumulator, Aggregate}
import sparkwin.core.{ArrayRecord, Record}
import sparkwin.core.window.{GlobalWindow, TimeWindow, Window}

/** A tagged binary encoding of the values that live in engine state: primitives, strings,
  * decimals, timestamps, dates, intervals, times of day, byte arrays, sequences, records and
  * windows.
  *
  * Tags are part of the checkpoint format; never renumber them. A reader takes no length or count
  * from the bytes that the bytes left cannot back (`CorruptStateException.count`): a corrupt
  * value is refused, it never allocates more than its own length.
  */
object ValueCodec {
  private final val Null = 0
  private final val True = 1
  private final val False = 2
  private final val Int = 3
  private final val Long = 4
  private final val Double = 5
  private final val Float = 6
  private final val Str = 7
  private final val Decimal = 8
  private final val Timestamp = 9
  private final val Instant = 10
  private final val Bytes = 11
  private final val SeqTag = 12
  private final val RecordTag = 13
  private final val Short = 14
  private final val Byte = 15
  private final val LocalDate = 16
  private final val SqlDate = 17
  private final val TimeWin = 18
  private final val GlobalWin = 19
  private final val MapTag = 20
  private final val LocalDateTime = 21
  private final val Duration = 22 // Spark's day-time intervals
  private final val Period = 23 // Spark's year-month intervals
  private final val LocalTime = 24 // Spark's times of day

  /** How deep sequences, records and maps may nest in one value: a corrupt value of nested
    * sequences five bytes a level would otherwise read into a `StackOverflowError`.
    */
  final val MaxDepth = 64

  def write(out: DataOutputStream, v: Any): Unit = write(out, v, 0)

  private def write(out: DataOutputStream, v: Any, depth: Int): Unit = v match {
    case null => out.writeByte(Null)
    case b: Boolean => out.writeByte(if (b) True else False)
    case i: Int => out.writeByte(Int); out.writeInt(i)
    case l: Long => out.writeByte(Long); out.writeLong(l)
    // By their raw bits, as Spark's rows keep them: writeDouble would make every NaN one NaN.
    case d: Double => out.writeByte(Double); out.writeLong(java.lang.Double.doubleToRawLongBits(d))
    case f: Float => out.writeByte(Float); out.writeInt(java.lang.Float.floatToRawIntBits(f))
    case s: Short => out.writeByte(Short); out.writeShort(s)
    case b: Byte => out.writeByte(Byte); out.writeByte(b)
    case s: String => out.writeByte(Str); writeString(out, s)
    case d: java.math.BigDecimal => out.writeByte(Decimal); writeString(out, d.toString)
    case d: scala.math.BigDecimal => out.writeByte(Decimal); writeString(out, d.bigDecimal.toString)
    case t: java.sql.Timestamp =>
      out.writeByte(Timestamp); out.writeLong(t.getTime); out.writeInt(t.getNanos)
    case i: java.time.Instant =>
      out.writeByte(Instant); out.writeLong(i.getEpochSecond); out.writeInt(i.getNano)
    case d: java.time.LocalDate => out.writeByte(LocalDate); out.writeLong(d.toEpochDay)
    case d: java.sql.Date => out.writeByte(SqlDate); out.writeLong(d.getTime)
    case d: java.time.LocalDateTime => out.writeByte(LocalDateTime); writeString(out, d.toString)
    case d: java.time.Duration =>
      out.writeByte(Duration); out.writeLong(d.getSeconds); out.writeInt(d.getNano)
    case p: java.time.Period =>
      out.writeByte(Period); out.writeInt(p.getYears); out.writeInt(p.getMonths); out.writeInt(p.getDays)
    case t: java.time.LocalTime => out.writeByte(LocalTime); out.writeLong(t.toNanoOfDay)
    case b: Array[Byte] => out.writeByte(Bytes); out.writeInt(b.length); out.write(b)
    case w: TimeWindow => out.writeByte(TimeWin); out.writeLong(w.start); out.writeLong(w.end)
    case GlobalWindow => out.writeByte(GlobalWin)
    case r: Record => out.writeByte(RecordTag); writeSeq(out, r.toArray, nested(depth))
    case m: scala.collection.Map[_, _] =>
      out.writeByte(MapTag); out.writeInt(m.size)
      val d = nested(depth)
      m.foreach { case (k, x) => write(out, k, d); write(out, x, d) }
    case m: java.util.Map[_, _] =>
      out.writeByte(MapTag); out.writeInt(m.size)
      val d = nested(depth)
      m.forEach((k, x) => { write(out, k, d); write(out, x, d) })
    case a: Array[_] => out.writeByte(SeqTag); writeSeq(out, a.asInstanceOf[Array[Any]], nested(depth))
    case s: scala.collection.Seq[_] => out.writeByte(SeqTag); writeSeq(out, s.toArray[Any], nested(depth))
    case l: java.util.List[_] =>
      out.writeByte(SeqTag); writeSeq(out, l.toArray.asInstanceOf[Array[Any]], nested(depth))
    case other =>
      throw new IllegalArgumentException(
        s"sparkwin cannot store a value of type ${other.getClass.getName} in window state"
      )
  }

  private def nested(depth: Int): Int =
    if (depth < MaxDepth) depth + 1
    else
      throw new IllegalArgumentException(
        s"sparkwin cannot store a value nested more than $MaxDepth sequences, records or maps deep"
      )

  def read(in: DataInputStream): Any = read(in, 0)

  private def read(in: DataInputStream, depth: Int): Any = in.readByte() match {
    case Null => null
    case True => true
    case False => false
    case Int => in.readInt()
    case Long => in.readLong()
    case Double => in.readDouble()
    case Float => in.readFloat()
    case Short => in.readShort()
    case Byte => in.readByte()
    case Str => readString(in)
    case Decimal => new java.math.BigDecimal(readString(in))
    case Timestamp =>
      val t = new java.sql.Timestamp(in.readLong()); t.setNanos(in.readInt()); t
    case Instant => java.time.Instant.ofEpochSecond(in.readLong(), in.readInt().toLong)
    case LocalDate => java.time.LocalDate.ofEpochDay(in.readLong())
    case SqlDate => new java.sql.Date(in.readLong())
    case LocalDateTime => java.time.LocalDateTime.parse(readString(in))
    case Duration => java.time.Duration.ofSeconds(in.readLong(), in.readInt().toLong)
    case Period => java.time.Period.of(in.readInt(), in.readInt(), in.readInt())
    case LocalTime => java.time.LocalTime.ofNanoOfDay(in.readLong())
    case Bytes => val b = new Array[Byte](count(in, 1, "a byte array's bytes")); in.readFully(b); b
    case TimeWin => TimeWindow(in.readLong(), in.readLong())
    case GlobalWin => GlobalWindow
    case RecordTag => new ArrayRecord(readSeq(in, inside(depth)))
    case MapTag =>
      val n = count(in, 2, "a map's entries") // a key and a value, a tag each at least
      val d = inside(depth)
      val m = scala.collection.immutable.ListMap.newBuilder[Any, Any]
      var i = 0
      while (i < n) { m += (read(in, d) -> read(in, d)); i += 1 }
      m.result()
    case SeqTag => readSeq(in, inside(depth)).toSeq
    case t =>
      throw new CorruptStateException.Refused(s"expected a value's tag (0 to $LocalTime), found $t")
  }

  private def inside(depth: Int): Int =
    if (depth < MaxDepth) depth + 1
    else
      throw new CorruptStateException.Refused(s"expected values nested at most $MaxDepth deep, found deeper")

  def writeSeq(out: DataOutputStream, a: Array[Any]): Unit = writeSeq(out, a, 0)

  private def writeSeq(out: DataOutputStream, a: Array[Any], depth: Int): Unit = {
    out.writeInt(a.length)
    var i = 0
    while (i < a.length) { write(out, a(i), depth); i += 1 }
  }

  def readSeq(in: DataInputStream): Array[Any] = readSeq(in, 0)

  private def readSeq(in: DataInputStream, depth: Int): Array[Any] = {
    val a = new Array[Any](count(in, 1, "a sequence's elements")) // a tag an element at least
    var i = 0
    while (i < a.length) { a(i) = read(in, depth); i += 1 }
    a
  }

  /** Accumulators as their saved fields, one sequence each (in checkpoints and partial rows). */
  def writeAccumulators(out: DataOutputStream, accs: Array[Accumulator]): Unit = {
    var i = 0
    while (i < accs.length) { writeSeq(out, accs(i).save); i += 1 }
  }

  /** New accumulators of `aggregates` restored from what [[writeAccumulators]] wrote. */
  def readAccumulators(in: DataInputStream, aggregates: Array[Aggregate]): Array[Accumulator] = {
    val accs = Accumulator.fresh(aggregates)
    var i = 0
    while (i < accs.length) { accs(i).restore(readSeq(in)); i += 1 }
    accs
  }

  def writeWindow(out: DataOutputStream, w: Window): Unit = write(out, w)

  def readWindow(in: DataInputStream): Window = read(in) match {
    case w: Window => w
    case other => throw new CorruptStateException.Refused(s"expected a window, found ${describe(other)}")
  }

  private def describe(v: Any): String = if (v == null) "null" else v.getClass.getSimpleName

  // Strings longer than writeUTF's 64 KiB limit are common in collected values.
  private def writeString(out: DataOutputStream, s: String): Unit = {
    val b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8)
    out.writeInt(b.length); out.write(b)
  }

  private def readString(in: DataInputStream): String = {
    val b = new Array[Byte](count(in, 1, "a string's bytes")); in.readFully(b)
    new String(b, java.nio.charset.StandardCharsets.UTF_8)
  }
}
