package sparkwin.runtime.spark.task

/** What each of a key group's stored entries is, told by its key alone (DESIGN.md, "State
  * variables"): the group's record under the empty key, the watermark its last call ended at
  * under the one byte `0` (chained pipelines, and processing-time timers on Spark's watermark),
  * a bucket of keys under five bytes, a page of wake-ups under fourteen, and otherwise one key's
  * state under the key's own bytes (a group written before keys lay in buckets, or Spark 3.5's).
  * Readers of a checkpoint ask it; the loop writes the same keys.
  */
object GroupEntries {
  sealed abstract class Entry
  case object Record extends Entry
  case object PreviousWatermark extends Entry
  final case class Bucket(index: Int) extends Entry
  case object WakeupPage extends Entry
  case object KeyState extends Entry

  def of(key: Array[Byte]): Entry =
    if (key.length == 0) Record
    else if (key.length == 1 && key(0) == 0) PreviousWatermark
    else if (KeyBuckets.indexOf(key) >= 0) Bucket(KeyBuckets.indexOf(key))
    else if (WakeupIndex.isPage(key)) WakeupPage
    else KeyState

  /** Every key of the group with its state bytes: those of its buckets and those stored alone. */
  def keyStates(entries: Seq[(Array[Byte], Array[Byte])]): Iterator[(Array[Byte], Array[Byte])] =
    entries.iterator.flatMap { case (k, v) =>
      of(k) match {
        case Bucket(i) => KeyBuckets.keysOf(v, i)
        case KeyState => Iterator.single((k, v))
        case _ => Iterator.empty
      }
    }
}
