package sparkwin.operator.store

import java.io.{DataInputStream, DataOutputStream}
import java.util.{ArrayList => JList, HashMap => JMap}

import sparkwin.core.{ArrayRecord, CorruptStateException, Element, IncompatibleStateException}
import sparkwin.core.CorruptStateException.count
import sparkwin.core.agg.Aggregate
import sparkwin.core.timer.{Timer, TimerQueue}
import sparkwin.core.window.{TimeWindow, Window}

/** A key's whole engine state (the algorithm's state and the key's timers) as one byte array,
  * so a runtime stores it in a single value per key.
  *
  * Version 5, big-endian: the version byte, the algorithm and layout ids of the writer
  * (`operator.Selection`), the aggregates' signature (their kinds and columns, not their names), the
  * algorithm's body ([[StateKind]]), then the event-time and the processing-time timers. A state
  * written by another algorithm than `kind`'s, or for other aggregates, is refused with a
  * message, never misread: a spec whose choice changed between runs of a checkpoint (a new
  * trigger, a lateness, an aggregate) cannot resume it. Version 4 (sparkwin 0.4) had no
  * signature, and is read as written for these aggregates. Versions 1 to 3 (sparkwin 0.3 and
  * earlier) did not say who wrote them; they are read as written by the algorithm the same spec
  * chose then, which is the one `kind` is.
  *
  * A codec reuses its buffers from one state to the next: one codec per task, not shared.
  */
final class KeyStateCodec(kind: StateKind, aggregates: IndexedSeq[Aggregate]) {
  import KeyStateCodec._

  private val aggs = aggregates.toArray
  private val signature = aggregateSignature(aggregates)
  private val sink = new ByteSink(256)
  private val out = new DataOutputStream(sink)
  private val source = new ByteSource
  private val in = new DataInputStream(source)

  def encode(s: Stored): Array[Byte] = {
    sink.reset()
    out.writeByte(Version)
    out.writeByte(kind.algorithm.id)
    out.writeByte(Layout.Keyed.id)
    out.writeInt(signature)
    kind.write(out, s.state)
    writeTimers(out, s.eventTimers)
    writeTimers(out, s.processingTimers)
    out.flush()
    sink.toByteArray
  }

  /** The state in `bytes`; a value that does not read as its layout says is refused with a
    * [[CorruptStateException]] (what was expected, at which byte), never misread, and nothing is
    * allocated that its length cannot back.
    */
  def decode(bytes: Array[Byte]): Stored = {
    source.point(bytes)
    def layout = if (bytes.length == 0) "a key's state" else s"a key's state, layout ${bytes(0)}"
    CorruptStateException.reading(layout, bytes.length, () => source.position)(decodeBody(bytes))
  }

  private def decodeBody(bytes: Array[Byte]): Stored = {
    val version = in.readByte()
    if (version < 1 || version > Version)
      throw new CorruptStateException.Refused(
        s"expected a layout from 1 to $Version, found $version (a newer sparkwin's state, or a damaged one)"
      )
    val state =
      if (version < 4) kind.fromLegacy(readLegacy(version))
      else {
        val algorithm = in.readByte()
        val layout = in.readByte()
        if (algorithm != kind.algorithm.id || layout != Layout.Keyed.id)
          throw new IncompatibleStateException(
            s"this checkpoint's state was written by the ${name(algorithm)} algorithm " +
              s"(${Layout.byId(layout).fold(s"layout $layout")(_.name)} layout), but the " +
              s"pipeline now runs on the ${kind.algorithm} algorithm: a change to the pipeline " +
              "(its trigger, lateness, evictor, aggregates or windows) changed how it runs. " +
              "Restore the pipeline as it was to resume, or start from a new checkpoint." +
              (if (algorithm == Algorithm.General.id && kind.algorithm == Algorithm.Sliced)
                 " If the pipeline did not change: sparkwin 0.3.0 and earlier ran windows of more than " +
                   "256 slices on the general algorithm, and this version slices them; let the old " +
                   "version finish the open windows, or start from a new checkpoint."
               else "")
          )
        if (version >= 5 && in.readInt() != signature)
          throw new IncompatibleStateException(
            "this checkpoint's state was written for other aggregates than the pipeline now " +
              s"computes (${aggregates.map(_.alias).mkString(", ")}): a change to the " +
              "aggregates (added, removed, reordered, or on other columns) cannot resume a " +
              "window's accumulators. Restore the aggregates as they were to resume, or start " +
              "from a new checkpoint."
          )
        kind.read(in)
      }
    val event = readTimers(in)
    val processing = readTimers(in)
    if (version == 1) for (_ <- 0 until count(in, 8, "version 1's times")) in.readLong()
    if (source.available() > 0)
      throw new CorruptStateException.Refused(
        s"expected the value's end, found ${source.available()} more bytes"
      )
    new Stored(state, event, processing)
  }

  def empty(): Stored = new Stored(kind.newState(), new TimerQueue, new TimerQueue)

  private def name(algorithm: Int): String =
    Algorithm.byId(algorithm).fold(s"unknown ($algorithm)")(_.name)

  /** Versions 1 to 3: contents, window metadata, merging set and Storm's queue in one layout. */
  private def readLegacy(version: Int): LegacyState = {
    val legacy = new LegacyState(version)
    for (_ <- 0 until count(in, 2, "windows with contents")) {
      val w = ValueCodec.readWindow(in)
      legacy.contents.put(w, readContents(in, aggs))
    }
    for (_ <- 0 until count(in, 2, "windows with metadata")) {
      val w = ValueCodec.readWindow(in)
      val m = new LegacyMeta(ValueCodec.readSeq(in))
      m.paneIndex = in.readLong()
      m.nonEarlyFired = in.readBoolean()
      m.createdLate = in.readBoolean()
      m.closed = in.readBoolean()
      m.sinceLastPane = in.readLong()
      legacy.meta.put(w, m)
    }
    for (_ <- 0 until count(in, 2, "merged windows")) {
      val w = ValueCodec.readWindow(in).asInstanceOf[TimeWindow]
      legacy.merging(w) = ValueCodec.readWindow(in).asInstanceOf[TimeWindow]
    }
    if (in.readBoolean()) {
      val storm = new LegacyStorm(readElements(in))
      storm.nextWindowEnd = in.readLong()
      storm.lastProcessed = in.readLong()
      storm.processedLast = in.readLong()
      storm.previousWindow = readElements(in)
      storm.wakeAt = in.readLong()
      legacy.storm = storm
    }
    legacy
  }
}

object KeyStateCodec {

  /** A key's state with its timers: the runtime keeps one queue per key and domain. */
  final class Stored(val state: KeyState, val eventTimers: TimerQueue, val processingTimers: TimerQueue)

  object Stored {

    /** A state without timers. */
    def apply(state: KeyState): Stored = new Stored(state, new TimerQueue, new TimerQueue)
  }

  /** Version 4 says which algorithm and layout wrote a state. */
  val Version = 5

  /** What a window's accumulators depend on: each aggregate's kind and parameters, but not its
    * output name (renaming a column keeps the state). A CRC-32 of their text, the same on every
    * JVM and Scala version: Scala's hash of the same values differs between 2.12 and 2.13, and a
    * checkpoint moves from Spark 3.5's runtime to Spark 4's.
    */
  def aggregateSignature(aggregates: Seq[Aggregate]): Int = {
    def text(v: Any): String = v match {
      case s: scala.collection.Seq[_] => s.map(text).mkString("[", ",", "]")
      case p: Product if p.productArity > 0 =>
        p.productIterator.map(text).mkString(p.productPrefix + "(", ",", ")")
      case p: Product => p.productPrefix
      case other => String.valueOf(other)
    }
    val described = aggregates.map {
      // A user's class and columns: its saved fields carry its version, checked on restore.
      case e: Aggregate.Extension => s"Extension(${e.className},${text(e.columns)})"
      case p: Product =>
        p.productIterator.drop(1).map(text).mkString(p.productPrefix + "(", ",", ")") // the alias leads
      case other => other.getClass.getName
    }
    val crc = new java.util.zip.CRC32()
    crc.update(described.mkString(";").getBytes(java.nio.charset.StandardCharsets.UTF_8))
    crc.getValue.toInt
  }

  def writeElements(out: DataOutputStream, elements: java.util.List[Element]): Unit = {
    out.writeInt(elements.size)
    elements.forEach { e => out.writeLong(e.timestamp); ValueCodec.writeSeq(out, e.record.toArray) }
  }

  def readElements(in: DataInputStream): JList[Element] = {
    val n = count(in, 12, "elements") // a time and a sequence's length each
    val list = new JList[Element](n)
    for (_ <- 0 until n) {
      val ts = in.readLong()
      list.add(Element(ts, new ArrayRecord(ValueCodec.readSeq(in))))
    }
    list
  }

  /** A window's accumulators or elements. */
  def writeContents(out: DataOutputStream, c: WindowContents): Unit =
    if (c.accumulators != null) {
      out.writeBoolean(true)
      ValueCodec.writeAccumulators(out, c.accumulators)
    } else {
      out.writeBoolean(false)
      writeElements(out, c.elements)
    }

  def readContents(in: DataInputStream, aggregates: Array[Aggregate]): WindowContents =
    if (in.readBoolean()) new WindowContents(ValueCodec.readAccumulators(in, aggregates), null)
    else new WindowContents(null, readElements(in))

  private def writeTimers(out: DataOutputStream, q: TimerQueue): Unit = {
    out.writeInt(q.size)
    q.iterator.foreach { t => out.writeLong(t.timestamp); ValueCodec.writeWindow(out, t.window) }
  }

  private def readTimers(in: DataInputStream): TimerQueue = {
    val q = new TimerQueue
    for (_ <- 0 until count(in, 9, "timers")) { // a time and a window's tag each
      val ts = in.readLong()
      q.add(Timer(ts, 0L, ValueCodec.readWindow(in): Window))
    }
    q
  }
}

/** A state as versions 1 to 3 stored it, before it is turned into an algorithm's own. */
final class LegacyState(val version: Int) {
  val contents = new JMap[Window, WindowContents]()
  val meta = new JMap[Window, LegacyMeta]()
  val merging = scala.collection.mutable.HashMap.empty[TimeWindow, TimeWindow]
  var storm: LegacyStorm = _

  /** Whether it holds nothing but `contents` (what the sliced and session algorithms wrote). */
  def onlyContents: Boolean = meta.isEmpty && merging.isEmpty && storm == null
}

/** A window's metadata as versions 1 to 3 stored it: trigger state by slot position. */
final class LegacyMeta(val triggerState: Array[Any]) {
  var paneIndex = 0L
  var nonEarlyFired = false
  var createdLate = false
  var closed = false
  var sinceLastPane = 0L
}

/** Storm's per-key state as versions 1 to 3 stored it. */
final class LegacyStorm(val queue: JList[Element]) {
  var nextWindowEnd: Long = Long.MinValue
  var lastProcessed: Long = Long.MinValue
  var processedLast: Long = 0L
  var previousWindow: java.util.List[Element] = java.util.Collections.emptyList()
  var wakeAt: Long = Long.MinValue
}
