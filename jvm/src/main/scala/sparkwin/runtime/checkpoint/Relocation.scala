package sparkwin.runtime.checkpoint

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.{ArrayNode, ObjectNode}
import org.apache.hadoop.fs.Path

/** A checkpoint copied or moved to another place. Spark 4's `transformWithState` writes, in its
  * operator metadata (`state/<op>/_metadata/v2/<batch>`), the full path of each state schema
  * file, and a query restarted from a copy looks for them at the first place and fails ("File
  * ... does not exist"), as Spark's state reader does. The schema files came along with the
  * copy: relocating points the metadata at them, nothing else.
  */
object Relocation {
  private val mapper = new ObjectMapper()
  private val Marker = "/_stateSchema/"

  /** A schema path a metadata file names at another place, and the same file in this checkpoint. */
  final case class Stale(metadata: Path, named: String, here: String)

  /** Every schema path of the checkpoint's operators that names another place (`missing`: only
    * those whose file is not there, which Spark then fails to read).
    */
  def stale(files: CheckpointFiles, missing: Boolean = false): Seq[Stale] = {
    val fs = files.fileSystem
    files.operators.flatMap { op =>
      val dir = new Path(op.dir, "_metadata/v2")
      if (!fs.exists(dir)) Nil
      else
        fs.listStatus(dir)
          .iterator
          .map(_.getPath)
          .filter(p => Try(p.getName.toLong).isSuccess)
          .toSeq
          .flatMap { m =>
            schemaPaths(files, m).flatMap { named =>
              val at = named.indexOf(Marker)
              if (at < 0) None
              else {
                val here = new Path(op.dir, "_stateSchema/" + named.substring(at + Marker.length))
                val qualified = fs.makeQualified(here).toString
                if (qualified == named || !fs.exists(here) || (missing && fs.exists(new Path(named)))) None
                else Some(Stale(m, named, qualified))
              }
            }
          }
    }
  }

  /** Points every stale schema path at this checkpoint's copy of the file; how many. */
  def relocate(files: CheckpointFiles): Int = {
    val found = stale(files)
    found.groupBy(_.metadata).foreach { case (metadata, stale) =>
      val moved = stale.map(s => s.named -> s.here).toMap
      val lines = files.readText(metadata).split('\n')
      val root = CheckpointFiles.json(lines(1), metadata.toString).asInstanceOf[ObjectNode]
      Option(root.get("stateStoreInfo")).toSeq.flatMap(_.elements.asScala).foreach { store =>
        Option(store.get("stateSchemaFilePaths")).collect { case a: ArrayNode => a }.foreach { paths =>
          val now = paths.elements.asScala.map(p => moved.getOrElse(p.asText, p.asText)).toList
          paths.removeAll()
          now.foreach(p => paths.add(p))
        }
      }
      val text = (lines.head +: mapper.writeValueAsString(root) +: lines.drop(2).toSeq).mkString("\n")
      val fs = files.fileSystem
      val crc = new Path(metadata.getParent, s".${metadata.getName}.crc")
      if (fs.exists(crc)) fs.delete(crc, false)
      val temp = new Path(metadata.getParent, s".${metadata.getName}.${java.util.UUID.randomUUID()}.tmp")
      val out = fs.create(temp, true)
      try out.write(text.getBytes(StandardCharsets.UTF_8))
      finally out.close()
      fs.delete(metadata, false)
      if (!fs.rename(temp, metadata)) throw new java.io.IOException(s"could not rewrite $metadata")
    }
    found.size
  }

  /** Refuses to read a copied checkpoint Spark cannot find its schemas in, naming the fix. */
  def requireInPlace(files: CheckpointFiles, doing: String): Unit =
    stale(files, missing = true).headOption.foreach { s =>
      throw new CheckpointException(
        s"the checkpoint at ${files.location} was copied or moved from another place: Spark's " +
          s"operator metadata names its state schema at ${s.named}. Point it at this copy with " +
          s"sparkwin.state.relocate('${files.location}') (a query started on the checkpoint " +
          s"does it by itself), then $doing"
      )
    }

  private def schemaPaths(files: CheckpointFiles, metadata: Path): Seq[String] = {
    val lines = files.readText(metadata).split('\n')
    if (lines.length < 2) Nil
    else {
      val root = CheckpointFiles.json(lines(1), metadata.toString)
      Option(root.get("stateStoreInfo")).toSeq.flatMap(_.elements.asScala).flatMap { store =>
        Option(store.get("stateSchemaFilePaths")).toSeq.flatMap(_.elements.asScala).map(_.asText)
      }
    }
  }
}
