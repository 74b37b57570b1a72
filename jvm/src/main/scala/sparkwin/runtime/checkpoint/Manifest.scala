package sparkwin.runtime.checkpoint

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.hadoop.fs.Path

/** sparkwin's own record in a checkpoint it knows (`<checkpoint>/sparkwin/manifest.json`): which
  * release and Spark last started a query on it, the runtime that keeps its state, and each
  * sparkwin operator's plan with its key groups, in Spark's operator order. A query refuses a
  * checkpoint a newer release wrote, or one written for another pipeline, before it starts
  * ([[Admission]]); the state reader takes the plans from here, so it needs only the checkpoint.
  * Checkpoints of sparkwin 0.4 have none: their checks are the state codecs' own.
  *
  * Format 1, JSON: `format`, `sparkwin`, `spark`, `runtime`, `operators` (each `plan`, the plan's
  * JSON object, and `keyGroups`).
  */
final case class Manifest(
    sparkwin: String,
    spark: String,
    runtime: String,
    operators: Seq[Manifest.Operator]
) {
  def json: String = {
    val root = Manifest.mapper.createObjectNode()
    root.put("format", Manifest.Format)
    root.put("sparkwin", sparkwin)
    root.put("spark", spark)
    root.put("runtime", runtime)
    val ops = root.putArray("operators")
    operators.foreach { o =>
      val node = ops.addObject()
      node.set[ObjectNode]("plan", Manifest.mapper.readTree(o.planJson))
      node.put("keyGroups", o.keyGroups)
    }
    Manifest.mapper.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n"
  }
}

object Manifest {
  val Format = 1

  /** Where it lives, relative to the checkpoint's root. */
  val File = "sparkwin/manifest.json"

  private val mapper = new ObjectMapper()

  final case class Operator(planJson: String, keyGroups: Int)

  /** The manifest of `files`' checkpoint, if it has one; a damaged one is refused. */
  def read(files: CheckpointFiles): Option[Manifest] =
    if (!files.exists(File)) None
    else {
      val where = files.path(File).toString
      val root = CheckpointFiles.json(files.readText(files.path(File)), where)
      def text(name: String): String =
        Option(root.get(name))
          .filter(_.isTextual)
          .map(_.asText)
          .getOrElse(
            throw CheckpointFiles.damaged(s"$where has no '$name'")
          )
      val format = Option(root.get("format")).filter(_.canConvertToInt).map(_.asInt)
      if (!format.contains(Format))
        throw CheckpointFiles.damaged(
          s"$where is of format ${format.fold("(none)")(_.toString)}, this sparkwin reads format $Format" +
            " (a newer release may write another: it says which below when it does)"
        )
      val (release, spark, runtime) = (text("sparkwin"), text("spark"), text("runtime"))
      val operators = Option(root.get("operators"))
        .filter(_.isArray)
        .map(_.elements.asScala.toSeq)
        .getOrElse(
          throw CheckpointFiles.damaged(s"$where has no 'operators'")
        )
      Some(
        Manifest(
          release,
          spark,
          runtime,
          operators.map { o =>
            val plan = Option(o.get("plan"))
              .filter(_.isObject)
              .getOrElse(
                throw CheckpointFiles.damaged(s"$where names an operator without its plan")
              )
            val groups = Option(o.get("keyGroups"))
              .filter(_.canConvertToInt)
              .map(_.asInt)
              .getOrElse(
                throw CheckpointFiles.damaged(s"$where names an operator without its key groups")
              )
            Operator(mapper.writeValueAsString(plan), groups)
          }
        )
      )
    }

  /** Writes `manifest` (a temporary file renamed into place: a reader never sees half). */
  def write(files: CheckpointFiles, manifest: Manifest): Unit = {
    val fs = files.fileSystem
    val target = files.path(File)
    val temp = new Path(target.getParent, s".manifest-${java.util.UUID.randomUUID()}.tmp")
    fs.mkdirs(target.getParent)
    val out = fs.create(temp, true)
    try out.write(manifest.json.getBytes(StandardCharsets.UTF_8))
    finally out.close()
    fs.delete(target, false)
    if (!fs.rename(temp, target))
      throw new java.io.IOException(s"could not write sparkwin's manifest to $target")
  }

  /** Release order of two sparkwin versions (`0.5.0`, `0.5.0.dev1`, `1.2.3rc1`): the numbers first,
    * and a development or pre-release below its release. Negative: `a` is older.
    */
  def compareVersions(a: String, b: String): Int = {
    def parts(v: String): (Seq[Int], Int, Int) = {
      val Release = """(\d+(?:\.\d+)*)(?:(\.dev|a|b|rc)(\d+))?.*""".r
      v.trim match {
        case Release(release, tag, n) =>
          val rank = tag match {
            case null => 4
            case ".dev" => 0
            case "a" => 1
            case "b" => 2
            case "rc" => 3
          }
          (
            release.split('.').map(_.toInt).toSeq,
            rank,
            Option(n).flatMap(x => Try(x.toInt).toOption).getOrElse(0)
          )
        case _ => (Seq(0), 0, 0)
      }
    }
    val (na, ra, xa) = parts(a)
    val (nb, rb, xb) = parts(b)
    val width = math.max(na.size, nb.size)
    val numbers = na.padTo(width, 0).zip(nb.padTo(width, 0)).map { case (x, y) => Integer.compare(x, y) }
    numbers.find(_ != 0).getOrElse(if (ra != rb) Integer.compare(ra, rb) else Integer.compare(xa, xb))
  }
}
