package sparkwin.operator

/** What became of one element, as the operator decided it while taking it. The harness
  * reports it per element; the runtimes that only count read [[OperatorMetrics]] instead.
  * Names are contract.json's `harness.elementFates`.
  */
sealed abstract class ElementFate(val name: String)

object ElementFate {

  /** In at least one window. */
  case object Accepted extends ElementFate("accepted")

  /** Every window of it was gone: to the late side output. */
  case object Late extends ElementFate("late")

  /** Counted and gone: late without a late side output, in no window, or in a closed one. */
  case object Dropped extends ElementFate("dropped")

  /** Refused (a null or out-of-range timestamp, a bad dynamic gap): to the errors output. */
  case object Error extends ElementFate("error")

  val all: Seq[ElementFate] = Seq(Accepted, Late, Dropped, Error)
}
