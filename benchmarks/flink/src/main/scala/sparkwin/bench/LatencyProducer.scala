package sparkwin.bench

import java.io.PrintWriter
import java.nio.file.{Files, Paths}
import java.util.Properties
import java.util.concurrent.atomic.{AtomicLong, AtomicReference}
import java.util.concurrent.locks.LockSupport

import scala.collection.mutable

import org.apache.kafka.clients.producer.{Callback, KafkaProducer, ProducerRecord, RecordMetadata}
import org.apache.kafka.common.serialization.StringSerializer

/** The latency benchmark's producer (benchmarks/latency.py runs it): writes `rate` events a
  * second for `seconds` seconds to a topic, through one producer, so each partition keeps the
  * order events were made in.
  *
  *   LatencyProducer <bootstrap> <topic> <partitions> <rate> <seconds> <keys> <boundMs> <truth.json>
  *
  * An event is the text `key,amount,ts,producedAt`: key `k<i>` (events cycle through the keys;
  * key i goes to partition i % partitions), an amount 1..100, its event time `ts` = the wall
  * time it was made at (`producedAt`, epoch ms) less a disorder of 0 to boundMs - 1 ms, so no
  * event is late under a bound of boundMs. Events are sent on a schedule: event n at n / rate
  * seconds after the start; a producer that falls behind sends at once what is due.
  *
  * Writes truth.json: what every window must hold (count and sum per key and event-time second)
  * and, per second boundary `end` and partition, when the first event with ts - boundMs >= end was
  * made (the event whose watermark closes windows ending at `end`), with the rate achieved.
  */
object LatencyProducer {
  def main(args: Array[String]): Unit = {
    val Array(bootstrap, topic, partitionsArg, rateArg, secondsArg, keysArg, boundArg, truthPath) = args
    val partitions = partitionsArg.toInt
    val rate = rateArg.toDouble
    val seconds = secondsArg.toDouble
    val keys = keysArg.toInt
    val bound = boundArg.toLong

    val props = new Properties()
    props.put("bootstrap.servers", bootstrap)
    props.put("acks", "1")
    props.put("linger.ms", "1") // batches at 100k/s, adds at most 1 ms
    props.put("batch.size", "131072")
    props.put("enable.idempotence", "false")
    props.put("max.in.flight.requests.per.connection", "1") // order kept even on a retry
    val producer = new KafkaProducer[String, String](props, new StringSerializer, new StringSerializer)
    val failures = new AtomicLong()
    val firstFailure = new AtomicReference[Exception]()
    val onSent: Callback = (_: RecordMetadata, e: Exception) =>
      if (e != null) { failures.incrementAndGet(); firstFailure.compareAndSet(null, e) }

    producer.partitionsFor(topic) // the topic's metadata, before the clock starts
    val random = new java.util.Random(42)
    val buckets = mutable.HashMap.empty[(Int, Long), Array[Long]] // (key, second) -> count, sum
    val firstClosing = mutable.HashMap.empty[Long, Array[Long]] // end -> per partition producedAt
    val nextEnd = Array.fill(partitions)(Long.MinValue) // per partition: next boundary to close
    val maxTs = Array.fill(partitions)(Long.MinValue)
    val total = math.round(rate * seconds)
    var sent = 0L
    var maxBehind = 0L // events due but not yet sent, at most
    val start = System.nanoTime()
    while (sent < total) {
      val due = math.min(total, ((System.nanoTime() - start) / 1e9 * rate).toLong + 1)
      if (sent >= due) LockSupport.parkNanos(100000L)
      else {
        maxBehind = math.max(maxBehind, due - sent)
        while (sent < due) {
          val key = (sent % keys).toInt
          val partition = key % partitions
          val amount = 1 + random.nextInt(100)
          val producedAt = System.currentTimeMillis()
          val ts = producedAt - random.nextInt(bound.toInt)
          producer.send(
            new ProducerRecord(topic, partition, s"k$key", s"k$key,$amount,$ts,$producedAt"),
            onSent
          )
          val b = buckets.getOrElseUpdate((key, Math.floorDiv(ts, 1000L)), new Array[Long](2))
          b(0) += 1; b(1) += amount
          maxTs(partition) = math.max(maxTs(partition), ts)
          if (nextEnd(partition) == Long.MinValue)
            nextEnd(partition) = Math.floorDiv(ts, 1000L) * 1000L + 1000L
          while (ts - bound >= nextEnd(partition)) {
            firstClosing.getOrElseUpdate(nextEnd(partition), Array.fill(partitions)(-1L))(partition) =
              producedAt
            nextEnd(partition) += 1000L
          }
          sent += 1
        }
      }
    }
    val sendSeconds = (System.nanoTime() - start) / 1e9
    producer.flush()
    producer.close()
    if (failures.get > 0)
      throw new IllegalStateException(s"${failures.get} of $sent events were not written", firstFailure.get)

    val out = new StringBuilder
    out ++= s"""{"rate":$rate,"sent":$sent,"seconds":$sendSeconds,"achieved":${sent / sendSeconds},"""
    out ++= s""""maxBehind":$maxBehind,"partitions":$partitions,"bound":$bound,"maxTs":[${maxTs.mkString(
        ","
      )}],"""
    out ++= buckets.toSeq
      .sortBy(_._1)
      .map { case ((k, s), b) => s"[$k,$s,${b(0)},${b(1)}]" }
      .mkString(""""buckets":[""", ",", "],")
    out ++= firstClosing.toSeq
      .sortBy(_._1)
      .map { case (end, at) => s"[$end,[${at.mkString(",")}]]" }
      .mkString(""""closing":[""", ",", "]}")
    val w = new PrintWriter(Files.newBufferedWriter(Paths.get(truthPath)))
    try w.println(out)
    finally w.close()
    println(
      f"""{"sent":$sent,"seconds":$sendSeconds%.3f,"achieved":${sent / sendSeconds}%.1f,"maxBehind":$maxBehind}"""
    )
  }
}
