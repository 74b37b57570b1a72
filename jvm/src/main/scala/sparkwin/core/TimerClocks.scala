package sparkwin.core

/** Which clocks timers run on: what a trigger declares for its own timers, and an assigner for
  * its windows' (their ends and cleanup).
  */
final case class TimerClocks(event: Boolean, processing: Boolean)

object TimerClocks {
  val None: TimerClocks = TimerClocks(event = false, processing = false)
  val Event: TimerClocks = TimerClocks(event = true, processing = false)
  val Processing: TimerClocks = TimerClocks(event = false, processing = true)
}
