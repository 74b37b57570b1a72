package sparkwin.core.agg

import sparkwin.core.{Record, Values}

/** xxHash64 (Yann Collet's algorithm) over little-endian words, as Spark hashes values for
  * `xxhash64` and `approx_count_distinct`: an int as its 4 bytes, a long as its 8, strings and
  * binaries as their bytes.
  */
object XxHash64 {
  private final val P1 = 0x9e3779b185ebca87L
  private final val P2 = 0xc2b2ae3d27d4eb4fL
  private final val P3 = 0x165667b19e3779f9L
  private final val P4 = 0x85ebca77c2b2ae63L
  private final val P5 = 0x27d4eb2f165667c5L

  @inline private def rotl(x: Long, r: Int): Long = java.lang.Long.rotateLeft(x, r)

  private def avalanche(h0: Long): Long = {
    var h = h0
    h ^= h >>> 33
    h *= P2
    h ^= h >>> 29
    h *= P3
    h ^ (h >>> 32)
  }

  @inline private def round(acc: Long, lane: Long): Long = rotl(acc + lane * P2, 31) * P1

  @inline private def word(h: Long, lane: Long): Long = rotl(h ^ round(0L, lane), 27) * P1 + P4

  @inline private def half(h: Long, lane: Int): Long = rotl(h ^ ((lane & 0xffffffffL) * P1), 23) * P2 + P3

  def hashInt(v: Int, seed: Long): Long = avalanche(half(seed + P5 + 4L, v))

  def hashLong(v: Long, seed: Long): Long = avalanche(word(seed + P5 + 8L, v))

  private def longAt(b: Array[Byte], at: Int): Long = {
    var v = 0L
    var i = 7
    while (i >= 0) { v = (v << 8) | (b(at + i) & 0xffL); i -= 1 }
    v
  }

  private def intAt(b: Array[Byte], at: Int): Int =
    (b(at) & 0xff) | (b(at + 1) & 0xff) << 8 | (b(at + 2) & 0xff) << 16 | (b(at + 3) & 0xff) << 24

  def hashBytes(b: Array[Byte], seed: Long): Long = {
    val n = b.length
    var at = 0
    var h =
      if (n >= 32) {
        var v1 = seed + P1 + P2
        var v2 = seed + P2
        var v3 = seed
        var v4 = seed - P1
        while (at <= n - 32) {
          v1 = round(v1, longAt(b, at))
          v2 = round(v2, longAt(b, at + 8))
          v3 = round(v3, longAt(b, at + 16))
          v4 = round(v4, longAt(b, at + 24))
          at += 32
        }
        var acc = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)
        for (v <- Array(v1, v2, v3, v4)) acc = (acc ^ round(0L, v)) * P1 + P4
        acc
      } else seed + P5
    h += n
    while (at <= n - 8) { h = word(h, longAt(b, at)); at += 8 }
    if (at <= n - 4) { h = half(h, intAt(b, at)); at += 4 }
    while (at < n) { h = rotl(h ^ ((b(at) & 0xffL) * P5), 11) * P1; at += 1 }
    avalanche(h)
  }
}

/** How Spark hashes a value of a column's type (its internal form): the kind is the column's. */
object SparkHash {
  sealed trait Kind
  case object AsInt extends Kind // byte, short, int, boolean (1 or 0)
  case object AsDate extends Kind // days since the epoch, an int
  case object AsLong extends Kind
  case object AsTimestamp extends Kind // microseconds since the epoch, a long
  case object AsFloat extends Kind
  case object AsDouble extends Kind
  final case class AsDecimal(precision: Int, scale: Int) extends Kind
  case object AsBytes extends Kind // strings as UTF-8, binaries

  private final val Seed = 42L

  def hash(v: Any, kind: Kind): Long = kind match {
    case AsInt =>
      v match {
        case b: java.lang.Boolean => XxHash64.hashInt(if (b) 1 else 0, Seed)
        case n => XxHash64.hashInt(n.asInstanceOf[java.lang.Number].intValue, Seed)
      }
    case AsDate =>
      val days = v match {
        case d: java.time.LocalDate => d.toEpochDay
        case d: java.sql.Date => d.toLocalDate.toEpochDay
        case n: java.lang.Number => n.longValue
        case other => throw new IllegalArgumentException(s"not a date: $other")
      }
      XxHash64.hashInt(days.toInt, Seed)
    case AsLong => XxHash64.hashLong(v.asInstanceOf[java.lang.Number].longValue, Seed)
    case AsTimestamp => XxHash64.hashLong(micros(v), Seed)
    case AsFloat =>
      val f = v.asInstanceOf[java.lang.Number].floatValue
      XxHash64.hashInt(if (f == 0.0f) 0 else java.lang.Float.floatToIntBits(f), Seed)
    case AsDouble =>
      val d = v.asInstanceOf[java.lang.Number].doubleValue
      XxHash64.hashLong(if (d == 0.0) 0L else java.lang.Double.doubleToLongBits(d), Seed)
    case AsDecimal(precision, scale) =>
      val unscaled = (v match {
        case d: java.math.BigDecimal => d
        case d: scala.math.BigDecimal => d.bigDecimal
        case n => new java.math.BigDecimal(n.toString)
      }).setScale(scale, java.math.RoundingMode.HALF_UP).unscaledValue
      if (precision <= 18) XxHash64.hashLong(unscaled.longValue, Seed)
      else XxHash64.hashBytes(unscaled.toByteArray, Seed)
    case AsBytes =>
      v match {
        case s: String => XxHash64.hashBytes(s.getBytes(java.nio.charset.StandardCharsets.UTF_8), Seed)
        case b: Array[Byte] => XxHash64.hashBytes(b, Seed)
        case other =>
          XxHash64.hashBytes(other.toString.getBytes(java.nio.charset.StandardCharsets.UTF_8), Seed)
      }
  }

  /** Microseconds since the epoch of a timestamp value (a number is epoch milliseconds). */
  private def micros(v: Any): Long = v match {
    case t: java.sql.Timestamp => Math.floorDiv(t.getTime, 1000L) * 1000000L + t.getNanos / 1000
    case i: java.time.Instant => i.getEpochSecond * 1000000L + i.getNano / 1000
    case l: java.time.LocalDateTime =>
      l.toEpochSecond(java.time.ZoneOffset.UTC) * 1000000L + l.getNano / 1000
    case other => Values.toMillis(other) * 1000L
  }
}

/** HyperLogLog++ as Spark's `approx_count_distinct` runs it: 2^p registers of the largest
  * leading-zero count seen (p from the relative standard deviation, as Spark computes it), Spark's
  * hash, and linear counting while it is below the HLL++ paper's threshold for p. Above it,
  * up to 5 * 2^p, Spark subtracts a bias interpolated from the paper's empirical tables, which
  * sparkwin does not carry; it uses Ertl's improved estimator there (unbiased over the whole
  * range, error as HLL's), so results in that band agree with Spark's within the sketch's error,
  * and are equal elsewhere.
  */
object HyperLogLog {

  /** Spark's precision for a relative standard deviation. */
  def precisionFor(rsd: Double): Int = math.ceil(2.0 * math.log(1.106 / rsd) / math.log(2.0)).toInt

  /** Linear counting below these estimates, for p = 4 to 18 (Heule, Nunkesser and Hall). */
  private val Thresholds =
    Array(10, 20, 40, 80, 220, 400, 900, 1800, 3100, 6500, 11500, 20000, 50000, 120000, 350000)

  def estimate(registers: Array[Byte], p: Int): Long = {
    val m = registers.length.toDouble
    var zInverse = 0.0
    var zeros = 0
    var i = 0
    while (i < registers.length) {
      val r = registers(i)
      zInverse += 1.0 / (1L << r)
      if (r == 0) zeros += 1
      i += 1
    }
    val alpha = p match {
      case 4 => 0.673
      case 5 => 0.697
      case 6 => 0.709
      case _ => 0.7213 / (1.0 + 1.079 / m)
    }
    val raw = alpha * m * m / zInverse
    val linear = if (zeros > 0) m * math.log(m / zeros) else Double.PositiveInfinity
    val value =
      if (zeros > 0 && p <= 18 && linear <= Thresholds(p - 4)) linear
      else if (p <= 18 && raw < 5.0 * m) improved(registers, p)
      else raw
    math.round(value)
  }

  /** Ertl's improved raw estimator ("New cardinality estimation algorithms for HyperLogLog
    * sketches", 2017) from the histogram of register values.
    */
  private def improved(registers: Array[Byte], p: Int): Double = {
    val q = 64 - p
    val m = registers.length.toDouble
    val counts = new Array[Int](q + 2)
    registers.foreach(r => counts(r) += 1)
    var z = m * tau(1.0 - counts(q + 1) / m)
    var k = q
    while (k >= 1) { z = 0.5 * (z + counts(k)); k -= 1 }
    z += m * sigma(counts(0) / m)
    m * m / (2.0 * math.log(2.0)) / z
  }

  private def sigma(x0: Double): Double =
    if (x0 == 1.0) Double.PositiveInfinity
    else {
      var x = x0
      var y = 1.0
      var z = x0
      var previous = -1.0
      while (previous != z) { x *= x; previous = z; z += x * y; y += y }
      z
    }

  private def tau(x0: Double): Double =
    if (x0 == 0.0 || x0 == 1.0) 0.0
    else {
      var x = x0
      var y = 1.0
      var z = 1.0 - x0
      var previous = -1.0
      while (previous != z) {
        x = math.sqrt(x); previous = z; y *= 0.5
        val d = 1.0 - x
        z -= d * d * y
      }
      z / 3.0
    }
}

/** approx_count_distinct of the non-null values: a HyperLogLog++ sketch whose merge is the
  * registers' maximum, so every split and merge order gives the same registers and the same
  * answer. The registers are allocated with the first value; 0 for no values.
  */
final class HyperLogLogAcc(column: Int, p: Int, hash: SparkHash.Kind) extends Accumulator {
  var registers: Array[Byte] = null
  private val shift = 64 - p
  private val padding = 1L << (p - 1)

  def add(record: Record, ts: Long): Unit = {
    val v = record.get(column)
    if (v != null) {
      if (registers == null) registers = new Array[Byte](1 << p)
      val x = SparkHash.hash(v, hash)
      val at = (x >>> shift).toInt
      val rank = (java.lang.Long.numberOfLeadingZeros((x << p) | padding) + 1).toByte
      if (rank > registers(at)) registers(at) = rank
    }
  }

  def merge(other: Accumulator): Unit = {
    val o = other.asInstanceOf[HyperLogLogAcc].registers
    if (o != null) {
      if (registers == null) registers = o.clone()
      else {
        var i = 0
        while (i < o.length) { if (o(i) > registers(i)) registers(i) = o(i); i += 1 }
      }
    }
  }

  def result: Any = if (registers == null) 0L else HyperLogLog.estimate(registers, p)

  def copy(): Accumulator = {
    val c = new HyperLogLogAcc(column, p, hash)
    if (registers != null) c.registers = registers.clone()
    c
  }

  def save: Array[Any] = Array(registers)

  def restore(f: Array[Any]): Unit = {
    registers = f(0).asInstanceOf[Array[Byte]]
    if (registers != null && registers.length != (1 << p))
      throw new sparkwin.core.IncompatibleStateException(
        s"a HyperLogLog sketch of ${registers.length} registers, not ${1 << p}: the checkpoint was " +
          "written with another rsd; resume with the rsd it was written with, or start a new checkpoint"
      )
  }
}
