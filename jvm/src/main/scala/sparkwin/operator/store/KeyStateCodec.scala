package sparkwin.operator.store

import sparkwin.core._
import sparkwin.operator._

import java.io.{DataInputStream, DataOutputStream}
import java.util.{ArrayList => JList}

import sparkwin.core.agg.Aggregate
import sparkwin.core.{ArrayRecord, Element}
import sparkwin.core.timer.{Timer, TimerQueue}
import sparkwin.core.window.{TimeWindow, Window}

/** A key's whole engine state (contents, metadata, merging set, Storm queue, timers) as one
  * byte array, so a runtime stores it in a single value per key.
  *
  * The format is versioned; a checkpoint written by one version is read by the next.
  * `sliceWidth` is the slice width when the pipeline runs on the slicing operator (0: not):
  * its contents are slices, which a state from before version 3 holds only for tumbling windows.
  *
  * A codec reuses its buffers from one state to the next: one codec per task, not shared.
  */
final class KeyStateCodec(aggregates: IndexedSeq[Aggregate], sliceWidth: Long = 0L) {
  // Version 1 also carried the runtime's per-key timers; a version 1 state is still read.
  // Version 3 has version 2's layout; it marks states whose aligned windows may be sliced.
  private val Version = 3

  private val aggs = aggregates.toArray
  private val sink = new ByteSink(256)
  private val out = new DataOutputStream(sink)
  private val source = new ByteSource
  private val in = new DataInputStream(source)

  /** Timers travel with the key: the runtime keeps one queue per key and domain. */
  final class Stored(
      val state: KeyState,
      val eventTimers: TimerQueue,
      val processingTimers: TimerQueue
  )

  def encode(s: Stored): Array[Byte] = {
    sink.reset()
    out.writeByte(Version)
    val st = s.state
    out.writeInt(st.contents.size)
    st.contents.forEach { (w, c) =>
      ValueCodec.writeWindow(out, w)
      if (c.accumulators != null) {
        out.writeBoolean(true)
        ValueCodec.writeAccumulators(out, c.accumulators)
      } else {
        out.writeBoolean(false)
        writeElements(out, c.elements)
      }
    }
    out.writeInt(st.meta.size)
    st.meta.forEach { (w, m) =>
      ValueCodec.writeWindow(out, w)
      ValueCodec.writeSeq(out, m.triggerState)
      out.writeLong(m.paneIndex)
      out.writeBoolean(m.nonEarlyFired)
      out.writeBoolean(m.createdLate)
      out.writeBoolean(m.closed)
      out.writeLong(m.sinceLastPane)
    }
    val merging = if (st.merging == null) Map.empty[TimeWindow, TimeWindow] else st.merging.mapping
    out.writeInt(merging.size)
    merging.foreach { case (w, sw) => ValueCodec.writeWindow(out, w); ValueCodec.writeWindow(out, sw) }
    out.writeBoolean(st.storm != null)
    if (st.storm != null) {
      val storm = st.storm
      writeElements(out, storm.queue)
      out.writeLong(storm.nextWindowEnd)
      out.writeLong(storm.lastProcessed)
      out.writeLong(storm.processedLast)
      writeElements(out, storm.previousWindow)
      out.writeLong(storm.wakeAt)
    }
    writeTimers(out, s.eventTimers)
    writeTimers(out, s.processingTimers)
    out.flush()
    sink.toByteArray
  }

  def decode(bytes: Array[Byte]): Stored = {
    source.point(bytes)
    val version = in.readByte()
    if (version < 1 || version > Version)
      throw new IllegalStateException(s"sparkwin state version $version is not readable by this jar")
    val st = new KeyState
    for (_ <- 0 until in.readInt()) {
      val w = ValueCodec.readWindow(in)
      val contents =
        if (in.readBoolean()) {
          new WindowContents(ValueCodec.readAccumulators(in, aggs), null)
        } else new WindowContents(null, readElements(in))
      st.contents.put(w, contents)
      if (version < 3 && sliceWidth > 0 && !isSlice(w))
        throw new IllegalStateException(
          s"this checkpoint keeps the whole window $w, written by a sparkwin older than 0.1.1; " +
            "this version keeps sliding windows as slices and cannot resume it: let the old " +
            "version finish its open windows, or start the query from a new checkpoint"
        )
    }
    for (_ <- 0 until in.readInt()) {
      val w = ValueCodec.readWindow(in)
      val m = new WindowMeta(ValueCodec.readSeq(in))
      m.paneIndex = in.readLong()
      m.nonEarlyFired = in.readBoolean()
      m.createdLate = in.readBoolean()
      m.closed = in.readBoolean()
      m.sinceLastPane = in.readLong()
      st.meta.put(w, m)
    }
    val mappings = in.readInt()
    if (mappings > 0) {
      val set = st.mergingSet
      for (_ <- 0 until mappings) {
        val w = ValueCodec.readWindow(in).asInstanceOf[TimeWindow]
        set.mapping(w) = ValueCodec.readWindow(in).asInstanceOf[TimeWindow]
      }
    }
    if (in.readBoolean()) {
      val storm = st.stormState
      storm.queue.addAll(readElements(in))
      storm.nextWindowEnd = in.readLong()
      storm.lastProcessed = in.readLong()
      storm.processedLast = in.readLong()
      storm.previousWindow = readElements(in)
      storm.wakeAt = in.readLong()
    }
    val event = readTimers(in)
    val processing = readTimers(in)
    if (version == 1) for (_ <- 0 until in.readInt()) in.readLong()
    new Stored(st, event, processing)
  }

  private def isSlice(w: Window): Boolean = w match {
    case t: TimeWindow => t.end - t.start == sliceWidth
    case _ => false
  }

  def empty(): Stored =
    new Stored(new KeyState, new TimerQueue, new TimerQueue)

  private def writeElements(out: DataOutputStream, elements: java.util.List[Element]): Unit = {
    out.writeInt(elements.size)
    elements.forEach { e => out.writeLong(e.timestamp); ValueCodec.writeSeq(out, e.record.toArray) }
  }

  private def readElements(in: DataInputStream): JList[Element] = {
    val n = in.readInt()
    val list = new JList[Element](n)
    for (_ <- 0 until n) {
      val ts = in.readLong()
      list.add(Element(ts, new ArrayRecord(ValueCodec.readSeq(in))))
    }
    list
  }

  private def writeTimers(out: DataOutputStream, q: TimerQueue): Unit = {
    out.writeInt(q.size)
    q.iterator.foreach { t => out.writeLong(t.timestamp); ValueCodec.writeWindow(out, t.window) }
  }

  private def readTimers(in: DataInputStream): TimerQueue = {
    val q = new TimerQueue
    for (_ <- 0 until in.readInt()) {
      val ts = in.readLong()
      q.add(Timer(ts, 0L, ValueCodec.readWindow(in): Window))
    }
    q
  }
}
