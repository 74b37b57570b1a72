package sparkwin.runtime.spark.query

import java.nio.charset.StandardCharsets

import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.spark.sql.SparkSession

import sparkwin.plan.PlanException

/** How many key groups a streaming query spreads its keys over, and where that number came from
  * (`describe()` shows both). As Flink's maximum parallelism, the number is chosen when a query
  * first starts and kept in its checkpoint, so a restart never changes it (DESIGN.md, "How many
  * key groups").
  */
final case class KeyGroupCount(count: Int, origin: String)

object KeyGroupCount {

  /** The Spark conf that sets the number explicitly. */
  val Conf = "spark.sparkwin.keyGroups"

  /** The most key groups a query may have (Flink's bound on maximum parallelism). */
  val Max = 32768

  /** The fewest the default gives: the fixed number of every checkpoint written before the count
    * was kept, which small runs keep.
    */
  val Floor = 128

  /** Where a checkpoint keeps its count, relative to the checkpoint's root. */
  val KeptFile = "sparkwin/keyGroups"

  private val ShufflePartitions = "spark.sql.shuffle.partitions"

  /** What a query's checkpoint says about its key groups. */
  sealed trait Checkpoint {

    /** Where it is, if known. */
    def place: Option[String] =
      this match {
        case Checkpoint.Unknown => None
        case Checkpoint.Fresh(at) => Some(at)
        case Checkpoint.Legacy(at) => Some(at)
        case Checkpoint.Kept(at, _) => Some(at)
      }
  }
  object Checkpoint {

    /** sparkwin does not know the checkpoint (`toDF()`, Spark Connect). */
    case object Unknown extends Checkpoint

    /** A checkpoint with no batch planned yet: the count is chosen now, and kept. */
    final case class Fresh(location: String) extends Checkpoint

    /** A checkpoint with progress and no kept count: written before sparkwin kept it. */
    final case class Legacy(location: String) extends Checkpoint

    /** A checkpoint with progress and its kept count. */
    final case class Kept(location: String, count: Int) extends Checkpoint
  }

  /** The default for a stateful stage of `partitions` tasks: the smallest multiple of it that is
    * at least [[Floor]]. Spark fixes a stateful stage's partitions for the life of a checkpoint
    * (it restores `spark.sql.shuffle.partitions` from it), so unlike Flink's default there is no
    * headroom to leave; a multiple gives every partition the same number of groups
    * ([[KeyGroupLabels]]). At most [[Max]].
    */
  def defaultFor(partitions: Int): Int =
    if (partitions >= Max) Max
    else partitions * ((Floor + partitions - 1) / partitions)

  /** The rule, without Spark: a real-time query's default is one group per shuffle partition (a
    * watermark summary is a row per key group, and in that mode every row is its own call, so
    * more groups batch nothing and only multiply summaries); the kept count wins; an explicit setting that contradicts it is
    * refused, as Flink refuses a changed maximum parallelism on restore; a checkpoint written
    * before the count was kept has [[Floor]] unless the user sets what it was written with (the
    * groups' records check it).
    */
  def choose(
      explicit: Option[Int],
      partitions: Int,
      checkpoint: Checkpoint,
      realTime: Boolean = false
  ): KeyGroupCount = {
    def fromSession =
      explicit match {
        case Some(n) => KeyGroupCount(n, Conf)
        case None if realTime =>
          KeyGroupCount(
            math.min(partitions, Max),
            s"real-time default: one per shuffle partition ($ShufflePartitions=$partitions)"
          )
        case None => KeyGroupCount(defaultFor(partitions), s"default for $ShufflePartitions=$partitions")
      }
    checkpoint match {
      case Checkpoint.Unknown => fromSession
      case Checkpoint.Fresh(_) => fromSession
      case Checkpoint.Legacy(_) =>
        explicit match {
          case Some(n) => KeyGroupCount(n, Conf)
          case None => KeyGroupCount(Floor, "a checkpoint from before sparkwin kept the count: 128")
        }
      case Checkpoint.Kept(location, kept) =>
        explicit.filter(_ != kept).foreach { n =>
          throw new PlanException(
            s"the checkpoint at $location keeps $kept key groups (chosen when its query first " +
              s"started), and $Conf is $n: unset $Conf (spark.conf.unset('$Conf')) or set it to " +
              s"$kept to resume this query, or start it from a new checkpoint"
          )
        }
        KeyGroupCount(kept, s"kept in the checkpoint ($KeptFile)")
    }
  }

  /** The count of a streaming query on `spark` whose checkpoint is `checkpoint` (read once when
    * the query is planned, [[at]]); a fresh checkpoint keeps it from now on.
    */
  def of(spark: SparkSession, checkpoint: Checkpoint, realTime: Boolean): KeyGroupCount = {
    val chosen = peek(spark, checkpoint, realTime)
    checkpoint match {
      case Checkpoint.Fresh(at) => keep(spark, at, chosen.count)
      case _ =>
    }
    chosen
  }

  /** What `of` would answer, without keeping anything: for `describe()`. */
  def peek(spark: SparkSession, checkpoint: Checkpoint, realTime: Boolean): KeyGroupCount =
    choose(explicit(spark), partitions(spark), checkpoint, realTime)

  /** The checkpoint at `location` (None: one sparkwin cannot see), read. */
  def at(spark: SparkSession, location: Option[String]): Checkpoint =
    location.map(read(spark, _)).getOrElse(Checkpoint.Unknown)

  /** `spark.sparkwin.keyGroups` if the session sets it, validated. */
  def explicit(spark: SparkSession): Option[Int] =
    spark.conf.getOption(Conf).map { text =>
      scala.util.Try(text.trim.toInt).toOption.filter(n => n >= 1 && n <= Max).getOrElse {
        throw new PlanException(
          s"$Conf must be a whole number from 1 to $Max, got '$text': set it with " +
            "spark.conf.set(\"" + Conf + "\", \"" + Floor + "\"), or unset it for a number that " +
            s"follows $ShufflePartitions"
        )
      }
    }

  private def partitions(spark: SparkSession): Int =
    scala.util.Try(spark.conf.get(ShufflePartitions).trim.toInt).toOption.filter(_ >= 1).getOrElse(1)

  /** The checkpoint's state: progress is a planned batch (`offsets/`) or state (`state/`); the
    * kept count binds only once there is progress, so a query that never started may choose again.
    */
  def read(spark: SparkSession, location: String): Checkpoint = {
    val root = new Path(location)
    val fs = root.getFileSystem(spark.sparkContext.hadoopConfiguration)
    val progress = hasFiles(fs, new Path(root, "offsets")) || fs.exists(new Path(root, "state"))
    val kept = new Path(root, KeptFile)
    if (!progress) Checkpoint.Fresh(location)
    else if (!fs.exists(kept)) Checkpoint.Legacy(location)
    else Checkpoint.Kept(location, parse(readText(fs, kept), kept.toString))
  }

  private def hasFiles(fs: FileSystem, dir: Path): Boolean =
    fs.exists(dir) && fs.listStatus(dir).exists(s => !s.getPath.getName.startsWith("."))

  /** The kept file's text: `keyGroups=<n>` on its own line. */
  private[spark] def text(count: Int): String = s"keyGroups=$count\n"

  private[spark] def parse(text: String, where: String): Int =
    text
      .split('\n')
      .iterator
      .map(_.trim)
      .collectFirst { case line if line.startsWith("keyGroups=") => line.stripPrefix("keyGroups=") }
      .flatMap(v => scala.util.Try(v.toInt).toOption)
      .filter(n => n >= 1 && n <= Max)
      .getOrElse(
        throw new PlanException(
          s"$where does not hold a key-group count sparkwin can read (keyGroups=<1 to $Max>): " +
            "restore the file, or start the query from a new checkpoint"
        )
      )

  /** The kept file's text, its first [[MaxKeptBytes]] at most: a checkpoint is input from
    * outside, and the count is one short line.
    */
  private def readText(fs: FileSystem, path: Path): String = {
    val in = fs.open(path)
    try {
      val buffer = new Array[Byte](MaxKeptBytes)
      var n = 0
      var read = 0
      while (read >= 0 && n < buffer.length) {
        read = in.read(buffer, n, buffer.length - n)
        if (read > 0) n += read
      }
      new String(buffer, 0, n, StandardCharsets.UTF_8)
    } finally in.close()
  }

  private[spark] val MaxKeptBytes = 4096

  /** Writes the count (a temporary file renamed into place, so a reader never sees half). */
  private[runtime] def keep(spark: SparkSession, location: String, count: Int): Unit = {
    val root = new Path(location)
    val fs = root.getFileSystem(spark.sparkContext.hadoopConfiguration)
    val target = new Path(root, KeptFile)
    val temp = new Path(target.getParent, s".keyGroups-${java.util.UUID.randomUUID()}.tmp")
    fs.mkdirs(target.getParent)
    val out = fs.create(temp, true)
    try out.write(text(count).getBytes(StandardCharsets.UTF_8))
    finally out.close()
    fs.delete(target, false)
    if (!fs.rename(temp, target))
      throw new java.io.IOException(s"could not write sparkwin's key-group count to $target")
  }
}
