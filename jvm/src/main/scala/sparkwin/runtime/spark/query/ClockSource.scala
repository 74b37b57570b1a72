package sparkwin.runtime.spark.query

import org.apache.spark.SparkContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.connector.read.streaming.{
  MicroBatchStream,
  Offset,
  ReadLimit,
  SupportsAdmissionControl
}
import org.apache.spark.sql.types.{LongType, StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import sparkwin.runtime.spark.task.{Wake, WakeReports}

/** The clock of a live pipeline that must act as processing time passes (processing-time
  * timers, channels that go idle): a micro-batch source that has new data only when the
  * earliest wake-up the key groups reported has come. Its data is one tick: a row with the
  * tick's time, which the runtime copies to every key group, so every group wakes at once and
  * reports its next wake-up ([[WakeReports]]). With nothing due it has nothing new, and a
  * query whose input is read goes quiet: no micro-batch runs (`processAllAvailable()` returns).
  *
  * Its one option, `token`, names the pipeline's [[WakeReports]].
  */
final class ClockSource extends TableProvider {
  override def inferSchema(options: CaseInsensitiveStringMap): StructType = ClockSource.Schema
  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: java.util.Map[String, String]
  ): Table = new ClockSource.ClockTable(properties.get("token"))
}

object ClockSource {

  /** The source's description in a query's progress (`sources[].description`). */
  val Description = "sparkwin-clock"
  val Schema: StructType =
    StructType(Seq(StructField("at", LongType, nullable = false)))

  /** The position of a clock: how many ticks it has given and the time of the last. */
  final case class Position(ticks: Long, at: Long) extends Offset {
    override def json(): String = s"""{"ticks":$ticks,"at":$at}"""
  }

  object Position {
    private val Form = """\{"ticks":(-?\d+),"at":(-?\d+)\}""".r
    def parse(json: String): Position = json.trim match {
      case Form(t, a) => Position(t.toLong, a.toLong)
      case other => throw new IllegalStateException(s"not a sparkwin clock offset: $other")
    }
  }

  /** When the next tick is due, from the key groups' reports: a tick's reports come from every
    * group, so their earliest is the query's next wake-up; other batches' only lower it (a
    * group they did not touch keeps what it asked before). Until its first tick a query has no
    * reports, so it ticks at once: a restarted query learns what its state waits for.
    */
  final class Schedule {
    private var due = Long.MinValue

    def next: Long = due

    /** A tick was given: nothing more is due until its batch reports. */
    def ticked(): Unit = due = Long.MaxValue

    def reported(wake: Option[Wake]): Unit = wake.foreach { w =>
      due = if (w.complete) w.at else math.min(due, w.at)
    }
  }

  final class ClockTable(token: String) extends Table with SupportsRead {
    override def name(): String = "sparkwin-clock"
    override def schema(): StructType = Schema
    override def capabilities(): java.util.Set[TableCapability] =
      java.util.EnumSet.of(TableCapability.MICRO_BATCH_READ)
    override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = () =>
      new Scan {
        override def readSchema(): StructType = Schema
        override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream =
          new ClockStream(token, SparkSession.active.sparkContext)
      }
  }

  final class ClockStream(token: String, spark: SparkContext)
      extends MicroBatchStream
      with SupportsAdmissionControl {
    private val schedule = new Schedule
    private val reports = WakeReports
      .forToken(token)
      .getOrElse(
        throw new IllegalStateException(s"no sparkwin pipeline with clock token $token in this driver")
      )

    override def initialOffset(): Offset = Position(0, Long.MinValue)
    override def deserializeOffset(json: String): Offset = Position.parse(json)
    override def getDefaultReadLimit: ReadLimit = ReadLimit.allAvailable()
    override def latestOffset(): Offset =
      throw new UnsupportedOperationException("latestOffset(start, limit) is the clock's way in")

    override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
      val from = start.asInstanceOf[Position]
      // The stream's own thread asks: the query's id is a local property of it.
      val query = spark.getLocalProperty(WakeReports.QueryIdProperty)
      if (query != null) schedule.reported(reports.take(query))
      val now = System.currentTimeMillis()
      if (now < schedule.next) from
      else {
        schedule.ticked()
        Position(from.ticks + 1, math.max(now, from.at))
      }
    }

    override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
      val (s, e) = (start.asInstanceOf[Position], end.asInstanceOf[Position])
      if (e.ticks > s.ticks) Array(Tick(e.at)) else Array.empty
    }

    override def createReaderFactory(): PartitionReaderFactory = TickReader
    override def commit(end: Offset): Unit = ()
    override def stop(): Unit = ()
    override def toString: String = ClockSource.Description
  }

  /** One tick: a row, its time. */
  final case class Tick(at: Long) extends InputPartition

  object TickReader extends PartitionReaderFactory {
    override def createReader(partition: InputPartition): PartitionReader[InternalRow] = {
      val tick = partition.asInstanceOf[Tick]
      new PartitionReader[InternalRow] {
        private var read = false
        override def next(): Boolean = { val first = !read; read = true; first }
        override def get(): InternalRow = InternalRow(tick.at)
        override def close(): Unit = ()
      }
    }
  }
}
