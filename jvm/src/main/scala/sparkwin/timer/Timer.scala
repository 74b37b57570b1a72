package sparkwin.timer

import sparkwin.window.Window

/** A timer: unique per (key, window, timestamp). `keyId` is the runtime's handle for the key. */
final case class Timer(timestamp: Long, keyId: Long, window: Window)

object Timer {

  /** Firing order: by timestamp, then key, then window, so equal timestamps fire stably. */
  implicit val ordering: Ordering[Timer] = new Ordering[Timer] {
    def compare(a: Timer, b: Timer): Int = {
      val c = java.lang.Long.compare(a.timestamp, b.timestamp)
      if (c != 0) c
      else {
        val k = java.lang.Long.compare(a.keyId, b.keyId)
        if (k != 0) k else Window.ordering.compare(a.window, b.window)
      }
    }
  }
}

/** One time domain's timers: deduplicated, deletable, polled in firing order. */
final class TimerQueue {
  private val set = new java.util.TreeSet[Timer](Timer.ordering)

  /** Adds the timer; false when it was already registered (it will still fire once). */
  def add(t: Timer): Boolean = set.add(t)

  def remove(t: Timer): Boolean = set.remove(t)

  def contains(t: Timer): Boolean = set.contains(t)

  def isEmpty: Boolean = set.isEmpty

  def size: Int = set.size

  /** The next timer due at or before `time`, removed from the queue; null when none is due. */
  def pollDue(time: Long): Timer = {
    if (set.isEmpty) return null
    val first = set.first()
    if (first.timestamp <= time) { set.pollFirst(); first }
    else null
  }

  def peek: Option[Timer] = if (set.isEmpty) None else Some(set.first())

  def iterator: Iterator[Timer] = {
    import scala.jdk.CollectionConverters._
    set.iterator.asScala
  }

  def clear(): Unit = set.clear()

  /** Timers of one key (for per-key views and cleanup checks). */
  def ofKey(keyId: Long): Iterator[Timer] = iterator.filter(_.keyId == keyId)
}
