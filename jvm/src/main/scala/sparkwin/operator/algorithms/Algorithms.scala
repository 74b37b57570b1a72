package sparkwin.operator.algorithms

import sparkwin.core.window.StormWindows
import sparkwin.operator.{Emitter, OperatorSpec, Selection, WindowAlgorithm, WindowContext, WindowOperator}
import sparkwin.operator.general.GeneralAlgorithm
import sparkwin.operator.session.{KeyedSessions, PackedSessions}
import sparkwin.operator.slice.{KeyedSlices, PackedSlices}
import sparkwin.operator.store.KeyedBackend
import sparkwin.operator.storm.{StormAlgorithm, StormArrival}

/** Where the shell meets the algorithms: the one place that builds a [[WindowOperator]] over the
  * algorithm [[Selection]] chooses. The shell and the contexts the algorithms see live in
  * `operator` and name no algorithm; each algorithm's package names only them and `store`; only
  * this package names them all.
  */
object Algorithms {

  /** The operator for `spec` over `backend`, running what [[Selection]] chooses. */
  def operator(spec: OperatorSpec, backend: KeyedBackend, output: Emitter): WindowOperator =
    withChoice(spec, Selection.choose(spec, backend.packable), backend, output)

  /** The operator with a given algorithm and layout, for tests that hold one to another; the
    * choice must be one the spec can run.
    */
  def withChoice(
      spec: OperatorSpec,
      choice: Selection.Choice,
      backend: KeyedBackend,
      output: Emitter
  ): WindowOperator = new WindowOperator(spec, choice, backend, output, algorithm(_, choice))

  /** The algorithm that runs `choice` over the shell's `context`. */
  def algorithm(context: WindowContext, choice: Selection.Choice): WindowAlgorithm = {
    import Selection.{Algorithm, Layout}
    val assigner = context.spec.assigner
    (choice.algorithm, choice.layout) match {
      case (Algorithm.General, Layout.Keyed) => new GeneralAlgorithm(context)
      case (Algorithm.Sliced, Layout.Keyed) => new KeyedSlices(context)
      case (Algorithm.Sliced, Layout.Packed) => new PackedSlices(context)
      case (Algorithm.Session, Layout.Keyed) => new KeyedSessions(context)
      case (Algorithm.Session, Layout.Packed) => new PackedSessions(context)
      case (Algorithm.Storm, Layout.Keyed) => new StormAlgorithm(context, assigner.asInstanceOf[StormWindows])
      case (Algorithm.StormArrival, Layout.Keyed) =>
        new StormArrival(context, assigner.asInstanceOf[StormWindows])
      case (a, l) => throw new IllegalArgumentException(s"no $a algorithm in the $l layout")
    }
  }
}
