package sparkwin.runtime.spark

import sparkwin.operator.store.KeyStateCodec

/** Keys' states as the engine last left them in this task, each with the bytes it was saved as.
  * In real-time mode every row is its own call, and decoding the row's key state (its slices and
  * timer queue) was a fifth of the stateful task's samples at 100k rows a second. A state is
  * used again only for the same bytes: loading a key hands its entry over (a call that fails
  * leaves none behind), and the bytes the store gives are compared with those it was saved as,
  * so a state written elsewhere (a replayed batch, a group set back) is decoded as before.
  *
  * At most `capacity` keys are kept; past it every entry is forgotten (a task with more keys
  * decodes as before).
  */
final class DecodedStates(capacity: Int) {
  private val byKey = new java.util.HashMap[Any, DecodedStates.Entry]()

  /** The state kept for `key` if it was saved as exactly `bytes`, else null; either way the
    * key's entry is gone until [[keep]].
    */
  def take(key: Any, bytes: Array[Byte]): KeyStateCodec.Stored = {
    val e = byKey.remove(key)
    if (e != null && bytes != null && java.util.Arrays.equals(e.bytes, bytes)) e.stored else null
  }

  /** `stored` is what `bytes` read as, and the key's state in the store now. */
  def keep(key: Any, bytes: Array[Byte], stored: KeyStateCodec.Stored): Unit = {
    if (byKey.size >= capacity) byKey.clear()
    byKey.put(key, new DecodedStates.Entry(bytes, stored))
  }

  def clear(): Unit = byKey.clear()
}

object DecodedStates {

  /** Keys a task keeps (a few hundred bytes each as objects). */
  val DefaultCapacity = 100000

  private final class Entry(val bytes: Array[Byte], val stored: KeyStateCodec.Stored)
}
