package sparkwin.runtime.checkpoint

import java.nio.charset.StandardCharsets

import scala.util.Try

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

import sparkwin.runtime.spark.Hosts

/** What Spark's own files in a streaming checkpoint say, read on the driver and bounded (a
  * checkpoint is input from outside: a file is read up to [[MaxFileBytes]]): the batches planned
  * (`offsets/`) and committed (`commits/`), each stateful operator's folder under `state/` with
  * the runtime that wrote it and its partitions, and what the offset log's entries hold.
  */
final class CheckpointFiles private (val location: String, fs: FileSystem, root: Path) {
  import CheckpointFiles._

  /** Whether anything of a query is there (a planned batch or state). */
  def hasProgress: Boolean = lastPlanned.isDefined || fs.exists(new Path(root, "state"))

  /** The newest batch in the offset log, and in the commit log. */
  lazy val lastPlanned: Option[Long] = newestBatch("offsets")
  lazy val lastCommitted: Option[Long] = newestBatch("commits")

  private def newestBatch(dir: String): Option[Long] = {
    val path = new Path(root, dir)
    if (!fs.exists(path)) None
    else {
      val ids = fs.listStatus(path).iterator.map(_.getPath.getName).flatMap(n => Try(n.toLong).toOption)
      if (ids.hasNext) Some(ids.max) else None
    }
  }

  /** The stateful operators' folders (`state/<id>`), by id. */
  lazy val operators: Seq[StateOperator] = {
    val state = new Path(root, "state")
    if (!fs.exists(state)) Nil
    else
      fs.listStatus(state)
        .iterator
        .filter(_.isDirectory)
        .flatMap(s => Try(s.getPath.getName.toInt).toOption.map(id => operator(id, s.getPath)))
        .toSeq
        .sortBy(_.id)
  }

  private def operator(id: Int, dir: Path): StateOperator = {
    val metadata = new Path(dir, "_metadata/v2")
    val partitions = fs.listStatus(dir).count(s => s.isDirectory && Try(s.getPath.getName.toInt).isSuccess)
    val timeMode =
      if (!fs.exists(metadata)) None
      else {
        val newest = fs
          .listStatus(metadata)
          .iterator
          .map(_.getPath)
          .filter(p => Try(p.getName.toLong).isSuccess)
          .toSeq
          .sortBy(_.getName.toLong)
          .lastOption
        newest.flatMap(p => operatorTimeMode(readText(p), p.toString))
      }
    StateOperator(
      id,
      Hosts.stateIn(fs, dir),
      partitions,
      timeMode,
      dir.toString
    )
  }

  /** Batch `batch`'s offset log entry: its metadata and one line per source. */
  def offsets(batch: Long): OffsetEntry = {
    val path = new Path(root, s"offsets/$batch")
    val lines = readText(path).split('\n').toSeq
    if (lines.size < 2 || !lines.head.startsWith("v"))
      throw damaged(s"$path is not an offset log entry (it has no version line and metadata)")
    val meta = json(lines(1), path.toString)
    val conf = Option(meta.get("conf")).toSeq.flatMap { c =>
      val names = c.fieldNames()
      val out = Seq.newBuilder[(String, String)]
      while (names.hasNext) { val n = names.next(); out += n -> c.get(n).asText() }
      out.result()
    }.toMap
    OffsetEntry(
      lines.head,
      Option(meta.get("batchWatermarkMs")).map(_.asLong).getOrElse(0L),
      Option(meta.get("batchTimestampMs")).map(_.asLong).getOrElse(0L),
      conf,
      lines.drop(2).filter(_.nonEmpty)
    )
  }

  /** The file's text, refused past [[MaxFileBytes]]. */
  def readText(path: Path): String = {
    val status = fs.getFileStatus(path)
    if (status.getLen > MaxFileBytes)
      throw damaged(s"$path is ${status.getLen} bytes, more than a checkpoint's file of this kind holds")
    val in = fs.open(path)
    try {
      val bytes = new Array[Byte](status.getLen.toInt)
      in.readFully(bytes)
      new String(bytes, StandardCharsets.UTF_8)
    } catch {
      case e: org.apache.hadoop.fs.ChecksumException =>
        throw damaged(s"$path does not match its checksum file (${e.getMessage})")
    } finally in.close()
  }

  def exists(relative: String): Boolean = fs.exists(new Path(root, relative))
  def path(relative: String): Path = new Path(root, relative)
  def fileSystem: FileSystem = fs
}

object CheckpointFiles {

  /** The largest offset log entry, commit or operator metadata file read. */
  val MaxFileBytes: Long = 16L << 20

  private val mapper = new ObjectMapper()

  def apply(location: String, conf: Configuration): CheckpointFiles = {
    val root = new Path(location)
    new CheckpointFiles(location, root.getFileSystem(conf), root)
  }

  /** A stateful operator's folder: its id, the runtime that wrote it, its partitions and (for
    * `transformWithState`) the time mode its metadata records.
    */
  final case class StateOperator(
      id: Int,
      runtime: String,
      partitions: Int,
      timeMode: Option[String],
      dir: String
  )

  /** An offset log entry: version line, the batch's watermark and time, the session settings
    * Spark keeps with the checkpoint, and each source's offset (`-`: none yet).
    */
  final case class OffsetEntry(
      version: String,
      watermarkMs: Long,
      timestampMs: Long,
      conf: Map[String, String],
      sources: Seq[String]
  )

  /** The checkpoint is damaged: refused with what is wrong. */
  def damaged(what: String): CheckpointException =
    new CheckpointException(
      s"the checkpoint is damaged: $what. Restore it from a copy, or start the query from a new checkpoint"
    )

  private[checkpoint] def json(text: String, where: String): JsonNode =
    try {
      val node = mapper.readTree(text)
      if (node == null || !node.isObject) throw damaged(s"$where does not hold a JSON object")
      node
    } catch {
      case e: com.fasterxml.jackson.core.JacksonException =>
        throw damaged(s"$where is not valid JSON (${e.getOriginalMessage})")
    }

  /** The time mode a transformWithState operator's metadata file (`v2`, then JSON) records. */
  private def operatorTimeMode(text: String, where: String): Option[String] = {
    val lines = text.split('\n')
    if (lines.length < 2) None
    else {
      val props = Option(json(lines(1), where).get("operatorPropertiesJson")).map(_.asText())
      props.flatMap(p => Option(json(p, where).get("timeMode")).map(_.asText()))
    }
  }
}
