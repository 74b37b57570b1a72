package sparkwin.difftest

/** A difference between sparkwin and a reference system that the comparator does not count as
  * a disagreement. Each names its reason and how the comparator recognises it; nothing outside
  * these is forgiven.
  *
  *  - [[Exclusion.Deliberate]]: a difference docs/DESIGN.md makes on purpose.
  *  - [[Exclusion.KnownIssue]]: a disagreement these tests found where sparkwin is wrong (or
  *    DESIGN.md does not yet say otherwise). Each has a minimal sequence in
  *    `KnownIssuesSuite`, ignored until the engine is fixed; when it is, delete the issue here
  *    and un-ignore its test, and the random runs check that case again.
  */
sealed abstract class Exclusion(val reason: String, val check: String) extends Product with Serializable {
  def name: String = productPrefix
}

object Exclusion {
  sealed abstract class Deliberate(reason: String, check: String) extends Exclusion(reason, check)
  sealed abstract class KnownIssue(reason: String, check: String) extends Exclusion(reason, check)

  // ---------------------------------------------------------------------------------------------
  // DESIGN.md, "Differences from Flink, on purpose"

  case object SessionJoinsEqualMergedWindow
      extends Deliberate(
        "MergingWindowSet: a new session window exactly equal to a live merged window joins it. " +
          "Flink re-points such a window at itself and orphans the merged contents.",
        "an element whose session window [ts, ts + gap) equals a live window that Flink's " +
          "observed trigger saw come out of a merge; that key is compared no further (its " +
          "Flink state is orphaned, so its state is not checked either)"
      )

  case object NoWindowCounted
      extends Deliberate(
        "Elements that get no window at all (sliding windows with size < slide) are counted " +
          "(droppedNoWindow); Flink drops them silently.",
        "Flink's own assigner gives the element no window; sparkwin's droppedNoWindow must equal " +
          "the number of such elements (and no pane or state may differ)"
      )

  case object ContinuousFloorAlignment
      extends Deliberate(
        "Continuous triggers align their first firing with a floor modulo, so negative " +
          "timestamps behave; Flink's % rounds them toward zero.",
        "ContinuousEventTimeTrigger and an element with ts < 0 and ts % interval != 0: its " +
          "windows (for sessions, its key) are compared no further from that step on"
      )

  case object TimeoutFiresOnlyOnOwnTimer
      extends Deliberate(
        "ProcessingTimeoutTrigger forces a firing only on its own timeout timer; Flink's fires " +
          "on every timer of the window, including the operator's cleanup timer.",
        "a Flink firing of a ProcessingTimeoutTrigger window caused by a timer that is not a " +
          "timeout timer the trigger registered (processing time now + timeout) and at which the " +
          "nested trigger would not fire: that window is compared no further from that step on"
      )

  case object CleanupSurvivesTriggerDeletion
      extends Deliberate(
        "A trigger deleting a timer at the window's cleanup time does not cancel the cleanup " +
          "(the cleanup timer belongs to the operator; triggers share the timer namespace " +
          "with it).",
        "the observed trigger context sees a live window's trigger delete the timer at the " +
          "window's cleanup time outside clear(): that window is compared no further from that " +
          "step on, and Flink's leftover state is not counted"
      )

  case object EventTimeRange
      extends Deliberate(
        "Event times outside 0001-01-01..9999-12-31 (Spark's timestamp range) go to sparkwin's " +
          "errors output, so no window bound can overflow a long and no record can fail a job; " +
          "Flink assigns them windows, with wrapped bounds near Long's limits.",
        "sparkwin reports an error row for an element whose timestamp is outside that range (the " +
          "run stops there). The random families never draw such timestamps"
      )

  case object BeamPaneInfo
      extends Deliberate(
        "Panes (Beam) for every pipeline: every result carries pane_timing, pane_index, " +
          "pane_is_first and pane_is_last; Flink's results have no pane metadata.",
        "always: the pane fields of a Flink result are derived from Flink's observed window " +
          "lifecycle by DESIGN.md's rules (PaneAnnotator) and must equal sparkwin's"
      )

  case object UnfiredCounted
      extends Deliberate(
        "Flink triggers: elements that never made it into any pane before cleanup are counted " +
          "(unfiredAtCleanup) instead of vanishing silently.",
        "always: sparkwin's unfiredAtCleanup must equal the elements Flink's windows held " +
          "since their last firing when Flink cleared them"
      )

  // ---------------------------------------------------------------------------------------------
  // DESIGN.md, "Storm windows"

  case object StormStartsAtEarliestTuple
      extends Deliberate(
        "The first window end is the aligned end of the earliest tuple (Storm starts from " +
          "time 0, which mistreats negative timestamps).",
        "always: Storm gets every timestamp and watermark shifted up by a whole number of " +
          "slides (so all are positive and its search from 0 finds the same first window), and " +
          "its window bounds shifted back"
      )

  case object StormCountWindowNotRepeated
      extends Deliberate(
        "A count-length window that would repeat unchanged with no newer tuple queued is not " +
          "re-emitted for every slide step (Storm would re-emit it forever on an idle key).",
        "a Storm count-length window whose tuples equal the key's previous window's and with " +
          "no tuple newer than its end queued: sparkwin may emit it later (once a newer tuple " +
          "arrives) or, at the end of the key's output, never"
      )

  val deliberate: Seq[Deliberate] = Seq(
    SessionJoinsEqualMergedWindow,
    NoWindowCounted,
    ContinuousFloorAlignment,
    TimeoutFiresOnlyOnOwnTimer,
    CleanupSurvivesTriggerDeletion,
    EventTimeRange,
    BeamPaneInfo,
    UnfiredCounted,
    StormStartsAtEarliestTuple,
    StormCountWindowNotRepeated
  )

  // ---------------------------------------------------------------------------------------------
  // Disagreements found by these tests (see KnownIssuesSuite)

  case object TimeoutStateKeptWithoutClear
      extends KnownIssue(
        "ProcessingTimeoutTrigger with shouldClearOnTimeout = false: after a firing on a timer " +
          "(its own timeout, or the nested trigger's timer) Flink keeps its timeout state. A " +
          "pending timeout still fires later (an extra pane), and a timeout that fired is never " +
          "re-armed unless resetTimerOnNewRecord. sparkwin clears its own timeout after every " +
          "firing, whatever shouldClearOnTimeout says. DESIGN.md does not list this.",
        "a Flink firing caused by a timer in a ProcessingTimeoutTrigger pipeline with " +
          "shouldClearOnTimeout = false: that window is compared no further from the next step on"
      )

  case object CountEvictorOrderAfterMerge
      extends KnownIssue(
        "CountEvictor on merged session windows: which elements are the 'last n' depends on the " +
          "buffer's order after a merge. Flink appends the merged windows' buffers in hash-set " +
          "order; sparkwin keeps the earliest window's buffer and appends the others by window " +
          "start. Neither is arrival order, and DESIGN.md says nothing (it says 'in arrival " +
          "order').",
        "a CountEvictor pipeline on session windows: a key is compared no further from the " +
          "first step at which Flink merged two of its windows"
      )

  case object StormDeferredWindowTakesLaterTuple
      extends KnownIssue(
        "Storm count-length windows with a time slide: a window sparkwin holds back as a repeat " +
          "(StormCountWindowNotRepeated) is evaluated again when a newer tuple arrives, and then " +
          "holds tuples that arrived after Storm had emitted that window (a tuple exactly at the " +
          "watermark, which is not late). The deferred window is not the one Storm emitted, and " +
          "the next window, which Storm emits with that tuple, is then suppressed as a repeat.",
        "a tuple, not late, exactly at Storm's watermark and at or before the end of a repeat " +
          "window Storm already emitted for its key: that key is compared no further from that step on"
      )

  case object StormWakeMissesTupleAtWatermark
      extends KnownIssue(
        "Storm windows with a time slide: when the window end due next was found empty and a " +
          "tuple then arrives exactly at the watermark (not late) inside that window, the key's " +
          "wake-up stays at the aligned end of the first tuple after that window end, so the " +
          "window fires only when the watermark reaches that later end. Storm fires it at the " +
          "next watermark.",
        "a tuple, not late, exactly at Storm's current watermark, which is also the window end " +
          "Storm's WatermarkTimeTriggerPolicy waits at for the key (its nextWindowEndTs): that " +
          "key is compared no further from that step on"
      )

  case object ValveAdvancesOnAnyIdle
      extends KnownIssue(
        "When a channel goes idle (not the last active one), sparkwin's valve recomputes the " +
          "minimum over the active aligned channels; Flink's only does so when the channel going " +
          "idle held the output back (its watermark equals the last output). After a channel came " +
          "back active above the output (aligned, yet no output on activation in either valve), " +
          "the idling of another, unaligned channel advances sparkwin's watermark while Flink's " +
          "waits for the next watermark. DESIGN.md lists only the all-idle case.",
        "a step marking a channel idle, not every channel idle afterwards, with both watermarks " +
          "equal before it and only sparkwin's higher after it: nothing is compared from there"
      )

  val knownIssues: Seq[KnownIssue] = Seq(
    ValveAdvancesOnAnyIdle,
    StormWakeMissesTupleAtWatermark,
    TimeoutStateKeptWithoutClear,
    CountEvictorOrderAfterMerge,
    StormDeferredWindowTakesLaterTuple
  )

  val all: Seq[Exclusion] = deliberate ++ knownIssues
}

/** What an exclusion takes out of the comparison. */
sealed trait Scope
object Scope {

  /** Every pane of `key` from `step` on, and the key's leftover state. */
  final case class KeyFrom(key: String, step: Int) extends Scope

  /** The panes of one window of `key` from `step` on, and its leftover state. */
  final case class WindowFrom(key: String, start: Option[Long], end: Option[Long], step: Int) extends Scope

  /** Every pane and late element from `step` on (the watermarks differ from there). */
  final case class AllFrom(step: Int) extends Scope
}

/** One recognised case: the exclusion, and what it takes out. */
final case class Excused(exclusion: Exclusion, scope: Option[Scope])

/** A disagreement: `tag` groups it (shrinking keeps the tag), `step` is where it shows (the
  * end of input is the step after the last).
  */
final case class Problem(tag: String, step: Int, message: String) {
  override def toString: String = s"[$tag] step $step: $message"
}

final case class Verdict(problems: Vector[Problem], excused: Vector[Excused], panes: Int = 0, late: Int = 0) {
  def ok: Boolean = problems.isEmpty
}
