package sparkwin.runtime.spark.task

import sparkwin.plan._

import scala.collection.mutable

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

import sparkwin.core.CorruptStateException

/** A pipeline key as the bytes of Spark's `UnsafeRow` for it: how a key names its engine state
  * in the state store and its entry in a key group's wake-up table.
  *
  * These are the bytes Spark's own row encoder would store, so equal keys give equal bytes,
  * but the encoders are built once per thread and schema. A state variable with a `Row` key or
  * value gets its encoders generated again in every task, and for sparkwin's two variables that
  * was about a fifth of the stateful stage's time (DESIGN.md, "State variables"); with bytes
  * on both sides of every variable, Spark's per-task encoders are trivial.
  *
  * Like Spark's serializers, an instance is for the thread that made it (a task's processor).
  */
final class KeyBytes(schema: StructType) {
  private val codec = KeyBytes.codec(schema)

  def encode(key: Row): Array[Byte] = {
    // The serializer reuses its row buffer: copy before the next key overwrites it.
    val row = codec.serialize(key).asInstanceOf[UnsafeRow]
    val out = new Array[Byte](row.getSizeInBytes)
    row.writeToMemory(out, org.apache.spark.unsafe.Platform.BYTE_ARRAY_OFFSET)
    out
  }

  /** The key of bytes a group's state holds (its wake-up table, its buckets). Spark reads an
    * `UnsafeRow` through raw memory access, and a damaged offset or length there reads outside
    * the array (a crash of the JVM, not an exception), so the layout is checked first
    * ([[KeyBytes.check]]); bytes that do not hold it are a [[CorruptStateException]].
    */
  def decode(bytes: Array[Byte]): Row = {
    var at = 0
    CorruptStateException.reading("a key (Spark's UnsafeRow of its columns)", bytes.length, () => at) {
      KeyBytes.check(bytes, 0, bytes.length, schema, p => at = p)
      val row = new UnsafeRow(schema.size)
      row.pointTo(bytes, bytes.length)
      codec.deserialize(row)
    }
  }
}

object KeyBytes {

  /** Refuses (a `CorruptStateException.Refused`) bytes `[base, base + size)` of `bytes` unless they
    * hold an `UnsafeRow` of `schema` whose every offset and length stays inside them, at every
    * depth: the null bits and a word a field, then each variable-length field where its word
    * says. `at` hears where the check is.
    */
  private[spark] def check(
      bytes: Array[Byte],
      base: Int,
      size: Int,
      schema: StructType,
      at: Int => Unit
  ): Unit = {
    val n = schema.size
    val fixedEnd = bitsWidth(n) + 8L * n
    if (size < fixedEnd || size % 8 != 0)
      refuse(s"a row of ${schema.size} columns takes at least $fixedEnd bytes, in words; found $size")
    var i = 0
    while (i < n) {
      val t = schema.fields(i).dataType
      at(base + bitsWidth(n) + 8 * i)
      if (!isNull(bytes, base, i) && !UnsafeRow.isFixedLength(t)) {
        val (offset, length) = offsetAndSize(word(bytes, base + bitsWidth(n) + 8 * i))
        if (offset < fixedEnd || length < 0 || offset.toLong + length > size)
          refuse(
            s"column ${schema.fields(i).name}'s value at $offset, $length bytes, outside the row's $size"
          )
        value(bytes, base + offset, length, t, at)
      }
      i += 1
    }
  }

  private def value(bytes: Array[Byte], base: Int, size: Int, t: DataType, at: Int => Unit): Unit = {
    at(base)
    t match {
      case s: StructType => check(bytes, base, size, s, at)
      case a: ArrayType => array(bytes, base, size, a.elementType, at)
      case m: MapType =>
        if (size < 8) refuse(s"a map takes 8 bytes at least, found $size")
        val keys = word(bytes, base)
        if (keys < 0 || keys > size - 8) refuse(s"a map's keys take $keys bytes of its ${size - 8}")
        val k = array(bytes, base + 8, keys.toInt, m.keyType, at)
        val v = array(bytes, base + 8 + keys.toInt, size - 8 - keys.toInt, m.valueType, at)
        if (k != v) refuse(s"a map of $k keys and $v values")
      case _: DecimalType => if (size > 16) refuse(s"a decimal of $size bytes, more than 16")
      case CalendarIntervalType => if (size != 16) refuse(s"a calendar interval of $size bytes, not 16")
      case _ => // bytes as they are (strings, binary)
    }
  }

  /** Checks an `UnsafeArrayData` of `size` bytes at `base`; its number of elements. */
  private def array(bytes: Array[Byte], base: Int, size: Int, element: DataType, at: Int => Unit): Long = {
    at(base)
    if (size < 8) refuse(s"an array takes 8 bytes at least, found $size")
    val n = word(bytes, base)
    val fixed = UnsafeRow.isFixedLength(element)
    val width = if (fixed) element.defaultSize.toLong else 8L
    // An element takes a byte at least: a count past the bytes is refused before any product.
    if (n < 0 || n > size || 8L + bitsWidth(n) + n * width > size)
      refuse(s"an array of $n elements of $width bytes in $size bytes")
    if (!fixed) {
      val dataStart = 8 + bitsWidth(n) + roundToWord(n * 8)
      var i = 0
      while (i < n) {
        if (!isNull(bytes, base + 8, i)) {
          val (offset, length) = offsetAndSize(word(bytes, (base + 8 + bitsWidth(n) + 8 * i).toInt))
          if (offset < dataStart || length < 0 || offset.toLong + length > size)
            refuse(s"an array's element $i at $offset, $length bytes, outside the array's $size")
          value(bytes, base + offset, length, element, at)
        }
        i += 1
      }
    }
    n
  }

  private def bitsWidth(n: Long): Int = (((n + 63) / 64) * 8).toInt
  private def roundToWord(n: Long): Long = (n + 7) / 8 * 8
  private def offsetAndSize(w: Long): (Int, Int) = ((w >>> 32).toInt, w.toInt)
  private def word(bytes: Array[Byte], at: Int): Long =
    Platform.getLong(bytes, Platform.BYTE_ARRAY_OFFSET.toLong + at)
  private def isNull(bytes: Array[Byte], base: Int, i: Int): Boolean =
    (word(bytes, base + (i / 64) * 8) & (1L << (i % 64))) != 0
  private def refuse(problem: String): Nothing = throw new CorruptStateException.Refused(problem)

  private final class Codec(encoder: ExpressionEncoder[Row]) {
    val serialize: ExpressionEncoder.Serializer[Row] = encoder.createSerializer()
    val deserialize: ExpressionEncoder.Deserializer[Row] = encoder.createDeserializer()
  }

  // Per thread, because Spark's serializers reuse buffers; keyed by the java.time setting too,
  // which decides whether timestamps and dates come back as java.time or java.sql objects. It
  // writes either (a key without a session form keeps its java.time one: SessionForms), and the
  // same value gives the same bytes.
  private val codecs =
    ThreadLocal.withInitial[mutable.HashMap[(StructType, Boolean), Codec]](() => mutable.HashMap.empty)

  private def codec(schema: StructType): Codec =
    codecs
      .get()
      .getOrElseUpdate(
        (schema, SQLConf.get.datetimeJava8ApiEnabled),
        new Codec(ExpressionEncoder(RowEncoder.encoderFor(schema, true)).resolveAndBind())
      )
}
