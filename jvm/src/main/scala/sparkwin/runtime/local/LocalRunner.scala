package sparkwin.runtime.local

import sparkwin.core.Record
import sparkwin.core.time.WatermarkStrategy
import sparkwin.operator.{Emitter, OperatorSpec}
import sparkwin.plan.TimePolicy
import sparkwin.runtime.Driver

/** The local runtime: a [[Driver]] over one [[LocalBackend]] that holds every key in memory, so
  * the packed layouts may run. The harness, the engine benchmark and the conformance tests run on
  * it; processing time only moves when the caller moves it. The harness passes its plan's
  * `policy` (`Plan.time`); a runner built from a spec alone gets the spec's (see [[Driver]]).
  */
final class LocalRunner(
    spec: OperatorSpec,
    keyOf: Record => Any,
    channels: Int,
    strategy: Option[WatermarkStrategy],
    output: Emitter,
    startProcessingTime: Long = 0L,
    timestampColumn: Int = -1,
    policy: TimePolicy = null
) extends Driver(
      spec,
      keyOf,
      timestampColumn,
      new LocalBackend,
      output,
      channels,
      strategy,
      startProcessingTime,
      policy
    ) {
  private val local = backend.asInstanceOf[LocalBackend]

  override protected def select(key: Any): Unit = local.setCurrentKey(key)

  def numStateEntries: Int = local.numStateEntries

  /** The local backend, for tests that look at keys with state. */
  def localBackend: LocalBackend = local
}
