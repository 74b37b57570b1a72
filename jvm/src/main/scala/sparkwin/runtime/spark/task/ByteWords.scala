package sparkwin.runtime.spark.task

import org.apache.spark.unsafe.Platform

/** Several bytes of an array read as one number, in a stated byte order whatever the machine's:
  * key compares and key hashes read words, not bytes. The reads are unchecked: a caller checks
  * its range against the array once, before its loop.
  */
private[spark] object ByteWords {
  private val LittleEndian = java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN

  /** The eight bytes at `at` as a big-endian long: its unsigned order is theirs. */
  def bigEndianLong(bytes: Array[Byte], at: Int): Long = {
    val x = Platform.getLong(bytes, Platform.BYTE_ARRAY_OFFSET + at)
    if (LittleEndian) java.lang.Long.reverseBytes(x) else x
  }

  /** The four bytes at `at` as a little-endian int. */
  def littleEndianInt(bytes: Array[Byte], at: Int): Int = {
    val x = Platform.getInt(bytes, Platform.BYTE_ARRAY_OFFSET + at)
    if (LittleEndian) x else Integer.reverseBytes(x)
  }
}
