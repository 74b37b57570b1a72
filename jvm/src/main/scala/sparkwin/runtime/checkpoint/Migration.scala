package sparkwin.runtime.checkpoint

import java.nio.charset.StandardCharsets

import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.hadoop.fs.{FileSystem, FileUtil, Path}
import org.apache.spark.sql.{DataFrame, Encoders, Row, SparkSession}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.streaming.Trigger
import org.apache.spark.sql.types.{BinaryType, IntegerType, StructField, StructType}

import sparkwin.BuildInfo
import sparkwin.plan.PlanDecoder
import sparkwin.runtime.spark.{Hosts, SparkShim}
import sparkwin.runtime.spark.query.{ClockSource, KeyGroupCount}
import sparkwin.runtime.spark.task.{GroupTable, LoopSpec}

/** Moves a stopped query's checkpoint where Spark itself refuses the restart: from sparkwin's
  * Spark 3.5 runtime (`flatMapGroupsWithState`) to Spark 4's (`transformWithState`), and across
  * a change of the operator's time mode (sparkwin 0.4 kept processing time on Spark's timers;
  * later releases keep it on their own clock, a source more). It writes a new checkpoint and
  * leaves the old one as it was.
  *
  * What it keeps: the query's id, every batch's offsets and commits (so the sources resume where
  * they were, and outputs keep their batch ids), the sources' own logs, and the sparkwin state of
  * the last committed batch, entry for entry. What it writes anew: the operator's state files,
  * by running Spark's operator for one batch over those entries ([[SparkShim.importState]]),
  * renumbered as the state after the last committed batch; each key group's Spark timer, as this
  * release's policy wants it; the clock source's offset where the pipeline now reads one; the
  * offset log's session settings that the new state was written with; sparkwin's manifest. Spark
  * keeps no other state of a sparkwin query.
  */
object Migration {
  private val mapper = new ObjectMapper()
  private val Seed = "_sparkwin_migrate_seed"
  private val ChangelogConf = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
  private val ProviderConf = "spark.sql.streaming.stateStore.providerClass"
  private val RocksDbProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

  /** Moves the checkpoint at `source` to a new one at `target`, for the query of `df` (the
    * pipeline's union as it will run, planned with the source checkpoint's key groups). Returns
    * what it did, as JSON.
    */
  def migrate(df: DataFrame, source: String, target: String): String = {
    val spark = df.sparkSession
    val hadoop = spark.sparkContext.hadoopConfiguration
    val specs = SparkShim.operatorsOf(df)
    if (specs.size != 1)
      throw new CheckpointException(
        s"moving a checkpoint takes a query with one sparkwin operator; this one has ${specs.size} " +
          "(chained pipelines): start it from a new checkpoint"
      )
    val spec = specs.head
    val from = CheckpointFiles(source, hadoop)
    val committed = from.lastCommitted.getOrElse(
      throw new CheckpointException(
        s"the checkpoint at $source has no committed batch: there is nothing to move"
      )
    )
    val planned = from.lastPlanned.getOrElse(committed)
    Relocation.requireInPlace(from, "move it")
    val op = from.operators match {
      case Seq(o) if o.id == 0 => o
      case ops =>
        throw new CheckpointException(
          s"the checkpoint at $source has ${ops.size} stateful operators (${ops.map(_.id).mkString(", ")}); " +
            "moving one takes exactly sparkwin's"
        )
    }
    val to = CheckpointFiles(target, hadoop)
    val fs = to.fileSystem
    if (fs.exists(new Path(target)) && fs.listStatus(new Path(target)).nonEmpty)
      throw new CheckpointException(s"the new checkpoint's place $target is not empty: name a new folder")
    Manifest.read(from).foreach { m =>
      if (Manifest.compareVersions(m.sparkwin, BuildInfo.version) > 0)
        throw new CheckpointException(
          s"the checkpoint at $source was written by sparkwin ${m.sparkwin}, and this is sparkwin " +
            s"${BuildInfo.version}: install sparkwin ${m.sparkwin} or newer to move it"
        )
      m.operators.headOption.foreach { was =>
        val changed = StateShape.changes(
          StateShape.of(PlanDecoder.cached(was.planJson), spec.mode),
          StateShape.of(PlanDecoder.cached(spec.planJson), spec.mode)
        )
        if (changed.nonEmpty)
          throw new CheckpointException(
            s"the checkpoint at $source was written for another pipeline: ${changed.mkString("; ")}"
          )
      }
    }
    val lastOffsets = from.offsets(planned)
    val wanted = PlanDecoder.cached(spec.planJson).timeIn(spec.mode).sparkTimeMode
    val sourcesNow = df.queryExecution.logical.collectLeaves().count(_.isStreaming)
    val addsClock = spec.wakes.isDefined && sourcesNow == lastOffsets.sources.size + 1
    if (!addsClock && sourcesNow != lastOffsets.sources.size)
      throw new CheckpointException(
        s"the checkpoint at $source has ${lastOffsets.sources.size} sources and the query now reads " +
          s"$sourcesNow: its sources changed; start it from a new checkpoint"
      )

    // The entries of the last committed batch, written where the one batch reads them.
    val seed = new Path(target, Seed).toString
    val provider = lastOffsets.conf.getOrElse(ProviderConf, RocksDbProvider)
    val raw = SparkShim.stateEntries(spark, source, 0, committed, op.runtime, op.partitions, provider)
    val entries = expanded(raw)
    entries.write.parquet(seed)
    val counts = spark.read.parquet(seed).selectExpr("count(distinct label)", "count(*)").head()
    val watermark = commitWatermark(from, committed)

    // The one batch, with the settings the resumed query will run with, each store's state as a
    // snapshot (no changelog), so that its one version is a file of its own.
    val settings = lastOffsets.conf + (ChangelogConf -> "false")
    val before = settings.keys.map(k => k -> spark.conf.getOption(k)).toMap
    try {
      settings.foreach { case (k, v) => spark.conf.set(k, v) }
      val stream = spark.readStream.schema(EntrySchema).parquet(seed)
      val query = SparkShim
        .importState(stream, spec, watermark)
        .writeStream
        .format("noop")
        .option("checkpointLocation", target)
        .trigger(Trigger.AvailableNow())
        .start()
      query.awaitTermination()
      query.exception.foreach(e => throw e)
    } finally {
      before.foreach {
        case (k, Some(v)) => spark.conf.set(k, v)
        case (k, None) => spark.conf.unset(k)
      }
    }
    val written = to.offsets(0).conf
    assemble(from, to, fs, committed, planned, written, addsClock)
    fs.delete(new Path(seed), true)
    KeyGroupCount.keep(spark, target, spec.keyGroups)
    Manifest.write(
      CheckpointFiles(target, hadoop),
      Manifest(
        BuildInfo.version,
        spark.version,
        Hosts.TransformWithState,
        Seq(Manifest.Operator(spec.planJson, spec.keyGroups))
      )
    )
    val report = mapper.createObjectNode()
    report.put("batch", committed)
    report.put("keyGroups", counts.getLong(0))
    report.put("entries", counts.getLong(1))
    report.put("runtime", s"${op.runtime} -> ${Hosts.TransformWithState}")
    report.put(
      "timeMode",
      s"${op.timeMode.getOrElse(if (op.runtime == Hosts.TransformWithState) "?" else "(none)")} -> $wanted"
    )
    report.put("clockSource", if (addsClock) "added" else "unchanged")
    mapper.writeValueAsString(report)
  }

  private val EntrySchema = StructType(
    Seq(StructField("label", IntegerType), StructField("key", BinaryType), StructField("value", BinaryType))
  )

  /** Raw entries with every Spark 3.5 group table opened into its entries. */
  private def expanded(raw: DataFrame): DataFrame =
    raw
      .select(col("label"), col("key"), col("value"))
      .flatMap { r =>
        val label = r.getInt(0)
        val value = r.getAs[Array[Byte]](2)
        if (!r.isNullAt(1)) Iterator.single(Row(label, r.getAs[Array[Byte]](1), value))
        else if (value == null) Iterator.empty
        else GroupTable.read(value).entries.map { case (k, v) => Row(label, k, v) }
      }(Encoders.row(EntrySchema))

  /** The watermark the batch after `batch` starts with (its commit's `nextBatchWatermarkMs`). */
  private def commitWatermark(files: CheckpointFiles, batch: Long): Long = {
    val path = files.path(s"commits/$batch")
    val lines = files.readText(path).split('\n')
    if (lines.length < 2) 0L
    else
      Option(CheckpointFiles.json(lines(1), path.toString).get("nextBatchWatermarkMs"))
        .map(_.asLong)
        .getOrElse(0L)
  }

  /** The new checkpoint from the one batch's state and the old checkpoint's logs. */
  private def assemble(
      from: CheckpointFiles,
      to: CheckpointFiles,
      fs: FileSystem,
      committed: Long,
      planned: Long,
      written: Map[String, String],
      addsClock: Boolean
  ): Unit = {
    val root = new Path(to.location)
    // The state: each partition's one snapshot, version 1, becomes the state after `committed`.
    val version = committed + 1
    val state = to.path("state/0")
    fs.listStatus(state).filter(s => s.isDirectory && Try(s.getPath.getName.toInt).isSuccess).foreach { p =>
      val dir = p.getPath
      val snapshot = new Path(dir, "1.zip")
      if (!fs.exists(snapshot))
        throw new CheckpointException(s"moving the checkpoint wrote no snapshot at $snapshot")
      fs.rename(snapshot, new Path(dir, s"$version.zip"))
      val crc = new Path(dir, ".1.zip.crc")
      if (fs.exists(crc)) fs.rename(crc, new Path(dir, s".$version.zip.crc"))
      Seq("1.changelog", ".1.changelog.crc")
        .map(new Path(dir, _))
        .filter(fs.exists)
        .foreach(fs.delete(_, false))
    }
    // The logs: the old checkpoint's, so the query resumes where it stopped, as the same query.
    Seq("offsets", "commits", "sources", "metadata", ".metadata.crc")
      .map(to.path)
      .filter(fs.exists)
      .foreach(fs.delete(_, true))
    Seq("offsets", "commits", "sources", "metadata").map(from.path).filter(fs.exists).foreach { p =>
      FileUtil.copy(fs, p, fs, new Path(root, p.getName), false, true, fs.getConf)
    }
    // Offset entries carry the settings the state was written with, and the clock's offset.
    val offsets = to.path("offsets")
    fs.listStatus(offsets).map(_.getPath).filter(p => Try(p.getName.toLong).isSuccess).foreach { p =>
      val lines = to.readText(p).split('\n').toSeq
      val meta = CheckpointFiles.json(lines(1), p.toString).asInstanceOf[ObjectNode]
      val conf =
        Option(meta.get("conf")).collect { case o: ObjectNode => o }.getOrElse(meta.putObject("conf"))
      written.foreach { case (k, v) => if (!conf.has(k)) conf.put(k, v) }
      val sources = lines.drop(2).filter(_.nonEmpty) ++
        (if (addsClock) Seq(ClockSource.Position(0, Long.MinValue).json()) else Nil)
      val text = (Seq(lines.head, mapper.writeValueAsString(meta)) ++ sources).mkString("\n")
      val crc = new Path(p.getParent, s".${p.getName}.crc")
      if (fs.exists(crc)) fs.delete(crc, false)
      val out = fs.create(p, true)
      try out.write(text.getBytes(StandardCharsets.UTF_8))
      finally out.close()
    }
  }
}
