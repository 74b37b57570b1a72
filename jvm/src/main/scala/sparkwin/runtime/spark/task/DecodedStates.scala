package sparkwin.runtime.spark.task

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
  *
  * Keeping pays only when a key comes back before its state changes elsewhere: a few hot keys do,
  * row after row. With many keys a key comes back about once a window, its kept state is used
  * one time in twenty, and every kept state lives until then: at 100k keys they were most of
  * what each young collection copied, and its pauses (25-50 ms) sat on the panes' p99. So keeping
  * is measured: every [[Trial]] loads the share of kept states used is counted, and below a
  * quarter nothing is kept for the next [[Pause]] loads (then it is tried again).
  */
final class DecodedStates(capacity: Int) {
  import DecodedStates._

  private val byKey = new java.util.HashMap[Any, Entry]()
  private var loads = 0 // in this trial or pause
  private var used = 0 // kept states handed back in this trial
  private var keeping = true

  /** Whether states are kept now (for tests). */
  def isKeeping: Boolean = keeping

  /** The state kept for `key` if it was saved as exactly `bytes`, else null; either way the
    * key's entry is gone until [[keep]].
    */
  def take(key: Any, bytes: Array[Byte]): KeyStateCodec.Stored = {
    loads += 1
    if (!keeping) {
      if (loads >= Pause) { keeping = true; loads = 0; used = 0 }
      null
    } else {
      val e = byKey.remove(key)
      val kept = if (e != null && bytes != null && java.util.Arrays.equals(e.bytes, bytes)) e.stored else null
      if (kept != null) used += 1
      if (loads >= Trial) {
        if (used * 4 < loads) { keeping = false; byKey.clear() }
        loads = 0
        used = 0
      }
      kept
    }
  }

  /** `stored` is what `bytes` read as, and the key's state in the store now. */
  def keep(key: Any, bytes: Array[Byte], stored: KeyStateCodec.Stored): Unit = if (keeping) {
    if (byKey.size >= capacity) byKey.clear()
    byKey.put(key, new Entry(bytes, stored))
  }

  def clear(): Unit = byKey.clear()
}

object DecodedStates {

  /** Keys a task keeps (a few hundred bytes each as objects). */
  val DefaultCapacity = 100000

  /** Loads over which the share of kept states used is measured. */
  val Trial = 8192

  /** Loads that keep nothing after a trial found keeping useless. */
  val Pause: Int = 16 * Trial

  private final class Entry(val bytes: Array[Byte], val stored: KeyStateCodec.Stored)
}
