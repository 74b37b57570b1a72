package sparkwin.operator.store

import sparkwin.core._
import sparkwin.operator._

import java.io.{DataInputStream, DataOutputStream}

import sparkwin.core.agg.{Accumulator, Aggregate}
import sparkwin.core.{ArrayRecord, Record}
import sparkwin.core.window.{GlobalWindow, TimeWindow, Window}

/** A tagged binary encoding of the values that live in engine state: primitives, strings,
  * decimals, timestamps, dates, byte arrays, sequences, records and windows.
  *
  * Tags are part of the checkpoint format; never renumber them.
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

  def write(out: DataOutputStream, v: Any): Unit = v match {
    case null => out.writeByte(Null)
    case b: Boolean => out.writeByte(if (b) True else False)
    case i: Int => out.writeByte(Int); out.writeInt(i)
    case l: Long => out.writeByte(Long); out.writeLong(l)
    case d: Double => out.writeByte(Double); out.writeDouble(d)
    case f: Float => out.writeByte(Float); out.writeFloat(f)
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
    case b: Array[Byte] => out.writeByte(Bytes); out.writeInt(b.length); out.write(b)
    case w: TimeWindow => out.writeByte(TimeWin); out.writeLong(w.start); out.writeLong(w.end)
    case GlobalWindow => out.writeByte(GlobalWin)
    case r: Record => out.writeByte(RecordTag); writeSeq(out, r.toArray)
    case m: scala.collection.Map[_, _] =>
      out.writeByte(MapTag); out.writeInt(m.size)
      m.foreach { case (k, x) => write(out, k); write(out, x) }
    case m: java.util.Map[_, _] =>
      out.writeByte(MapTag); out.writeInt(m.size)
      m.forEach((k, x) => { write(out, k); write(out, x) })
    case a: Array[_] => out.writeByte(SeqTag); writeSeq(out, a.asInstanceOf[Array[Any]])
    case s: scala.collection.Seq[_] => out.writeByte(SeqTag); writeSeq(out, s.toArray[Any])
    case l: java.util.List[_] => out.writeByte(SeqTag); writeSeq(out, l.toArray.asInstanceOf[Array[Any]])
    case other =>
      throw new IllegalArgumentException(
        s"sparkwin cannot store a value of type ${other.getClass.getName} in window state"
      )
  }

  def read(in: DataInputStream): Any = in.readByte() match {
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
    case Bytes => val b = new Array[Byte](in.readInt()); in.readFully(b); b
    case TimeWin => TimeWindow(in.readLong(), in.readLong())
    case GlobalWin => GlobalWindow
    case RecordTag => new ArrayRecord(readSeq(in))
    case MapTag =>
      val n = in.readInt()
      val m = scala.collection.immutable.ListMap.newBuilder[Any, Any]
      var i = 0
      while (i < n) { m += (read(in) -> read(in)); i += 1 }
      m.result()
    case SeqTag => readSeq(in).toSeq
    case t => throw new IllegalStateException(s"corrupt sparkwin state: unknown tag $t")
  }

  def writeSeq(out: DataOutputStream, a: Array[Any]): Unit = {
    out.writeInt(a.length)
    var i = 0
    while (i < a.length) { write(out, a(i)); i += 1 }
  }

  def readSeq(in: DataInputStream): Array[Any] = {
    val a = new Array[Any](in.readInt())
    var i = 0
    while (i < a.length) { a(i) = read(in); i += 1 }
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

  def readWindow(in: DataInputStream): Window = read(in).asInstanceOf[Window]

  // Strings longer than writeUTF's 64 KiB limit are common in collected values.
  private def writeString(out: DataOutputStream, s: String): Unit = {
    val b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8)
    out.writeInt(b.length); out.write(b)
  }

  private def readString(in: DataInputStream): String = {
    val b = new Array[Byte](in.readInt()); in.readFully(b)
    new String(b, java.nio.charset.StandardCharsets.UTF_8)
  }
}
