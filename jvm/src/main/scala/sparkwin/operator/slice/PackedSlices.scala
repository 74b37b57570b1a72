package sparkwin.operator.slice

import sparkwin.core.Record
import sparkwin.core.agg.PackedAggregates
import sparkwin.core.window.{TimeWindow, Window}
import sparkwin.operator.WindowContext
import sparkwin.operator.store.{HeldState, StateKind}

/** The sliced algorithm in the packed layout (the local runtime, where one backend holds every
  * key by dense id): state laid out by slice instead of by key, with the same panes in the same
  * order as [[KeyedSlices]].
  *
  * All keys share the slice grid, so a slice is one object holding a row for every key with data
  * in it. Rows sit in pages of 64 consecutive key ids: a presence mask and the rows' aggregate
  * slots as longs ([[PackedAggregates]]: count, integral and fractional sum, avg). An element
  * costs a page lookup and a few long updates; no per-key state, timer or allocation. A window
  * fires for all its keys when the watermark reaches its end, walking its slices' pages in
  * key-id order, which is the order per-key timers of one instant fire in. It registers no
  * timers, so `timersRegistered` stays 0.
  */
final class PackedSlices(context: WindowContext) extends SliceAlgorithm(context) with HeldState {
  import PackedSlices._

  private val packed = new PackedAggregates(context.spec.aggregates.toArray)
  private val slots = packed.slots

  val stateKind: Option[StateKind] = None
  context.hold(this)

  /** Live slices by start. Few: one per width of event time that has data and is not fired. */
  private val slices = new java.util.TreeMap[java.lang.Long, Slice]()
  private var hot: Slice = null // the slice of the previous element
  private var hotLastEnd = 0L // and the end of its last window
  private val pool = new java.util.ArrayDeque[Page]() // emptied pages for new rows
  private var firedEnd = Long.MinValue // every window ending at or before this is done

  // State entries are the rows; keys with state, those present in some slice. Both are read
  // only by tests and the harness, so they are counted from the masks, not kept per row.
  def numHeldEntries: Int = {
    var n = 0
    slices.values.forEach(s => for (p <- s.pages.indices) n += java.lang.Long.bitCount(s.maskAt(p)))
    n
  }

  def numHeldKeys: Int = {
    var union = new Array[Long](0) // by page: the keys present in any slice
    slices.values.forEach { s =>
      if (s.pages.length > union.length) union = java.util.Arrays.copyOf(union, s.pages.length)
      for (p <- s.pages.indices) union(p) |= s.maskAt(p)
    }
    union.map(java.lang.Long.bitCount).sum
  }

  // ---------------------------------------------------------------------------------------
  // Elements

  def processElement(record: Record, timestamp: Long): Unit = {
    var slice = hot
    if (slice == null || timestamp < slice.start || timestamp - slice.start >= width) {
      val s = grid.sliceOf(timestamp)
      if (lateSlice(s)) { context.late(record, timestamp); return }
      slice = sliceAt(s)
    } else if (context.isLateAt(hotLastEnd - 1)) { context.late(record, timestamp); return }
    val id = context.currentKeyId.toInt
    val page = slice.pageFor(id, this)
    val bit = 1L << id
    val base = (id & 63) * slots
    if ((page.mask & bit) == 0) openRow(slice, page, bit, base, id)
    packed.add(page.values, base, record)
  }

  private def sliceAt(s: Long): Slice = {
    var slice = slices.get(s)
    if (slice == null) {
      slice = new Slice(s)
      slices.put(s, slice)
    }
    hot = slice
    hotLastEnd = grid.lastEnd(s)
    slice
  }

  private def openRow(slice: Slice, page: Page, bit: Long, base: Int, id: Int): Unit = {
    page.mask |= bit
    java.util.Arrays.fill(page.values, base, base + slots, 0L)
    if (width == size) context.metrics.windowsOpened += 1 // a tumbling slice is its own window
    else countOpened(slice.start, nearestEarlier(slice.start, id), nearestLater(slice.start, id))
  }

  /** The key's nearest earlier slice within a window of `s` (slices further away share no
    * window with it), or Long.MinValue.
    */
  private def nearestEarlier(s: Long, id: Int): Long = {
    val down = slices.headMap(s, false).descendingMap.values.iterator
    while (down.hasNext) {
      val o = down.next()
      if (o.start <= s - size) return Long.MinValue
      if (o.has(id)) return o.start
    }
    Long.MinValue
  }

  /** The key's nearest later slice within a window of `s`, or Long.MaxValue. */
  private def nearestLater(s: Long, id: Int): Long = {
    val up = slices.tailMap(s, false).values.iterator
    while (up.hasNext) {
      val o = up.next()
      if (o.start >= s + size) return Long.MaxValue
      if (o.has(id)) return o.start
    }
    Long.MaxValue
  }

  // ---------------------------------------------------------------------------------------
  // Time

  /** It registers no timers: windows fire by the watermark ([[onWatermark]]). */
  def onTimer(time: Long, window: Window, eventTime: Boolean): Unit = ()

  override def onWatermark(wm: Long): Unit = {
    var done = false
    while (!done && !slices.isEmpty) {
      val e0 = grid.firstEnd(slices.firstKey)
      val e = if (firedEnd == Long.MinValue || e0 > firedEnd) e0 else firedEnd + slide
      if (e - 1 <= wm) fire(e) else done = true
    }
    // Windows ending by now are done even without data: a slice opened later must not fire them.
    if (wm == Long.MaxValue) firedEnd = Long.MaxValue
    else if (wm > Long.MinValue / 4) // far below any real time, where the arithmetic could wrap
      firedEnd = math.max(firedEnd, grid.lastEndBy(wm))
  }

  private val gathered = new Array[Slice]((sparkwin.operator.Selection.MaxPackedSlicesPerWindow + 1).toInt)
  private val scratch = new Array[Long](slots)

  /** The window ending at `e`, for every key with data in it; then the slices no later window
    * holds go.
    */
  private def fire(e: Long): Unit = {
    val window = TimeWindow(e - size, e)
    var n = 0
    val it = slices.subMap(e - size, e).values.iterator
    while (it.hasNext) { gathered(n) = it.next(); n += 1 }
    if (n == 1) emitSlice(window, gathered(0)) else emitMerged(window, n)
    java.util.Arrays.fill(gathered.asInstanceOf[Array[AnyRef]], 0, n, null)
    val keep = window.start + slide
    while (!slices.isEmpty && slices.firstKey < keep) drop(slices.pollFirstEntry.getValue)
    firedEnd = e
  }

  private def emitSlice(window: TimeWindow, slice: Slice): Unit = {
    val pages = slice.pages
    var p = 0
    while (p < pages.length) {
      val page = pages(p)
      if (page != null) {
        var m = page.mask
        while (m != 0) {
          val b = java.lang.Long.numberOfTrailingZeros(m)
          m &= m - 1
          emit(window, (p << 6) + b, page.values, b * slots)
        }
      }
      p += 1
    }
  }

  /** Keys in id order; each key's rows in its slices merged into `scratch`. */
  private def emitMerged(window: TimeWindow, n: Int): Unit = {
    var pageCount = 0
    var i = 0
    while (i < n) { pageCount = math.max(pageCount, gathered(i).pages.length); i += 1 }
    var p = 0
    while (p < pageCount) {
      var union = 0L
      i = 0
      while (i < n) { union |= gathered(i).maskAt(p); i += 1 }
      while (union != 0) {
        val b = java.lang.Long.numberOfTrailingZeros(union)
        val bit = 1L << b
        union &= union - 1
        java.util.Arrays.fill(scratch, 0L)
        i = 0
        while (i < n) {
          if ((gathered(i).maskAt(p) & bit) != 0)
            packed.merge(scratch, 0, gathered(i).pages(p).values, b * slots)
          i += 1
        }
        emit(window, (p << 6) + b, scratch, 0)
      }
      p += 1
    }
  }

  private def emit(window: TimeWindow, id: Int, values: Array[Long], base: Int): Unit = {
    val out = packed.results(values, base)
    context.emitFinalOf(id.toLong, window, out)
  }

  private def drop(slice: Slice): Unit = {
    val pages = slice.pages
    var p = 0
    while (p < pages.length) {
      val page = pages(p)
      if (page != null) {
        page.mask = 0L
        pool.push(page)
        pages(p) = null
      }
      p += 1
    }
    if (hot eq slice) hot = null
  }

  private[slice] def newPage(): Page = if (pool.isEmpty) new Page(slots) else pool.pop()
}

object PackedSlices {

  /** The rows of 64 consecutive key ids in one slice: which are present, and their slots. */
  private[slice] final class Page(slots: Int) {
    var mask = 0L
    val values = new Array[Long](64 * slots)
  }

  /** One slice of event time, with a row for every key that has data in it. */
  private[slice] final class Slice(val start: Long) {
    var pages = new Array[Page](4)

    def pageFor(id: Int, owner: PackedSlices): Page = {
      val p = id >>> 6
      if (p >= pages.length) pages = java.util.Arrays.copyOf(pages, math.max(p + 1, pages.length * 2))
      var page = pages(p)
      if (page == null) { page = owner.newPage(); pages(p) = page }
      page
    }

    def maskAt(p: Int): Long = if (p < pages.length && pages(p) != null) pages(p).mask else 0L

    def has(id: Int): Boolean = (maskAt(id >>> 6) & (1L << id)) != 0
  }
}
