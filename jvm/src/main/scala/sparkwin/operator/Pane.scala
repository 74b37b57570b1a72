package sparkwin.operator

/** When a pane fired relative to its window's end (Beam's PaneInfo.Timing). */
sealed abstract class PaneTiming(val name: String) {
  override def toString: String = name
}

object PaneTiming {
  case object Early extends PaneTiming("EARLY")
  case object OnTime extends PaneTiming("ON_TIME")
  case object Late extends PaneTiming("LATE")
}

/** Which firing of its window a result is: timing, index from 0, first and last flags. */
final case class PaneInfo(timing: PaneTiming, index: Long, isFirst: Boolean, isLast: Boolean)

object PaneInfo {

  /** The pane of a window that fires exactly once, at its end (sliced, session and Storm). */
  val Only: PaneInfo = PaneInfo(PaneTiming.OnTime, 0L, isFirst = true, isLast = true)
}
