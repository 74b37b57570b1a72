package sparkwin.bench

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.Files

/** The Flink peers compute what the benchmark checks them against: the job on a MiniCluster
  * (its channel splits, per-split watermarks, the lag of channel 7, the flush events and the
  * accumulators) and the operator in its harness, on a small events file in run.py's layout,
  * against windows counted here directly.
  */
class FlinkPeersSuite extends munit.FunSuite {
  private val Bound = 1995L
  private val Keys = 10 // and key 10, the flush key
  private val N = 6000 // events before the flush events

  private val rnd = new scala.util.Random(5)
  private val keyOf = Array.fill(N)(rnd.nextInt(Keys)) ++ Array.fill(FlinkWorkloads.Channels)(Keys)
  private val base = 1700000000000L
  private val ts = {
    val real = Array.tabulate(N)(i => base + 7L * ((i * 150L) / 7 - rnd.nextInt((Bound / 7).toInt + 1)))
    real ++ Array.fill(FlinkWorkloads.Channels)(real.max + 86400000L)
  }
  private val amount = Array.fill(N + FlinkWorkloads.Channels)(rnd.nextInt(100).toLong)

  private lazy val file = {
    val f = Files.createTempFile("events", ".bin")
    val b = ByteBuffer.allocate(ts.length * FlinkWorkloads.RecordBytes).order(ByteOrder.LITTLE_ENDIAN)
    for (i <- ts.indices) b.putInt(keyOf(i)).putLong(ts(i)).putLong(amount(i))
    Files.write(f, b.array)
    f.toFile.deleteOnExit()
    f.toString
  }

  /** Tumbling 1 min windows counted directly, flush key left out; `lag` moves channel 7 back. */
  private def tumbling(lag: Long): (Long, Long, Long) = {
    val windows = (0 until N).groupBy { i =>
      val t = ts(i) - (if (i % FlinkWorkloads.Channels == FlinkWorkloads.Channels - 1) lag else 0L)
      (keyOf(i), Math.floorDiv(t, 60000L) * 60000L)
    }
    val sums = windows.toSeq.map { case ((_, start), is) => (start, is.map(amount(_)).sum) }
    (windows.size.toLong, sums.map(_._2).sum, sums.map { case (start, v) => start / 1000 * v }.sum)
  }

  private lazy val cluster = FlinkJobBench.startCluster(2)
  override def afterAll(): Unit = cluster.close()

  test("the job gives the tumbling windows, and with channel 7 ten minutes behind loses none") {
    assertEquals(FlinkJobBench.runJob(cluster, "tumbling", file, Bound, 2, limit = -1), tumbling(0L))
    val lagged = FlinkJobBench.runJob(cluster, "channels:600000", file, Bound, 2, limit = -1)
    assertEquals(lagged, tumbling(600000L))
    assertNotEquals(lagged, tumbling(0L))
  }

  test("the job and the operator in its harness agree on sliding windows and sessions") {
    val names = Array.tabulate(Keys + 1)(i => s"k$i")
    for (w <- Seq("tumbling", "sliding:60000", "session:30000")) {
      val (_, windows, sum, weighted) =
        FlinkOperatorBench.run(w, names, keyOf, ts, amount, ts.length, Bound)
      assertEquals(FlinkJobBench.runJob(cluster, w, file, Bound, 2, limit = -1), (windows, sum, weighted), w)
    }
  }
}
