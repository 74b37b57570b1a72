package sparkwin.runtime.spark.task

import java.nio.ByteBuffer

import scala.collection.mutable.ArrayBuffer

import sparkwin.core.CorruptStateException
import sparkwin.operator.Operator

/** A big key group's wake-ups indexed by time (DESIGN.md, "Wake-ups by time"): what replaces the
  * [[WakeupTable]] once a group has more than [[WakeupIndex.From]] keys waiting.
  *
  * The table lives in the group's record, so a call that changes one key's wake-up rewrote every
  * key's: O(keys in the group) per call, and in real-time mode every row is a call. Here each
  * clock's wake-ups lie in buckets of [[WakeupIndex.BucketMs]] of time, each bucket in pages of at
  * most [[WakeupIndex.PageSize]] (key, time) entries, each page a state entry of its own. The
  * record keeps only the directory: per non-empty bucket its page count and its earliest time.
  * So a row that gives its key a new wake-up reads and writes one page, and the record grows
  * with the span of time keys wait for, not with the keys.
  *
  * Entries are not removed when a key's wake-up moves (finding them would need a key-to-page map,
  * itself O(keys) to keep): a moved key leaves a stale entry behind, which wakes the key once, for
  * nothing, when its time comes. A key's true next wake-up is read from its own state, so the
  * index only has to hold every true one; waking for a stale one costs a read of the key, at most
  * once per change. A due bucket is read whole and written back with the entries not yet due.
  *
  * For one call of one group at a time: pages are read once when first used, and [[flush]]
  * writes those that changed.
  */
final class WakeupIndex private (
    // Per clock (0: event time, 1: processing time), bucket number to its directory entry.
    private val clocks: Array[java.util.TreeMap[java.lang.Long, WakeupIndex.Bucket]]
) extends Wakeups {
  import WakeupIndex._

  private var pages = new java.util.HashMap[PageId, Page]()
  private var dirty = false
  // This call's: what it took out for the keys it wakes (null: nothing yet), and for the key it
  // processes ([[enter]]) what it took for it and its wake-up when loaded (the index keeps no
  // key's current wake-up: its state does).
  private var taken: java.util.LinkedHashMap[KeyId, Wakeup] = _
  private var took: Wakeup = _
  private var held: Wakeup = _

  /** Whether the directory changed since the record was read (or last [[settle]]d). */
  def changed: Boolean = dirty

  /** Whether no wake-up is indexed, stale ones included. */
  def isEmpty: Boolean = clocks(Event).isEmpty && clocks(Processing).isEmpty

  /** The written directory is what the next call reads. */
  def settle(): Boolean = { dirty = false; true }

  def open(): Unit = taken = null

  def due(host: GroupHost, isDue: (Long, Long) => Boolean): ArrayBuffer[Wakeup] = {
    taken = takeDue(host, isDue)
    val all = new ArrayBuffer[Wakeup](taken.size)
    taken.values.forEach(w => all += w)
    all
  }

  def enter(key: Array[Byte], due: Wakeup): Unit = {
    // A key with rows may have had its entry taken too (it wakes with its rows).
    took = if (due != null) due else if (taken == null) null else taken.get(new KeyId(key))
    held = null
  }

  /** The index lists no key for sure: only an empty group tells. */
  def holdsNoState(liveKeys: Long): Boolean = liveKeys == 0

  def loaded(operator: Operator): Unit = held = Wakeups.next(operator)

  def left(host: GroupHost, key: Array[Byte], operator: Operator): Unit =
    moved(host, key, held, Wakeups.next(operator), took)

  def grown(host: GroupHost): Wakeups = this

  /** An indexed record holds no table: an empty one stands for it. */
  lazy val table: WakeupTable = WakeupTable.empty(twoTimes = true)
  def index: WakeupIndex = this

  /** The earliest indexed wake-up on each clock (Long.MaxValue: none): a bound, since a stale
    * entry may be earlier than any key's true wake-up.
    */
  def earliest(): (Long, Long) = (first(Event), first(Processing))

  private def first(clock: Int): Long = {
    val e = clocks(clock).firstEntry()
    if (e == null) Long.MaxValue else e.getValue.earliest
  }

  /** Indexes `key`'s wake-up at `at` on `clock` (Long.MaxValue: never, nothing indexed). */
  def add(host: GroupHost, clock: Int, key: Array[Byte], at: Long): Unit =
    if (at != Long.MaxValue) {
      val slot = slotOf(at)
      var b = clocks(clock).get(slot)
      if (b == null) {
        b = new Bucket(1, at)
        clocks(clock).put(slot, b)
        // No stored page outlives its bucket: the first one of a new bucket is not read (unless
        // this call emptied the bucket and holds its page).
        pages.putIfAbsent(PageId(clock, slot, 0), new Page(stored = false))
      }
      var last = page(host, clock, slot, b.pages - 1)
      if (last.size >= PageSize) {
        last = new Page(stored = false)
        pages.putIfAbsent(PageId(clock, slot, b.pages), last)
        last = pages.get(PageId(clock, slot, b.pages))
        b.pages += 1
      }
      last.add(key, at)
      b.earliest = math.min(b.earliest, at)
      dirty = true
    }

  /** Takes every entry `isDue` accepts (given its time, on `clock`) out of the index: the due
    * keys with their due times, a key once (its earliest per clock), buckets in time order.
    */
  def takeDue(
      host: GroupHost,
      clock: Int,
      isDue: Long => Boolean,
      into: java.util.LinkedHashMap[KeyId, Wakeup]
  ): Unit = {
    val buckets = clocks(clock)
    var e = buckets.firstEntry()
    while (e != null && isDue(e.getValue.earliest)) {
      val slot = e.getKey.longValue
      val b = e.getValue
      val kept = new ArrayBuffer[(Array[Byte], Long)]()
      var p = 0
      while (p < b.pages) {
        val stored = page(host, clock, slot, p)
        var i = 0
        while (i < stored.size) {
          val key = stored.key(i)
          val at = stored.at(i)
          if (!isDue(at)) kept += ((key, at))
          else {
            val id = new KeyId(key)
            val was = into.get(id)
            val w = if (was == null) Wakeup(key, Long.MaxValue, Long.MaxValue) else was
            into.put(
              id,
              if (clock == Event) w.copy(at = math.min(w.at, at))
              else w.copy(processingAt = math.min(w.processingAt, at))
            )
          }
          i += 1
        }
        stored.clear()
        p += 1
      }
      // What is not yet due goes back, packed into the bucket's first pages.
      var earliest = Long.MaxValue
      var k = 0
      while (k < kept.size) {
        val (key, at) = kept(k)
        page(host, clock, slot, k / PageSize).add(key, at)
        earliest = math.min(earliest, at)
        k += 1
      }
      val left = (kept.size + PageSize - 1) / PageSize
      dirty = true
      if (left == 0) {
        buckets.remove(e.getKey)
        e = buckets.firstEntry()
      } else {
        b.pages = left
        b.earliest = earliest
        e = buckets.higherEntry(e.getKey)
      }
    }
  }

  /** Takes every due wake-up out of the index (`isDue` given the event and processing time):
    * the keys to wake, each once, with their due times (Long.MaxValue on a clock not due).
    */
  def takeDue(host: GroupHost, isDue: (Long, Long) => Boolean): java.util.LinkedHashMap[KeyId, Wakeup] = {
    val taken = new java.util.LinkedHashMap[KeyId, Wakeup]()
    takeDue(host, Event, isDue(_, Long.MaxValue), taken)
    takeDue(host, Processing, isDue(Long.MaxValue, _), taken)
    taken
  }

  /** A key was processed: its wake-up went from `held` (its state's when read, null: none) to
    * `next` (null: none), and `taken` is what this call took out of the index for it (null:
    * nothing). A wake-up is indexed where it changed, or where the call took the key's entry
    * (which may have been its true one).
    */
  def moved(host: GroupHost, key: Array[Byte], held: Wakeup, next: Wakeup, taken: Wakeup): Unit = {
    def at(w: Wakeup) = if (w == null) Long.MaxValue else w.at
    def processingAt(w: Wakeup) = if (w == null) Long.MaxValue else w.processingAt
    if (at(next) != at(held) || at(taken) != Long.MaxValue) add(host, Event, key, at(next))
    if (processingAt(next) != processingAt(held) || processingAt(taken) != Long.MaxValue)
      add(host, Processing, key, processingAt(next))
  }

  /** Writes every page this call changed (an emptied one is removed) and forgets them. */
  def flush(host: GroupHost): Unit = {
    pages.forEach { (id, page) =>
      if (page.changed) {
        if (page.size > 0) { host.keep(page.entryKey(id), page); page.stored = true }
        else if (page.stored) { host.remove(page.entryKey(id)); page.stored = false }
        page.changed = false
      }
    }
    // A map's walk and clear cost its capacity, not its size: after a call that used many pages
    // (a window's firing), the calls of single rows that follow start on a small one.
    pages = KeyBuckets.cleared(pages)
  }

  private def page(host: GroupHost, clock: Int, slot: Long, index: Int): Page = {
    val id = PageId(clock, slot, index)
    var p = pages.get(id)
    if (p == null) {
      p = host.kept(id.entryKey) match {
        // As the call before left it, still unwritten: a window's last page takes a key for
        // every row that opens the window, row after row.
        case kept: Page => kept
        case _ =>
          val bytes = host.get(id.entryKey)
          // Every page the directory counts is stored (a new one is made in the call, not read).
          if (bytes == null)
            throw new CorruptStateException(
              "a key group's wake-up index",
              s"page $index of bucket $slot (clock $clock) is missing",
              -1,
              0
            )
          Page.read(bytes, id)
      }
      pages.put(id, p)
    }
    p
  }

  /** The directory's bytes [[writeTo]] takes. */
  def encodedSize: Int = 4 + DirectoryEntry * (clocks(Event).size + clocks(Processing).size)

  /** The directory: a count, then per bucket its clock (byte), number (long), pages (int) and
    * earliest time (long), by clock, then by time.
    */
  def writeTo(out: ByteBuffer): Unit = {
    out.putInt(clocks(Event).size + clocks(Processing).size)
    var clock = 0
    while (clock < 2) {
      val c = clock.toByte
      clocks(clock).forEach((slot, b) => out.put(c).putLong(slot).putInt(b.pages).putLong(b.earliest))
      clock += 1
    }
  }
}

object WakeupIndex {

  /** A group's wake-up table moves to the index when it grows past this many keys: below it the
    * table in the record costs less than a page's read and write (and a micro-batch of few keys
    * runs as before); above it the table's rewrite per call grows with the keys.
    */
  val From = 256

  /** The time one bucket spans: a tumbling or sliding window's wake-ups share one, a session's
    * spread over its gap. The directory has an entry per non-empty bucket.
    */
  val BucketMs = 1000L

  /** The most entries a page holds: a row that adds one rewrites at most this many. */
  val PageSize = 32

  /** The most pages a bucket may claim, so a hostile directory cannot make a call read more
    * entries than a group could have written.
    */
  val MaxPages: Int = 1 << 26

  val Event = 0
  val Processing = 1

  private val DirectoryEntry = 1 + 8 + 4 + 8

  /** The tag of a page's entry key: a tag byte, the clock (byte), the bucket (long) and the page
    * (int), 14 bytes. The group record is empty, the last watermark one byte, a key bucket five,
    * and a key's `UnsafeRow` a multiple of eight: none is 14 bytes long.
    */
  private val PageTag: Byte = 3

  /** Whether an entry's key names a page of wake-ups. */
  def isPage(entryKey: Array[Byte]): Boolean = entryKey.length == 14 && entryKey(0) == PageTag

  /** The bucket of a wake-up at `at` (floor division: negative times too). */
  def slotOf(at: Long): Long = Math.floorDiv(at, BucketMs)

  /** An index of nothing. */
  def empty(): WakeupIndex = new WakeupIndex(Array(new java.util.TreeMap(), new java.util.TreeMap()))

  /** An index of a table's wake-ups (a group whose table grew past [[From]], or an older
    * sparkwin's record), its pages left for [[flush]].
    */
  def of(host: GroupHost, wakeups: Iterable[Wakeup]): WakeupIndex = {
    val index = empty()
    wakeups.foreach { w =>
      index.add(host, Event, w.key, w.at)
      index.add(host, Processing, w.key, w.processingAt)
    }
    index.dirty = true // a record written before held no index: it is written with one
    index
  }

  /** The directory at `in`'s position in a record, leaving `in` after it. */
  private[spark] def read(in: ByteBuffer, corrupt: String => IllegalStateException): WakeupIndex = {
    val n = in.getInt()
    if (n < 0 || n > in.remaining / DirectoryEntry) throw corrupt(s"$n wake-up buckets")
    val index = empty()
    var i = 0
    while (i < n) {
      val clock = in.get()
      val slot = in.getLong()
      val pages = in.getInt()
      val earliest = in.getLong()
      if (clock != Event && clock != Processing) throw corrupt(s"a wake-up bucket of clock $clock")
      if (pages < 1 || pages > MaxPages) throw corrupt(s"a wake-up bucket of $pages pages")
      if (earliest == Long.MaxValue || slotOf(earliest) != slot)
        throw corrupt(s"wake-up bucket $slot's earliest time $earliest lies outside it")
      val buckets = index.clocks(clock.toInt)
      if (!buckets.isEmpty && buckets.lastKey.longValue >= slot)
        throw corrupt(s"wake-up bucket $slot is out of order")
      buckets.put(slot, new Bucket(pages, earliest))
      i += 1
    }
    index
  }

  private final class Bucket(var pages: Int, var earliest: Long)

  private final case class PageId(clock: Int, slot: Long, index: Int) {
    def entryKey: Array[Byte] =
      ByteBuffer.allocate(14).put(PageTag).put(clock.toByte).putLong(slot).putInt(index).array()
  }

  /** One page's entries as a call uses them; `stored` when the state store (or the writes the
    * host holds, which keep the object itself: [[GroupHost.keep]]) has it. Its entry,
    * big-endian: per wake-up, the key's length and bytes, then the time.
    */
  private final class Page(var stored: Boolean) extends Encodable {
    private val keys = new ArrayBuffer[Array[Byte]]()
    private val times = new ArrayBuffer[Long]()
    var changed = false
    // Its entry's key, made once: a page keeps its id, and in real-time mode it is written (to
    // the held writes) at every row's call that adds a key to it.
    private var entry: Array[Byte] = _
    private var entryId: PageId = _

    def entryKey(id: PageId): Array[Byte] = {
      if (entry == null || entryId != id) { entry = id.entryKey; entryId = id }
      entry
    }

    def size: Int = keys.size
    def key(i: Int): Array[Byte] = keys(i)
    def at(i: Int): Long = times(i)

    def add(key: Array[Byte], at: Long): Unit = { keys += key; times += at; changed = true }

    def clear(): Unit = if (keys.nonEmpty) { keys.clear(); times.clear(); changed = true }

    def encode(): Array[Byte] = {
      var size = 0
      keys.foreach(k => size += 12 + k.length)
      val out = ByteBuffer.allocate(size)
      var i = 0
      while (i < keys.size) { out.putInt(keys(i).length).put(keys(i)).putLong(times(i)); i += 1 }
      out.array()
    }
  }

  private object Page {
    def read(bytes: Array[Byte], id: PageId): Page = {
      val page = new Page(stored = true)
      val in = ByteBuffer.wrap(bytes)
      def corrupt(why: String) = new CorruptStateException(
        s"wake-up page ${id.index} of bucket ${id.slot} (clock ${id.clock})",
        why,
        in.position(),
        bytes.length
      )
      try {
        while (in.hasRemaining) {
          val len = in.getInt()
          if (len < 1 || len > in.remaining - 8) throw corrupt(s"a key of $len bytes")
          val key = new Array[Byte](len)
          in.get(key)
          val at = in.getLong()
          if (slotOf(at) != id.slot) throw corrupt(s"a wake-up at $at outside its bucket")
          page.keys += key
          page.times += at
        }
      } catch {
        case _: java.nio.BufferUnderflowException => throw corrupt("it ends early")
      }
      page
    }
  }
}
