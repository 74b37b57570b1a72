package sparkwin.operator.store

import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._

import java.io.{DataInputStream, DataOutputStream, EOFException}

import scala.util.Random

/** The reusable byte streams read back what they were given, value after value. */
class BytesSuite extends munit.FunSuite {
  test("a sink reused across values and grown past its capacity reads back through a source") {
    val sink = new ByteSink(4)
    val out = new DataOutputStream(sink)
    val source = new ByteSource
    val in = new DataInputStream(source)
    val rnd = new Random(3)
    for (round <- 0 until 50) {
      val longs = Array.fill(rnd.nextInt(40))(rnd.nextLong())
      val blob = Array.fill(rnd.nextInt(300))(rnd.nextInt(256).toByte)
      sink.reset()
      out.writeInt(longs.length)
      longs.foreach(out.writeLong)
      out.writeBoolean(round % 2 == 0)
      out.writeInt(blob.length)
      out.write(blob)
      out.flush()
      val bytes = sink.toByteArray
      assertEquals(bytes.length, 4 + 8 * longs.length + 1 + 4 + blob.length, s"round $round")

      source.point(bytes)
      assertEquals(source.available(), bytes.length)
      assertEquals(in.readInt(), longs.length)
      assertEquals(Seq.fill(longs.length)(in.readLong()), longs.toSeq)
      assertEquals(in.readBoolean(), round % 2 == 0)
      val back = new Array[Byte](in.readInt())
      in.readFully(back)
      assertEquals(back.toSeq, blob.toSeq)
      assertEquals(source.read(), -1)
      assertEquals(source.read(new Array[Byte](3), 0, 3), -1)
      intercept[EOFException](in.readByte())
    }
  }

  test("a source skips no further than its end") {
    val source = new ByteSource
    source.point(Array[Byte](1, 2, 3, 4, 5))
    assertEquals(source.skip(2), 2L)
    assertEquals(source.read(), 3)
    assertEquals(source.skip(10), 2L)
    assertEquals(source.skip(-1), 0L)
    assertEquals(source.available(), 0)
    assertEquals(source.read(new Array[Byte](0), 0, 0), 0)
  }

  test("longs put into and got from a byte array are DataOutputStream's big-endian bytes") {
    val rnd = new Random(5)
    val values = Seq(0L, 1L, -1L, Long.MinValue, Long.MaxValue, 0x0102030405060708L) ++
      Seq.fill(200)(rnd.nextLong())
    val sink = new ByteSink(8)
    val out = new DataOutputStream(sink)
    values.foreach(out.writeLong)
    out.flush()
    val streamed = sink.toByteArray
    val direct = new Array[Byte](values.size * 8 + 3)
    values.zipWithIndex.foreach { case (v, i) => Bytes.putLong(direct, 3 + i * 8, v) }
    assertEquals(direct.drop(3).toSeq, streamed.toSeq)
    assertEquals(values.indices.map(i => Bytes.getLong(streamed, i * 8)), values.toIndexedSeq)
  }
}
