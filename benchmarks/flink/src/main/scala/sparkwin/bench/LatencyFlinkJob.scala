package sparkwin.bench

import java.nio.charset.StandardCharsets
import java.time.Duration
import java.util.Properties

import org.apache.flink.api.common.JobStatus
import org.apache.flink.api.common.eventtime.{SerializableTimestampAssigner, WatermarkStrategy}
import org.apache.flink.api.common.functions.AggregateFunction
import org.apache.flink.api.common.serialization.{DeserializationSchema, SimpleStringSchema}
import org.apache.flink.api.common.typeinfo.{TypeInformation, Types}
import org.apache.flink.api.java.functions.KeySelector
import org.apache.flink.api.java.tuple.Tuple3
import org.apache.flink.configuration.Configuration
import org.apache.flink.connector.base.DeliveryGuarantee
import org.apache.flink.connector.kafka.sink.{KafkaRecordSerializationSchema, KafkaSink}
import org.apache.flink.connector.kafka.source.KafkaSource
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction
import org.apache.flink.streaming.api.windowing.assigners.{
  SlidingEventTimeWindows,
  TumblingEventTimeWindows,
  WindowAssigner
}
import org.apache.flink.streaming.api.windowing.windows.TimeWindow
import org.apache.flink.util.Collector

/** The latency benchmark's Flink peer (benchmarks/latency.py runs it): a DataStream job on a
  * local MiniCluster that reads LatencyProducer's events from a Kafka topic (one split per
  * partition, each with its own watermark generator), windows them and writes each fired pane
  * to another topic as `key,start,end,count,sum`.
  *
  *   LatencyFlinkJob <bootstrap> <inTopic> <outTopic> tumbling|sliding <boundMs> <parallelism>
  *
  * Watermarks: `forBoundedOutOfOrderness(boundMs)` on the event's ts, Flink's default periodic
  * emission (every 200 ms), no idleness: every partition gets events all the time. Windows:
  * `tumbling` 1 s, `sliding` 10 s every 1 s. Prints `running` once the job runs, then runs
  * until the process is ended.
  */
object LatencyFlinkJob {
  type Event = Tuple3[String, java.lang.Long, java.lang.Long] // key, amount, ts

  final class Parse extends DeserializationSchema[Event] {
    def deserialize(bytes: Array[Byte]): Event = {
      val f = new String(bytes, StandardCharsets.UTF_8).split(',')
      new Event(f(0), java.lang.Long.valueOf(f(1)), java.lang.Long.valueOf(f(2)))
    }
    def isEndOfStream(e: Event): Boolean = false
    def getProducedType: TypeInformation[Event] = Types.TUPLE[Event](Types.STRING, Types.LONG, Types.LONG)
  }

  final class EventTime extends SerializableTimestampAssigner[Event] {
    def extractTimestamp(e: Event, previous: Long): Long = e.f2.longValue
  }

  final class KeyOf extends KeySelector[Event, String] { def getKey(e: Event): String = e.f0 }

  /** Count and sum of amounts. */
  final class CountSum extends AggregateFunction[Event, Array[Long], Array[Long]] {
    def createAccumulator(): Array[Long] = Array(0L, 0L)
    def add(e: Event, acc: Array[Long]): Array[Long] = { acc(0) += 1; acc(1) += e.f1.longValue; acc }
    def getResult(acc: Array[Long]): Array[Long] = acc
    def merge(a: Array[Long], b: Array[Long]): Array[Long] = { a(0) += b(0); a(1) += b(1); a }
  }

  final class Pane extends ProcessWindowFunction[Array[Long], String, String, TimeWindow] {
    override def process(
        key: String,
        ctx: ProcessWindowFunction[Array[Long], String, String, TimeWindow]#Context,
        values: java.lang.Iterable[Array[Long]],
        out: Collector[String]
    ): Unit = {
      val acc = values.iterator().next()
      out.collect(s"$key,${ctx.window.getStart},${ctx.window.getEnd},${acc(0)},${acc(1)}")
    }
  }

  def windows(workload: String): WindowAssigner[Object, TimeWindow] = (workload match {
    case "tumbling" => TumblingEventTimeWindows.of(Duration.ofSeconds(1))
    case "sliding" => SlidingEventTimeWindows.of(Duration.ofSeconds(10), Duration.ofSeconds(1))
    case other => throw new IllegalArgumentException(s"workload must be tumbling or sliding, got $other")
  }).asInstanceOf[WindowAssigner[Object, TimeWindow]]

  def main(args: Array[String]): Unit = {
    val Array(bootstrap, inTopic, outTopic, workload, boundArg, parallelismArg) = args.take(6)
    val parallelism = parallelismArg.toInt
    val env = new StreamExecutionEnvironment(new Configuration())
    env.setParallelism(parallelism)
    // latency.py's --interval-ms tunes both systems alike: the periodic watermark's interval
    // (Flink's default 200 ms) as sparkwin's summary interval, and how long a network buffer
    // may wait before it is sent (Flink's default 100 ms) as Spark's streaming shuffle's.
    args.drop(6).headOption.map(_.toLong).foreach { ms =>
      env.getConfig.setAutoWatermarkInterval(ms)
      env.setBufferTimeout(ms)
    }
    val source = KafkaSource
      .builder[Event]()
      .setBootstrapServers(bootstrap)
      .setTopics(inTopic)
      .setGroupId(s"latency-flink-$inTopic")
      .setStartingOffsets(OffsetsInitializer.earliest())
      .setValueOnlyDeserializer(new Parse)
      .build()
    val sinkProps = new Properties()
    sinkProps.put("linger.ms", "0") // as the Spark systems' sinks: each pane leaves at once
    val sink = KafkaSink
      .builder[String]()
      .setBootstrapServers(bootstrap)
      .setKafkaProducerConfig(sinkProps)
      .setRecordSerializer(
        KafkaRecordSerializationSchema
          .builder[String]()
          .setTopic(outTopic)
          .setValueSerializationSchema(new SimpleStringSchema())
          .build()
      )
      .setDeliveryGuarantee(DeliveryGuarantee.NONE)
      .build()
    val strategy = WatermarkStrategy
      .forBoundedOutOfOrderness[Event](Duration.ofMillis(boundArg.toLong))
      .withTimestampAssigner(new EventTime)
    env
      .fromSource(source, strategy, "events")
      .keyBy(new KeyOf, Types.STRING)
      .window(windows(workload).asInstanceOf[WindowAssigner[Event, TimeWindow]])
      .aggregate(
        new CountSum,
        new Pane,
        Types.PRIMITIVE_ARRAY(Types.LONG).asInstanceOf[TypeInformation[Array[Long]]],
        Types.PRIMITIVE_ARRAY(Types.LONG).asInstanceOf[TypeInformation[Array[Long]]],
        Types.STRING
      )
      .sinkTo(sink)
    val cluster = FlinkJobBench.startCluster(parallelism)
    val job = cluster.submitJob(env.getStreamGraph.getJobGraph).get().getJobID
    while (cluster.getJobStatus(job).get() != JobStatus.RUNNING) Thread.sleep(50)
    println("running")
    System.out.flush()
    cluster.requestJobResult(job).get() // until the process is ended
  }
}
