package sparkwin.core.trigger

import sparkwin.core.window.{GlobalWindows, WindowAssigner}

/** The trigger a pipeline gets when it names none, as in Flink. */
object DefaultTrigger {
  def forAssigner(assigner: WindowAssigner): Trigger = assigner match {
    case GlobalWindows => NeverTrigger
    case a if a.isEventTime => EventTimeTrigger
    case _ => ProcessingTimeTrigger
  }
}
