package sparkwin.runtime.spark.task

import sparkwin.plan._

import scala.collection.mutable

import org.apache.spark.sql.{Encoders, Row}
import org.apache.spark.sql.catalyst.encoders.{encoderFor, ExpressionEncoder}
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

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

  def decode(bytes: Array[Byte]): Row = {
    val row = new UnsafeRow(schema.size)
    row.pointTo(bytes, bytes.length)
    codec.deserialize(row)
  }
}

object KeyBytes {
  private final class Codec(encoder: ExpressionEncoder[Row]) {
    val serialize: ExpressionEncoder.Serializer[Row] = encoder.createSerializer()
    val deserialize: ExpressionEncoder.Deserializer[Row] = encoder.createDeserializer()
  }

  // Per thread, because Spark's serializers reuse buffers; keyed by the java.time setting too,
  // which decides whether timestamps and dates come back as java.time or java.sql objects.
  private val codecs =
    ThreadLocal.withInitial[mutable.HashMap[(StructType, Boolean), Codec]](() => mutable.HashMap.empty)

  private def codec(schema: StructType): Codec =
    codecs
      .get()
      .getOrElseUpdate(
        (schema, SQLConf.get.datetimeJava8ApiEnabled),
        new Codec(encoderFor(Encoders.row(schema)).resolveAndBind())
      )
}
