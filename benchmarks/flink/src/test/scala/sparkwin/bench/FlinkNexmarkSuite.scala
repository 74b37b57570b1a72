package sparkwin.bench

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.Files

/** The Nexmark jobs compute what benchmarks/nexmark.py checks them against, on a small bids
  * file in run.py's layout, against the queries answered here directly: q5 (auctions with the
  * most bids per sliding window, ties kept), q7 (bids at each tumbling window's highest price),
  * q8 (persons who opened an auction in the window they joined in) and q11 (bids per bidder
  * session).
  */
class FlinkNexmarkSuite extends munit.FunSuite {
  private val N = 3000
  private val Base = 1700000000000L
  private val rnd = new scala.util.Random(11)
  private val ts = Array.tabulate(N)(i => Base + 500L * i + rnd.nextInt(400))
  private val person = Array.fill(N)(1000 + rnd.nextInt(30))
  private val auction = Array.fill(N)(1000 + rnd.nextInt(6))
  private val price = Array.fill(N)(rnd.nextInt(50).toLong) // ties at the top are likely

  /** A file of (key, ts, amount) records, then a flush record per channel a day later. */
  private def file(key: Int => Int, amount: Int => Long): String = {
    val flushKey = (0 until N).map(key).max + 1
    val f = Files.createTempFile("bids", ".bin")
    val b = ByteBuffer.allocate((N + FlinkWorkloads.Channels) * FlinkWorkloads.RecordBytes)
    b.order(ByteOrder.LITTLE_ENDIAN)
    for (i <- 0 until N) b.putInt(key(i)).putLong(ts(i)).putLong(amount(i))
    for (_ <- 0 until FlinkWorkloads.Channels) b.putInt(flushKey).putLong(ts.max + 86400000L).putLong(0L)
    Files.write(f, b.array)
    f.toFile.deleteOnExit()
    f.toString
  }

  /** (rows, sum, sum of start in seconds times value, sum of keys) of (key, start, value) rows. */
  private def fingerprint(rows: Seq[(Long, Long, Long)]): Seq[Long] =
    Seq(
      rows.size.toLong,
      rows.map(_._3).sum,
      rows.map { case (_, start, v) => Math.floorDiv(start, 1000L) * v }.sum,
      rows.map(_._1).sum
    )

  private lazy val cluster = FlinkJobBench.startCluster(2)
  override def afterAll(): Unit = cluster.close()

  private def run(query: String, path: String): Seq[Long] =
    FlinkNexmarkBench.runJob(cluster, query, path, 4000L, 2, limit = -1)

  test("q5: the auctions with the most bids in each 10 s window sliding by 2 s") {
    val counts = for {
      i <- 0 until N
      k <- 0 until 5
    } yield (auction(i).toLong, Math.floorDiv(ts(i), 2000L) * 2000L - 2000L * k)
    val perWindow = counts.groupBy(identity).map { case ((a, start), n) => (a, start, n.size.toLong) }
    val most = perWindow.groupBy(_._2).map { case (start, rows) => start -> rows.map(_._3).max }
    val expected = perWindow.filter { case (_, start, n) => n == most(start) }.toSeq
    assertEquals(run("q5", file(auction(_), _ => 1L)), fingerprint(expected))
  }

  test("q7: the bids at the highest price of each 10 s tumbling window, ties all counted") {
    val windows = (0 until N).groupBy(i => Math.floorDiv(ts(i), 10000L) * 10000L)
    val expected = windows.toSeq.flatMap { case (start, is) =>
      val highest = is.map(price(_)).max
      is.filter(price(_) == highest).map(i => (auction(i).toLong, start, highest))
    }
    assert(expected.size > windows.size, "no ties: the test would not see them counted")
    val packed = file(_ => 0, i => (price(i) << FlinkNexmarkBench.AuctionBits) | auction(i))
    assertEquals(run("q7", packed), fingerprint(expected))
  }

  test("q8: persons who joined and opened an auction in the same 10 s tumbling window") {
    // Every 20th event (every 10 s) a person joins, ids in order; the others are auctions by
    // one of the last 40 persons, so some open one in their joining window and most later.
    val joins = (0 until N).map(_ % 20 == 0)
    val who = (0 until N).map(i => if (joins(i)) i / 20 else math.max(0, i / 20 - rnd.nextInt(40)))
    val expected = (0 until N).groupBy(i => (who(i), Math.floorDiv(ts(i), 10000L) * 10000L)).toSeq.flatMap {
      case ((p, start), is) =>
        val auctions = is.count(!joins(_)).toLong
        if (is.exists(joins(_)) && auctions > 0) Seq((p.toLong, start, auctions)) else Nil
    }
    assert(expected.size > 10 && expected.size < N / 20, "every or no person would count")
    val packed = file(who(_), i => if (joins(i)) 1L << 32 else 1L)
    assertEquals(run("q8", packed), fingerprint(expected))
  }

  test("q11: bids per bidder session, a session ending after 10 s without a bid") {
    val expected = (0 until N).groupBy(person(_)).toSeq.flatMap { case (p, is) =>
      val times = is.map(ts(_)).sorted
      // Windows [t, t + gap) that touch merge, as Flink's do: a bid more than 10 s after the
      // previous one starts a new session.
      val starts = times.indices.filter(j => j == 0 || times(j) - times(j - 1) > 10000L)
      starts.zip(starts.drop(1) :+ times.size).map { case (from, until) =>
        (p.toLong, times(from), (until - from).toLong)
      }
    }
    assert(expected.size > 30)
    assertEquals(run("q11", file(person(_), _ => 1L)), fingerprint(expected))
  }
}
