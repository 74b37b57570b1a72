package sparkwin.operator

import sparkwin.operator.algorithms.Algorithms
import sparkwin.core._
import sparkwin.operator._
import sparkwin.operator.store._

import scala.util.Random

import sparkwin.TestSupport._
import sparkwin.runtime.local.LocalBackend

/** Runs one random stream through a specialised algorithm and through the general one side by
  * side, and holds the specialised one to the general one: the same panes in the same order
  * after every step, the same late elements, the same counters, and no state left at the end.
  *
  * The stream has four keys, negative event times, disorder of up to 30 and watermarks a
  * little behind the clock, so elements are late, windows fire mid-stream and keys interleave.
  */
object DifferentialCheck {
  final class Run(val backend: LocalBackend, val out: Collect, val op: Operator)

  /** Counters every specialised operator keeps exactly as the generic one does. */
  val dataCounters: Seq[String] = Seq(
    "elementsIn",
    "droppedLate",
    "lateSideOutput",
    "panesFired",
    "windowsOpened",
    "windowsCleaned",
    "unfiredAtCleanup"
  )

  /** The two runs after the stream and a final watermark; `beforeElement` may change the
    * specialised run's state before each element (for example drop what it caches). `expected`
    * is the algorithm and layout the local runtime must choose for `spec` (the specialised run
    * uses it), `key` draws an element's key and `widen` may add fields.
    */
  def check(
      spec: OperatorSpec,
      expected: (Selection.Algorithm, Selection.Layout),
      seed: Long,
      steps: Int,
      counters: Seq[String] = dataCounters,
      beforeElement: (Run, Record, Random) => Unit = (_, _, _) => (),
      key: Random => String = rnd => s"k${rnd.nextInt(4)}",
      widen: (ArrayRecord, Random) => ArrayRecord = (r, _) => r
  ): (Run, Run) = {
    val special = run(spec, Some(expected))
    val generic = run(spec, None)
    val chosen = special.op.choice
    assert((chosen.algorithm, chosen.layout) == expected, s"$spec runs on $chosen")
    val rnd = new Random(seed)
    var clock = rnd.nextInt(50).toLong - 25
    for (_ <- 0 until steps) {
      if (rnd.nextInt(8) == 0) {
        val wm = clock - rnd.nextInt(20)
        Seq(special, generic).foreach(_.op.moveClocks(wm, ClockMove.Keep, ClockMove.Advance))
      } else {
        clock += rnd.nextInt(4)
        val r = widen(rec(key(rnd), rnd.nextInt(50).toLong - 10, clock - rnd.nextInt(30)), rnd)
        val ts = r.values(2).asInstanceOf[Long]
        beforeElement(special, r, rnd)
        Seq(special, generic).foreach { run =>
          run.backend.setCurrentKey(r.values(0)); run.op.processElement(r, ts)
        }
      }
      same(special.out.results.toList, generic.out.results.toList, "panes")
      same(special.backend.numKeysWithState, generic.backend.numKeysWithState, "keys with state")
    }
    Seq(special, generic).foreach(_.op.moveClocks(Long.MaxValue, ClockMove.Keep, ClockMove.Advance))
    same(special.out.results.toList, generic.out.results.toList, "panes")
    same(special.out.late.toList, generic.out.late.toList, "late elements")
    val (a, b) = (special.op.metrics.asMap, generic.op.metrics.asMap)
    counters.foreach(c => same(a(c), b(c), c))
    assert(special.out.results.nonEmpty, "the stream fired no pane")
    same(special.backend.numStateEntries, 0, "state entries left")
    same(special.backend.numKeysWithState, 0, "keys with state left")
    (special, generic)
  }

  /** A run on what the local runtime chooses (it must be `expected`), or on the general
    * algorithm when `expected` is None.
    */
  private def run(spec: OperatorSpec, expected: Option[(Selection.Algorithm, Selection.Layout)]): Run = {
    val backend = new LocalBackend
    val out = new Collect
    val general = Selection.Choice(Selection.Algorithm.General, Selection.Layout.Keyed, "the reference")
    val op =
      if (expected.isDefined) Algorithms.operator(spec, backend, out)
      else Algorithms.withChoice(spec, general, backend, out)
    new Run(backend, out, op)
  }

  private def same(actual: Any, expected: Any, what: String): Unit =
    if (actual != expected)
      throw new AssertionError(s"$what differ:\n  specialised: $actual\n  generic:     $expected")
}
