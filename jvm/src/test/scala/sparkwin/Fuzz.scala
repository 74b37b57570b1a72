package sparkwin

import java.util.concurrent.{Executors, ThreadFactory, TimeUnit, TimeoutException}

import scala.collection.mutable

import org.scalacheck.Gen
import org.scalacheck.rng.Seed

/** Hostile input for the suites that fuzz what sparkwin reads from people it does not trust
  * (plans, the Connect message, checkpoint bytes): ScalaCheck generators that mutate valid
  * inputs, and a runner that holds every input to the promise: a result, or the target's typed
  * error, within a time limit, allocating no more than the input's own length allows.
  *
  * CI runs a short run with a fixed seed. `SPARKWIN_FUZZ_CASES=n` runs `n` inputs per target
  * and `SPARKWIN_FUZZ_SEED` picks another seed (the long runs of docs/robustness.md); each target
  * prints its figures.
  */
object Fuzz {
  val seed: Long = sys.env.get("SPARKWIN_FUZZ_SEED").map(_.toLong).getOrElse(50L)

  /** Inputs per target: `SPARKWIN_FUZZ_CASES`, else `ci`. */
  def cases(ci: Int): Int = sys.env.get("SPARKWIN_FUZZ_CASES").map(_.toInt).getOrElse(ci)

  /** What one target's run came to; `failures` by kind (exception class and where it came
    * from, a hang or an allocation), each with how often and the first input's description.
    */
  final case class Outcome(
      target: String,
      tried: Int,
      read: Int,
      refused: Int,
      failures: Map[String, (Int, String)],
      caught: Map[String, Int]
  ) {
    def summary: String =
      s"fuzz $target: $tried inputs, $read read, $refused refused, ${failures.size} distinct failures, " +
        s"${caught.size} kinds of exception turned into the typed error" +
        failures.map { case (k, (n, first)) => s"\n  failure $k x$n, first: $first" }.mkString +
        caught.map { case (k, n) => s"\n  caught $k x$n" }.mkString
  }

  // ---------------------------------------------------------------------------------------------
  // Generators

  private val interestingInts =
    Seq(0, 1, -1, 7, 8, 127, 128, 255, 65535, 1 << 20, 1 << 30, Int.MaxValue, Int.MinValue)

  /** One mutation of a byte array: a flipped bit, an interesting byte or int written over it,
    * a truncation, bytes inserted, deleted, repeated or appended.
    */
  val byteMutation: Gen[Array[Byte] => Array[Byte]] = {
    val at = Gen.choose(0, Int.MaxValue)
    def pos(b: Array[Byte], p: Int) = if (b.isEmpty) 0 else p % b.length
    Gen.frequency(
      4 -> (for (p <- at; bit <- Gen.choose(0, 7)) yield { (b: Array[Byte]) =>
        if (b.nonEmpty) { val i = pos(b, p); b(i) = (b(i) ^ (1 << bit)).toByte }; b
      }),
      2 -> (for (p <- at; v <- Gen.oneOf(0, -1, 1, 0x7f, -128, 0x10, 53, 5)) yield { (b: Array[Byte]) =>
        if (b.nonEmpty) b(pos(b, p)) = v.toByte; b
      }),
      3 -> (for (p <- at; v <- Gen.oneOf(Gen.oneOf(interestingInts), Gen.choose(Int.MinValue, Int.MaxValue)))
        yield { (b: Array[Byte]) =>
          if (b.length >= 4) java.nio.ByteBuffer.wrap(b).putInt(pos(b, p) min (b.length - 4), v); b
        }),
      3 -> at.map(p => (b: Array[Byte]) => b.take(pos(b, p))),
      1 -> (for (p <- at; extra <- Gen.listOfN(8, Gen.choose(-128, 127)); n <- Gen.choose(1, 8)) yield {
        (b: Array[Byte]) =>
          val i = pos(b, p); b.take(i) ++ extra.take(n).map(_.toByte) ++ b.drop(i)
      }),
      1 -> (for (p <- at; n <- Gen.choose(1, 16)) yield { (b: Array[Byte]) =>
        val i = pos(b, p); b.take(i) ++ b.drop(i + n)
      }),
      1 -> (for (p <- at; n <- Gen.choose(1, 32)) yield { (b: Array[Byte]) =>
        val i = pos(b, p); b.take(i + n) ++ b.drop(i)
      }),
      1 -> Gen.listOfN(6, Gen.choose(-128, 127)).map(extra => (b: Array[Byte]) => b ++ extra.map(_.toByte))
    )
  }

  /** A valid value of `valid`, mutated one to four times. */
  def mutatedBytes(valid: Seq[Array[Byte]]): Gen[Array[Byte]] =
    for {
      base <- Gen.oneOf(valid)
      n <- Gen.choose(1, 4)
      ms <- Gen.listOfN(n, byteMutation)
    } yield ms.foldLeft(base.clone)((b, m) => m(b))

  /** Nesting depths around `limit`: under it, at it, just past it and far past it, where a
    * reader's check of the depth (or its stack) is tested.
    */
  def depthsNear(limit: Int): Gen[Int] =
    Gen.oneOf(limit - 2, limit - 1, limit, limit + 1, limit + 2, limit * 2, limit * 8)

  /** What may follow a valid text: white space (to be read), or another value, a copy, a lone
    * bracket, junk, a NUL, a comment (each to be refused).
    */
  def trailing(copy: String): Gen[(String, Boolean)] = Gen.oneOf(
    Gen.oneOf(" ", "\n", "\t \r\n").map(w => (w, false)),
    Gen
      .oneOf(
        copy,
        " " + copy,
        "}",
        "]",
        "{",
        "[1]",
        "\"x\"",
        "0",
        "null",
        " junk",
        "\u0000",
        "//c",
        "/* c */",
        ","
      )
      .map(t => (t, true))
  )

  /** Random bytes of up to 64. */
  val randomBytes: Gen[Array[Byte]] =
    Gen.choose(0, 64).flatMap(n => Gen.listOfN(n, Gen.choose(-128, 127)).map(_.map(_.toByte).toArray))

  // ---------------------------------------------------------------------------------------------
  // The runner

  private lazy val threads = java.lang.management.ManagementFactory.getThreadMXBean
    .asInstanceOf[com.sun.management.ThreadMXBean]

  private def allocated(): Long = threads.getThreadAllocatedBytes(Thread.currentThread.getId)

  /** The workers' stack: a quarter of a server thread's default (1 MiB), as little as a cold
    * JIT's interpreted frames leave a deep walk, so a recursion that only a hot JIT survives is
    * found here (a plan nested 900 levels deep overflowed that way, under Jackson's own limit).
    */
  val StackBytes: Long = 256L * 1024

  private val daemons: ThreadFactory = (r: Runnable) => {
    val t = new Thread(null, r, "sparkwin-fuzz", StackBytes); t.setDaemon(true); t
  }

  /** Feeds `n` inputs of `gen` (input `i` from seed `seed + i`) to `body`. An input passes when
    * `body` returns (read) or throws what `typed` accepts (refused), within `timeoutMs`, having
    * allocated at most `bound(size(input))` bytes; any other end is a failure, told apart by the
    * exception's class and the first sparkwin frame it came through.
    */
  def run[T](
      target: String,
      n: Int,
      gen: Gen[T],
      size: T => Int,
      describe: T => String,
      bound: Int => Long,
      timeoutMs: Long = 2000
  )(typed: Throwable => Boolean)(body: T => Any): Outcome = {
    var pool = Executors.newSingleThreadExecutor(daemons)
    val failures = mutable.LinkedHashMap.empty[String, (Int, String)]
    val caught = mutable.TreeMap.empty[String, Int]
    var read, refused = 0
    def fail(kind: String, input: T, detail: String): Unit = {
      val (count, first) =
        failures.getOrElse(kind, (0, s"$detail; input of ${size(input)}: ${describe(input).take(300)}"))
      failures(kind) = (count + 1, first)
    }
    try {
      var i = 0
      while (i < n) {
        val input = gen.pureApply(Gen.Parameters.default, Seed(seed * 1000003L + i), 100)
        val task = pool.submit[(Either[Throwable, Any], Long)] { () =>
          val before = allocated()
          val result =
            try Right(body(input))
            catch { case e: Throwable => Left(e) }
          (result, allocated() - before)
        }
        try {
          val (result, bytes) = task.get(timeoutMs, TimeUnit.MILLISECONDS)
          val limit = bound(size(input))
          result match {
            case Right(_) => read += 1
            case Left(e) if typed(e) =>
              refused += 1
              Option(e.getCause).filterNot(_.isInstanceOf[java.io.EOFException]).foreach { c =>
                val kind = s"${c.getClass.getName} at ${origin(c)}"
                caught(kind) = caught.getOrElse(kind, 0) + 1
              }
            case Left(e) =>
              val c = Option(e.getCause).getOrElse(e) // a last guard's wrapping: what it caught
              fail(s"${c.getClass.getName} at ${origin(c)}", input, s"$e".take(300))
          }
          if (bytes > limit) fail("an allocation above the bound", input, s"$bytes bytes, bound $limit")
        } catch {
          case _: TimeoutException =>
            task.cancel(true)
            pool.shutdownNow()
            pool = Executors.newSingleThreadExecutor(daemons) // the stuck thread is a daemon
            fail("no answer in time", input, s"$timeoutMs ms")
        }
        i += 1
      }
    } finally pool.shutdownNow()
    val outcome = Outcome(target, n, read, refused, failures.toMap, caught.toMap)
    println(outcome.summary)
    outcome
  }

  /** [[run]] over byte arrays (an input's size is its length; it is described in hex), failing
    * with the figures when any input failed.
    */
  def bytes(target: String, n: Int, gen: Gen[Array[Byte]], bound: Int => Long)(
      typed: Throwable => Boolean
  )(body: Array[Byte] => Any): Outcome =
    passed(run(target, n, gen, (b: Array[Byte]) => b.length, hex, bound)(typed)(body))

  /** `outcome`, or an AssertionError with its figures when any input failed. */
  def passed(outcome: Outcome): Outcome = {
    if (outcome.failures.nonEmpty) throw new AssertionError(outcome.summary)
    outcome
  }

  /** The first frame of sparkwin's code in `e`'s trace (or its first frame). */
  private def origin(e: Throwable): String = {
    val frames = e.getStackTrace
    frames
      .find(f => f.getClassName.startsWith("sparkwin.") && !f.getClassName.startsWith("sparkwin.Fuzz"))
      .orElse(frames.headOption)
      .fold("?")(f => s"${f.getClassName}.${f.getMethodName}:${f.getLineNumber}")
  }

  def hex(b: Array[Byte]): String = b.take(80).map(x => f"${x & 0xff}%02x").mkString + s" (${b.length} bytes)"
}
