package sparkwin.difftest

import scala.collection.mutable
import scala.concurrent.duration._
import scala.util.Random
import scala.util.hashing.MurmurHash3

/** How many sequences, from which seed. CI runs a fixed seed; `SPARKWIN_DIFF_SEQUENCES=n` runs n
  * sequences per family, `SPARKWIN_DIFF_SEED=s` another seed, and
  * `SPARKWIN_DIFF_REPLAY=<family>@<seed>` one sequence, printed step by step.
  */
object Settings {
  val sequences: Option[Int] = sys.env.get("SPARKWIN_DIFF_SEQUENCES").map(_.trim.toInt)
  val seed: Long = sys.env.get("SPARKWIN_DIFF_SEED").map(_.trim.toLong).getOrElse(20261124L)
  val replay: Option[(String, Long)] = sys.env.get("SPARKWIN_DIFF_REPLAY").map { s =>
    val at = s.lastIndexOf('@')
    (s.substring(0, at), s.substring(at + 1).toLong)
  }

  /** The seed of sequence `i` of a family: independent of the other families and of `n`. */
  def seedOf(family: String, i: Int): Long =
    (seed * 0x9e3779b97f4a7c15L) ^ (MurmurHash3.stringHash(family).toLong << 32) ^ i.toLong
}

/** Tallies what a family's sequences exercised: panes compared, exclusions recognised. */
final class Tally {
  var sequences = 0
  var steps = 0L
  var panes = 0L
  var late = 0L
  val excused = mutable.TreeMap.empty[String, Int]
  def add(v: Verdict): Unit = {
    panes += v.panes
    late += v.late
    v.excused.groupBy(_.exclusion.name).foreach { case (k, xs) =>
      excused(k) = excused.getOrElse(k, 0) + xs.size
    }
  }
  def summary(name: String, millis: Long): String =
    f"$name%-40s $sequences%5d sequences, $steps%6d steps, $panes%6d panes, $late%4d late, ${millis / 1000.0}%6.1f s" +
      (if (excused.isEmpty) ""
       else excused.map { case (k, n) => s"$k x$n" }.mkString("; excused: ", ", ", ""))
}

trait DiffSuiteSupport extends munit.FunSuite {
  override val munitTimeout: Duration = 2.hours

  protected def failureReport(
      family: String,
      seed: Long,
      failures: Int,
      total: Int,
      tags: Map[String, Int],
      pipelineCode: String,
      steps: Vector[Step],
      problems: Vector[Problem],
      trace: String
  ): String =
    s"""$family: $failures of $total sequences disagree (${tags
        .map { case (t, n) => s"$t x$n" }
        .mkString(", ")})
       |first failing seed $seed, rerun with SPARKWIN_DIFF_REPLAY='$family@$seed'
       |minimal sequence (${steps.size} steps):
       |  $pipelineCode
       |  ${Code.steps(steps)}
       |problems:
       |${problems.take(8).map("  " + _).mkString("\n")}
       |step by step:
       |$trace""".stripMargin
}

object Traces {
  def flink(r: FlinkDiff.Run): String = {
    val lines = r.sparkwin.indices.map { i =>
      val what =
        if (i < r.steps.size) r.steps(i).code else if (i == r.steps.size) "End" else "End of processing time"
      val sw = r.sparkwin(i)
      val fl = r.flink(i)
      def late(l: Vector[Ev]) = if (l.isEmpty) "" else s" late ${l.map(_.code).mkString(",")}"
      s"  #$i $what\n      sparkwin: ${sw.panes.mkString("; ")}${late(sw.late)}\n      Flink:    " +
        s"${fl.panes.map(p => s"${p.pane} <${p.cause}>").mkString("; ")}${late(fl.late)}"
    }
    (lines :+ s"  metrics: ${r.sparkwinMetrics}; state left: sparkwin ${r.sparkwinState}, Flink ${r.flinkState}")
      .mkString("\n")
  }

  def storm(r: StormDiff.Run): String =
    (0 to r.steps.size)
      .map { i =>
        val what = if (i < r.steps.size) r.steps(i).code else "End"
        val sw = r.sparkwin(i)
        val st = r.storm(i)
        def late(l: Vector[Ev]) = if (l.isEmpty) "" else s" late ${l.map(_.code).mkString(",")}"
        s"  #$i $what\n      sparkwin: ${sw.panes.mkString("; ")}${late(sw.late)}\n      Storm:    " +
          s"${st.panes.map(p => s"${p.pane}${if (p.repeat) " (repeat)" else ""}").mkString("; ")}${late(st.late)}"
      }
      .mkString("\n")
}

/** Random sequences per family through Flink 2.1.0's WindowOperator and sparkwin's engine. */
class FlinkDifferentialSuite extends DiffSuiteSupport {
  private val defaults: Map[String, Int] = Map().withDefaultValue(300)

  for (family <- Families.flink) {
    test(s"${family.name}: sparkwin agrees with Flink's WindowOperator") {
      val n = Settings.sequences.getOrElse(defaults(family.name))
      val tally = new Tally
      val failing = mutable.ArrayBuffer.empty[(Long, Pipeline, Vector[Step], Verdict)]
      val started = System.nanoTime()
      for (i <- 0 until n) {
        val seed = Settings.seedOf(family.name, i)
        val r = new Random(seed)
        val p = family.pipeline(r)
        val steps = family.steps(r, p)
        val v = FlinkDiff.check(p, steps)
        tally.sequences += 1
        tally.steps += steps.size
        tally.add(v)
        if (!v.ok) failing += ((seed, p, steps, v))
      }
      val millis = (System.nanoTime() - started) / 1000000
      println(tally.summary(s"Flink ${family.name}", millis))
      if (failing.nonEmpty) {
        val (seed, p, steps, v) = failing.head
        val tag = v.problems.head.tag
        val small = Shrink(steps, s => FlinkDiff.check(p, s).problems.exists(_.tag == tag))
        val rerun = FlinkDiff.run(p, small)
        val problems = rerun.fold(Vector(_), FlinkDiff.compare(_).problems)
        val tags = failing.flatMap(_._4.problems.map(_.tag).distinct).groupBy(identity).map { case (t, xs) =>
          t -> xs.size
        }
        fail(
          failureReport(
            family.name,
            seed,
            failing.size,
            n,
            tags,
            p.code,
            small,
            problems,
            rerun.fold(_.toString, Traces.flink)
          )
        )
      }
    }
  }

  Settings.replay.filter { case (f, _) => Families.flink.exists(_.name == f) }.foreach { case (name, seed) =>
    test(s"replay $name@$seed") {
      val family = Families.flink.find(_.name == name).get
      val r = new Random(seed)
      val p = family.pipeline(r)
      val steps = family.steps(r, p)
      println(s"${p.code}\n${Code.steps(steps)}")
      FlinkDiff.run(p, steps) match {
        case Left(problem) => println(problem)
        case Right(run) =>
          println(Traces.flink(run))
          val v = FlinkDiff.compare(run)
          println(v.problems.mkString("\n"))
          println(v.excused.map(e => s"${e.exclusion.name} ${e.scope.getOrElse("")}").mkString("\n"))
      }
    }
  }
}

/** Random sequences per family through Storm 2.8.1's WindowManager and sparkwin's engine. */
class StormDifferentialSuite extends DiffSuiteSupport {
  private val defaults: Map[String, Int] = Map().withDefaultValue(300)

  for (family <- StormFamilies.all) {
    test(s"${family.name}: sparkwin agrees with Storm's WindowManager") {
      val n = Settings.sequences.getOrElse(defaults(family.name))
      val tally = new Tally
      val failing = mutable.ArrayBuffer.empty[(Long, StormPipeline, Vector[Step], Verdict)]
      val started = System.nanoTime()
      for (i <- 0 until n) {
        val seed = Settings.seedOf(family.name, i)
        val r = new Random(seed)
        val p = family.pipeline(r)
        val steps = StormFamilies.steps(r, p)
        val v = StormDiff.check(p, steps, family.timestamps)
        tally.sequences += 1
        tally.steps += steps.size
        tally.add(v)
        if (!v.ok) failing += ((seed, p, steps, v))
      }
      val millis = (System.nanoTime() - started) / 1000000
      println(tally.summary(family.name, millis))
      if (failing.nonEmpty) {
        val (seed, p, steps, v) = failing.head
        val tag = v.problems.head.tag
        val small = Shrink(steps, s => StormDiff.check(p, s, family.timestamps).problems.exists(_.tag == tag))
        val rerun = StormDiff.run(p, small, family.timestamps)
        val problems = rerun.fold(Vector(_), StormDiff.compare(_, family.timestamps).problems)
        val tags = failing.flatMap(_._4.problems.map(_.tag).distinct).groupBy(identity).map { case (t, xs) =>
          t -> xs.size
        }
        fail(
          failureReport(
            family.name,
            seed,
            failing.size,
            n,
            tags,
            p.code,
            small,
            problems,
            rerun.fold(_.toString, Traces.storm)
          )
        )
      }
    }
  }
}
