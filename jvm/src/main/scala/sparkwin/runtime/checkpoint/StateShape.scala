package sparkwin.runtime.checkpoint

import sparkwin.operator.Selection
import sparkwin.operator.store.KeyStateCodec
import sparkwin.plan.{Plan, RunMode}

/** What of a pipeline decides how its state is laid out, each part by name: a checkpoint resumes
  * only under a pipeline whose parts are the same. These are the parts the state's codecs refuse
  * one by one while a query runs (a key's state names its algorithm, aggregates and trigger
  * state; a group's record its channels); asked of two plans before a query starts, they refuse
  * a checkpoint written for another pipeline at once, naming what changed.
  */
object StateShape {

  def of(plan: Plan, mode: RunMode = RunMode.MicroBatch): Seq[(String, String)] = {
    val spec = plan.spec
    val choice = Selection.choose(spec, packable = false)
    val policy = plan.timeIn(mode)
    Seq(
      "key columns" -> plan.keys.fields.map(f => s"${f.name} ${f.dataType.simpleString}").mkString(", "),
      "algorithm" -> choice.algorithm.name,
      "aggregates" -> (if (plan.isProcess) "a process function"
                       else spec.aggregates.map(_.alias).mkString(", ")),
      "aggregate columns" -> KeyStateCodec.aggregateSignature(spec.aggregates).toString,
      "trigger state" -> (if (choice.algorithm != Selection.Algorithm.General) "none"
                          else {
                            val layout = spec.triggerLayout
                            layout.names.zip(layout.versions).map { case (n, v) => s"$n v$v" }.mkString(", ")
                          }),
      "slices" -> (if (choice.algorithm == Selection.Algorithm.Sliced) s"${Selection.sliceWidth(spec)} ms"
                   else "none"),
      "event time" -> (if (policy.ownWatermark) "the key groups' own (per channel)"
                       else if (plan.inheritsWatermark) "the upstream pipeline's"
                       else "Spark's watermark")
    )
  }

  /** What changed from `before` to `after`, one phrase per part ("its aggregates (were count,
    * sum_amount; now count)"); empty when nothing did.
    */
  def changes(before: Seq[(String, String)], after: Seq[(String, String)]): Seq[String] = {
    val was = before.toMap
    after.collect {
      case (name, now) if was.get(name).exists(_ != now) =>
        if (name == "aggregate columns") "the columns its aggregates read"
        else s"its $name (${was(name)}; now $now)"
    }
  }
}
