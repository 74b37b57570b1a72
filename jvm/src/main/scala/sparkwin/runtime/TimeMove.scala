package sparkwin.runtime

import sparkwin.operator.ClockMove

/** A move of a driver's clocks. Every runtime moves time through one door, [[Driver.moveClocks]],
  * which turns each move into moves of the operator's own door
  * ([[sparkwin.operator.Operator.moveClocks]]); what differs between moves is only what stands in
  * front of the operator (the valve, the periodic ticks, the plan's [[sparkwin.plan.TimePolicy]]).
  */
sealed trait TimeMove

object TimeMove {

  /** A watermark arrives on an input channel; the valve decides whether event time moves. */
  final case class Watermark(watermark: Long, channel: Int = 0) extends TimeMove

  /** Processing time passes to `time`: periodic watermark emissions and processing-time timers
    * happen in time order on the way.
    */
  final case class ProcessingTime(time: Long) extends TimeMove

  /** The key a micro-batch runtime loaded meets its batch's clocks (the processing time `now` and
    * the watermark its rows meet), as the driver's policy says; its processing-time timers due
    * at `now` fire at `settled`, the watermark its group's last call ended at, when the runtime
    * knows it ([[Unsettled]]: at whatever the engine's clock holds).
    */
  final case class EnterKey(now: Long, watermark: Long, settled: Long = Unsettled) extends TimeMove

  /** [[EnterKey]]'s `settled` when the runtime does not know it (no live watermark is +inf). */
  final val Unsettled = Long.MaxValue

  /** The input ended: event time jumps to +infinity and every event-time window fires. */
  case object EndOfInput extends TimeMove

  /** The operator's clocks directly, not through a channel (replay's watermark timeline, an
    * element's processing time, a batch's start): `Long.MinValue` ([[ClockMove.Keep]]) leaves a
    * clock where it is.
    */
  final case class Clocks(watermark: Long, processingTime: Long, move: ClockMove) extends TimeMove
}
