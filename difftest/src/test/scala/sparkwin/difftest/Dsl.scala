package sparkwin.difftest

/** Short names for writing sequences by hand (failures print sequences in this form). */
object Dsl {
  def El(key: String, ts: Long, value: Long): Step = Step.Element(Ev(key, ts, value))
  def Wm(wm: Long): Step = Step.Watermark(wm)
  def Pt(t: Long): Step = Step.ProcessingTime(t)
  val Tick: Step = Step.Tick
  def CWm(wm: Long, channel: Int): Step = Step.ChannelWatermark(wm, channel)
  def Idle(channel: Int): Step = Step.Idle(channel)
  def Active(channel: Int): Step = Step.Active(channel)

  def Tumbling(size: Long, offset: Long, eventTime: Boolean): Assigner =
    Assigner.Tumbling(size, offset, eventTime)
  def Sliding(size: Long, slide: Long, offset: Long, eventTime: Boolean): Assigner =
    Assigner.Sliding(size, slide, offset, eventTime)
  def Session(gap: Long): Assigner = Assigner.Session(gap)
  val DynamicSession: Assigner = Assigner.DynamicSession
  val Global: Assigner = Assigner.Global

  val EventTimeT: TriggerSpec = TriggerSpec.EventTime
  val ProcessingTimeT: TriggerSpec = TriggerSpec.ProcessingTime
  def CountT(n: Long): TriggerSpec = TriggerSpec.Count(n)
  def PurgingT(t: TriggerSpec): TriggerSpec = TriggerSpec.Purging(t)
  def ContinuousT(interval: Long): TriggerSpec = TriggerSpec.ContinuousEventTime(interval)
  def ContinuousPT(interval: Long): TriggerSpec = TriggerSpec.ContinuousProcessingTime(interval)
  def TimeoutT(nested: TriggerSpec, timeout: Long, reset: Boolean, clear: Boolean): TriggerSpec =
    TriggerSpec.ProcessingTimeout(nested, timeout, reset, clear)

  def CountEv(max: Long, after: Boolean): EvictorSpec = EvictorSpec.CountEv(max, after)
  def TimeEv(size: Long, after: Boolean): EvictorSpec = EvictorSpec.TimeEv(size, after)

  def SCount(n: Int): StormSize = StormSize.Count(n)
  def SDuration(ms: Int): StormSize = StormSize.Duration(ms)
}
