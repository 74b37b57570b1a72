package sparkwin.operator.store

import sparkwin.core._

/** A growable byte buffer to write state into, reused from one value to the next.
  *
  * The JDK's `ByteArrayOutputStream` locks on every call, and `DataOutputStream` writes an int
  * or a flag as single bytes: on a key's state, written once per key and micro-batch, the locks
  * cost more than the encoding.
  */
final class ByteSink(initialCapacity: Int) extends java.io.OutputStream {
  private var buf = new Array[Byte](initialCapacity.max(16))
  private var size = 0

  override def write(b: Int): Unit = {
    if (size == buf.length) grow(size + 1)
    buf(size) = b.toByte
    size += 1
  }

  override def write(b: Array[Byte], off: Int, len: Int): Unit = {
    if (size + len > buf.length) grow(size + len)
    System.arraycopy(b, off, buf, size, len)
    size += len
  }

  /** Forgets what was written; the buffer stays. */
  def reset(): Unit = size = 0

  /** A copy of what was written since the last reset. */
  def toByteArray: Array[Byte] = java.util.Arrays.copyOf(buf, size)

  private def grow(needed: Int): Unit =
    buf = java.util.Arrays.copyOf(buf, needed.max(buf.length * 2))
}

/** A byte array to read state from, pointed at the next array instead of built per value. It
  * does not lock, unlike `ByteArrayInputStream` (see [[ByteSink]]).
  */
final class ByteSource extends java.io.InputStream {
  private var buf = Array.emptyByteArray
  private var pos = 0

  /** Reads `bytes` from its start on. */
  def point(bytes: Array[Byte]): Unit = { buf = bytes; pos = 0 }

  override def read(): Int =
    if (pos < buf.length) { val b = buf(pos) & 0xff; pos += 1; b }
    else -1

  override def read(b: Array[Byte], off: Int, len: Int): Int =
    if (len == 0) 0
    else if (pos >= buf.length) -1
    else {
      val n = len.min(buf.length - pos)
      System.arraycopy(buf, pos, b, off, n)
      pos += n
      n
    }

  override def skip(n: Long): Long = {
    val skipped = n.max(0L).min((buf.length - pos).toLong).toInt
    pos += skipped
    skipped
  }

  override def available(): Int = buf.length - pos

  /** The next byte's offset from the array's start. */
  def position: Int = pos

  /** The array's length. */
  def size: Int = buf.length
}

/** Longs in byte arrays, big-endian as `DataOutputStream` writes them, without a stream: a
  * partial of packed slots is read a long at a time, where a `DataInputStream` copied each
  * long's bytes through its stream first.
  */
object Bytes {
  def putLong(bytes: Array[Byte], at: Int, v: Long): Unit = {
    var i = 0
    while (i < 8) { bytes(at + i) = (v >>> (56 - 8 * i)).toByte; i += 1 }
  }

  def getLong(bytes: Array[Byte], at: Int): Long = {
    var v = 0L
    var i = 0
    while (i < 8) { v = (v << 8) | (bytes(at + i) & 0xffL); i += 1 }
    v
  }
}
