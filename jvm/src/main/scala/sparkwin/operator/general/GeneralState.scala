package sparkwin.operator.general

import java.io.{DataInputStream, DataOutputStream}
import java.util.{HashMap => JMap}

import sparkwin.core.agg.Aggregate
import sparkwin.core.trigger.TriggerLayout
import sparkwin.core.window.{MergingWindowSet, TimeWindow, Window}
import sparkwin.operator.Selection
import sparkwin.operator.store._

/** What the general algorithm keeps per live window besides contents: trigger state slots and
  * the pane bookkeeping (Beam's pane index, whether an on-time or late pane went out, whether the
  * window first appeared after its end had passed, and whether its trigger closed it).
  */
final class WindowMeta(val triggerState: Array[Any]) {
  var paneIndex: Long = 0L
  var nonEarlyFired: Boolean = false
  var createdLate: Boolean = false
  var closed: Boolean = false
  var sinceLastPane: Long = 0L // elements added since the last firing: is a pane "new"?

  // Not stored: the latest event-time timer known to be queued for this window, so the
  // per-element re-registration of the same timer (triggers and cleanup) is a field compare.
  var queuedEventTimer: Long = Long.MinValue
  var queuedCleanupTimer: Boolean = false
}

/** A key's state in the general algorithm: contents by state window, metadata by window, and
  * the session merging set.
  */
final class GeneralState extends KeyState {
  val contents = new JMap[Window, WindowContents]()
  val meta = new JMap[Window, WindowMeta]()
  var merging: MergingWindowSet = _

  def mergingSet: MergingWindowSet = {
    if (merging == null) merging = new MergingWindowSet()
    merging
  }

  def isEmpty: Boolean = contents.isEmpty && meta.isEmpty && (merging == null || merging.isEmpty)

  /** Windows with contents, windows with metadata, and merging-set mappings. */
  def numEntries: Int = contents.size + meta.size + (if (merging == null) 0 else merging.size)

  override def reset(): Unit = merging = null
}

/** The general algorithm's states in the store: contents, metadata with trigger state by name
  * and version (`core.trigger.StateDescriptor`), and the merging set's mapping.
  */
final class GeneralStateKind(aggregates: IndexedSeq[Aggregate], triggers: TriggerLayout) extends StateKind {
  private val aggs = aggregates.toArray

  def algorithm: Selection.Algorithm = Selection.Algorithm.General

  def newState(): KeyState = new GeneralState

  def write(out: DataOutputStream, state: KeyState): Unit = {
    val st = state.asInstanceOf[GeneralState]
    out.writeInt(st.contents.size)
    st.contents.forEach { (w, c) => ValueCodec.writeWindow(out, w); KeyStateCodec.writeContents(out, c) }
    out.writeInt(st.meta.size)
    st.meta.forEach { (w, m) =>
      ValueCodec.writeWindow(out, w)
      writeTriggerState(out, m.triggerState)
      out.writeLong(m.paneIndex)
      out.writeBoolean(m.nonEarlyFired)
      out.writeBoolean(m.createdLate)
      out.writeBoolean(m.closed)
      out.writeLong(m.sinceLastPane)
    }
    val mapping = if (st.merging == null) Map.empty[TimeWindow, TimeWindow] else st.merging.mapping
    out.writeInt(mapping.size)
    mapping.foreach { case (w, sw) => ValueCodec.writeWindow(out, w); ValueCodec.writeWindow(out, sw) }
  }

  def read(in: DataInputStream): KeyState = {
    val st = new GeneralState
    for (_ <- 0 until in.readInt()) {
      val w = ValueCodec.readWindow(in)
      st.contents.put(w, KeyStateCodec.readContents(in, aggs))
    }
    for (_ <- 0 until in.readInt()) {
      val w = ValueCodec.readWindow(in)
      val m = new WindowMeta(readTriggerState(in))
      m.paneIndex = in.readLong()
      m.nonEarlyFired = in.readBoolean()
      m.createdLate = in.readBoolean()
      m.closed = in.readBoolean()
      m.sinceLastPane = in.readLong()
      st.meta.put(w, m)
    }
    for (_ <- 0 until in.readInt()) {
      val w = ValueCodec.readWindow(in).asInstanceOf[TimeWindow]
      st.mergingSet.mapping(w) = ValueCodec.readWindow(in).asInstanceOf[TimeWindow]
    }
    st
  }

  def fromLegacy(legacy: LegacyState): KeyState = {
    if (legacy.storm != null)
      throw new sparkwin.core.IncompatibleStateException(
        "this checkpoint's state holds Storm windows, but the pipeline no longer uses them: " +
          "start the query from a new checkpoint"
      )
    val st = new GeneralState
    st.contents.putAll(legacy.contents)
    legacy.meta.forEach { (w, old) =>
      val m = new WindowMeta(slots(old.triggerState))
      m.paneIndex = old.paneIndex
      m.nonEarlyFired = old.nonEarlyFired
      m.createdLate = old.createdLate
      m.closed = old.closed
      m.sinceLastPane = old.sinceLastPane
      st.meta.put(w, m)
    }
    legacy.merging.foreach { case (w, sw) => st.mergingSet.mapping(w) = sw }
    st
  }

  /** The set entries of a window's trigger state, each as its full name, version and value. */
  private def writeTriggerState(out: DataOutputStream, slots: Array[Any]): Unit = {
    out.writeInt(slots.count(_ != null))
    var i = 0
    while (i < slots.length) {
      if (slots(i) != null) {
        out.writeUTF(triggers.names(i))
        out.writeInt(triggers.versions(i))
        ValueCodec.write(out, slots(i))
      }
      i += 1
    }
  }

  private def readTriggerState(in: DataInputStream): Array[Any] = {
    val slots = new Array[Any](triggers.slots)
    for (_ <- 0 until in.readInt()) {
      val name = in.readUTF()
      val version = in.readInt()
      val value = ValueCodec.read(in)
      val slot = triggers.slotOf(name)
      if (slot < 0)
        throw new sparkwin.core.IncompatibleStateException(
          s"this checkpoint holds trigger state '$name' that the pipeline's trigger ${triggers.root} " +
            s"does not have (it has ${triggers.names.mkString(", ")}): the trigger changed; " +
            "restore it to resume, or start the query from a new checkpoint"
        )
      if (version != triggers.versions(slot))
        throw new sparkwin.core.IncompatibleStateException(
          s"this checkpoint holds trigger state '$name' of version $version, the pipeline's trigger " +
            s"reads version ${triggers.versions(slot)}: start the query from a new checkpoint"
        )
      slots(slot) = value
    }
    slots
  }

  /** Trigger state as versions 1 to 3 stored it: by slot, in the order the layout numbers them. */
  private def slots(stored: Array[Any]): Array[Any] =
    if (stored.length == triggers.slots) stored
    else
      throw new sparkwin.core.IncompatibleStateException(
        s"this checkpoint's trigger state has ${stored.length} slots where the pipeline's trigger " +
          s"has ${triggers.slots}: the trigger changed; start the query from a new checkpoint"
      )
}
