package sparkwin.runtime.checkpoint

import scala.util.Try

import org.apache.spark.sql.SparkSession

import sparkwin.BuildInfo
import sparkwin.plan.{PlanDecoder, RunMode}
import sparkwin.runtime.spark.{Hosts, SparkShim}

/** Whether a query may start on a checkpoint, asked on the driver before it starts, and what it
  * leaves there when it may. Refused, each with what is wrong and what to do, before anything is
  * read into a task or written: a checkpoint of the other Spark line's runtime, one a newer
  * sparkwin wrote, a damaged one (its manifest or its state files), one written for another
  * pipeline, and one whose operator keeps Spark's timers on another clock than this release
  * (a processing-time pipeline of sparkwin 0.4, which [[Migration]] moves). An admitted query's
  * checkpoint then records this release and its pipelines ([[Manifest]]).
  */
object Admission {

  /** A sparkwin operator of the query about to start: its plan, key groups and Spark operator. */
  final case class Operator(planJson: String, keyGroups: Int, realTime: Boolean, runtime: String)

  def admit(spark: SparkSession, location: String, operators: Seq[Operator]): Unit = {
    val files = CheckpointFiles(location, spark.sparkContext.hadoopConfiguration)
    val manifest = Manifest.read(files)
    if (files.hasProgress) {
      check(spark, files, manifest, operators)
      Relocation.relocate(files)
    }
    Manifest.write(
      files,
      Manifest(
        BuildInfo.version,
        spark.version,
        operators.headOption.fold(SparkShim.Operators.head)(_.runtime),
        operators.map(o => Manifest.Operator(o.planJson, o.keyGroups))
      )
    )
  }

  private def check(
      spark: SparkSession,
      files: CheckpointFiles,
      manifest: Option[Manifest],
      operators: Seq[Operator]
  ): Unit = {
    val location = files.location
    manifest.foreach { m =>
      if (Manifest.compareVersions(m.sparkwin, BuildInfo.version) > 0)
        throw new CheckpointException(
          s"the checkpoint at $location was written by sparkwin ${m.sparkwin}, and this is sparkwin " +
            s"${BuildInfo.version}: a checkpoint resumes on the release that wrote it or a later one. " +
            s"Install sparkwin ${m.sparkwin} or newer to resume it"
        )
    }
    files.operators.foreach { op =>
      if (!SparkShim.Operators.contains(op.runtime)) {
        val line = if (op.runtime == Hosts.TransformWithState) "4.0 or newer" else "3.5"
        throw new CheckpointException(
          s"the checkpoint at $location holds state of sparkwin's Spark $line runtime (${op.runtime}), " +
            s"and this is Spark ${spark.version}, which keeps sparkwin's state on " +
            s"${SparkShim.Operators.mkString(" or ")}: resume the query on Spark $line, or start it " +
            "from a new checkpoint"
        )
      }
    }
    // The query was planned on the checkpoint's operator (HostChoice) unless its mode needs the
    // other one: a micro-batch checkpoint on flatMapGroupsWithState, resumed in real-time mode.
    files.operators.zip(operators).foreach { case (op, now) =>
      if (op.runtime != now.runtime)
        throw new CheckpointException(
          s"the checkpoint at $location keeps its state on Spark's ${op.runtime}, and this query runs " +
            s"on ${now.runtime}" + (if (now.realTime) " (real-time mode)" else "") + ": move the " +
            "checkpoint with sparkwin.state.migrate(checkpoint, newCheckpoint, pipeline) and resume " +
            "from the new one, or resume it as it was written"
        )
    }
    damage(files)
    manifest.foreach { m =>
      m.operators.zip(operators).zipWithIndex.foreach { case ((was, now), i) =>
        val before = StateShape.of(PlanDecoder.cached(was.planJson), RunMode.of(now.realTime))
        val after = StateShape.of(PlanDecoder.cached(now.planJson), RunMode.of(now.realTime))
        val changed = StateShape.changes(before, after)
        if (changed.nonEmpty)
          throw new CheckpointException(
            s"the checkpoint at $location was written for another pipeline" +
              (if (operators.size > 1) s" (its operator $i)" else "") + ": " + changed.mkString("; ") +
              ". Restore the pipeline as it was to resume, or start it from a new checkpoint"
          )
      }
    }
    // Spark refuses a transformWithState operator whose time mode changed, with its own words;
    // said here with the way out. sparkwin 0.4 kept processing time on Spark's timers.
    files.operators.zip(operators).foreach { case (op, now) =>
      val wanted = PlanDecoder.cached(now.planJson).timeIn(RunMode.of(now.realTime)).sparkTimeMode
      op.timeMode.map(sparkName).filter(_ != wanted).foreach { stored =>
        throw new CheckpointException(
          s"the checkpoint at $location keeps its timers in Spark's $stored time mode, and this " +
            s"release runs the pipeline in $wanted (sparkwin 0.5 moved processing time off Spark's " +
            "timers): move the checkpoint with sparkwin.state.migrate(checkpoint, newCheckpoint, " +
            "pipeline) and resume the query from the new one"
        )
      }
    }
  }

  /** A time mode as the policy names it (Spark's metadata writes `TimeMode.None` as `NoTime`). */
  private def sparkName(mode: String): String = if (mode == "NoTime") "None" else mode

  /** Refuses a checkpoint whose state cannot load the version its next batch needs: for each
    * operator and partition, a snapshot at or below it and every change after (Spark's RocksDB
    * and HDFS stores name their files `<version>.zip`/`.changelog` and `.snapshot`/`.delta`).
    * Files named otherwise (Spark's unique-id checkpoint format) are left to Spark.
    */
  private def damage(files: CheckpointFiles): Unit = files.lastCommitted.foreach { committed =>
    val version = committed + 1
    val fs = files.fileSystem
    files.operators.foreach { op =>
      val dir = new org.apache.hadoop.fs.Path(op.dir)
      fs.listStatus(dir).filter(s => s.isDirectory && Try(s.getPath.getName.toInt).isSuccess).foreach { p =>
        val names =
          fs.listStatus(p.getPath).iterator.map(_.getPath.getName).filterNot(_.startsWith(".")).toSet
        val versioned = names.flatMap { n =>
          val dot = n.indexOf('.')
          if (dot <= 0) None else Try(n.substring(0, dot).toLong).toOption.map(v => (v, n.substring(dot + 1)))
        }
        val snapshots = versioned.collect { case (v, "zip" | "snapshot") => v }
        val changes = versioned.collect { case (v, "changelog" | "delta") => v }
        if (versioned.nonEmpty && !loads(version, snapshots, changes))
          throw CheckpointFiles.damaged(
            s"${p.getPath} cannot load state version $version (the state after batch $committed, the " +
              "last one committed): a snapshot at or before it, or a change file of a version between, is missing"
          )
      }
    }
  }

  private def loads(version: Long, snapshots: Set[Long], changes: Set[Long]): Boolean = {
    var v = version
    while (v > 0) {
      if (snapshots.contains(v)) return true
      if (!changes.contains(v)) return false
      v -= 1
    }
    true
  }
}

/** A checkpoint a query cannot resume, or a reader cannot read, as it is: the message says why and
  * what to do (`sparkwin.errors.CheckpointError` in Python).
  */
class CheckpointException(message: String) extends IllegalStateException(message)
