package sparkwin.core.agg

import sparkwin.core.{Record, Values}

/** Sample or population variance and standard deviation of the non-null values, as doubles.
  *
  * The state is (count, mean, M2), M2 being the sum of squared distances from the mean. A value
  * updates it as Welford's algorithm does, two states merge as Chan, Golub and LeVeque's
  * parallel formula does: both are Spark's (`CentralMomentAgg`), so a window computed in one pass
  * and one merged from slices, sessions or partials agree to the last bits of a double. No
  * values: null; one value: a population variance of 0 and a sample one of null (Spark 4's
  * default, with `spark.sql.legacy.statisticalAggregate` false; ANSI does not change it).
  */
final class VarianceAcc(column: Int, sample: Boolean, sqrt: Boolean) extends Accumulator {
  var n: Double = 0.0
  var mean: Double = 0.0
  var m2: Double = 0.0

  def add(record: Record, ts: Long): Unit = {
    val v = record.get(column)
    if (v != null) {
      val x = v.asInstanceOf[java.lang.Number].doubleValue
      n += 1.0
      val delta = x - mean
      val deltaN = delta / n
      mean += deltaN
      m2 += delta * (delta - deltaN)
    }
  }

  def merge(other: Accumulator): Unit = {
    val o = other.asInstanceOf[VarianceAcc]
    if (n == 0.0) { n = o.n; mean = o.mean; m2 = o.m2 }
    else if (o.n > 0.0) {
      val total = n + o.n
      val delta = o.mean - mean
      val deltaN = delta / total
      mean += deltaN * o.n
      m2 += o.m2 + delta * deltaN * n * o.n
      n = total
    }
  }

  def result: Any =
    if (n == 0.0 || (sample && n == 1.0)) null
    else {
      val variance = if (sample) m2 / (n - 1.0) else m2 / n
      if (sqrt) math.sqrt(variance) else variance
    }

  def copy(): Accumulator = {
    val c = new VarianceAcc(column, sample, sqrt); c.n = n; c.mean = mean; c.m2 = m2; c
  }
  def save: Array[Any] = Array(n, mean, m2)
  def restore(f: Array[Any]): Unit = {
    n = Values.toDouble(f(0)); mean = Values.toDouble(f(1)); m2 = Values.toDouble(f(2))
  }
}

/** count_if: rows whose boolean column is true (null and false do not count). */
final class CountIfAcc(column: Int) extends Accumulator with Invertible {
  var n: Long = 0L
  def add(record: Record, ts: Long): Unit = if (record.get(column) == java.lang.Boolean.TRUE) n += 1
  def merge(other: Accumulator): Unit = n += other.asInstanceOf[CountIfAcc].n
  def subtract(other: Accumulator): Unit = n -= other.asInstanceOf[CountIfAcc].n
  def result: Any = n
  def copy(): Accumulator = { val c = new CountIfAcc(column); c.n = n; c }
  def save: Array[Any] = Array(n)
  def restore(f: Array[Any]): Unit = n = Values.toLong(f(0))
}

/** min_by / max_by: the value of `column` in the row with the smallest / largest non-null `ord`
  * (rows with a null `ord` are skipped; the value may be null). Ties on `ord`: with
  * `tieByValue` the smallest value (null first) wins, so the result does not depend on the
  * order rows arrive or partials merge; otherwise (values that do not order, such as arrays)
  * the first one seen, as Spark's does.
  */
final class ExtremeByAcc(column: Int, ord: Int, wantMax: Boolean, tieByValue: Boolean) extends Accumulator {
  var best: Any = null
  var value: Any = null
  var seen: Boolean = false

  private def offer(o: Any, v: Any): Unit =
    if (o != null) {
      if (!seen) { best = o; value = v; seen = true }
      else {
        val c = Aggregate.valueOrdering.compare(o, best)
        if (if (wantMax) c > 0 else c < 0) { best = o; value = v }
        else if (c == 0 && tieByValue && smallerValue(v, value)) value = v
      }
    }

  private def smallerValue(v: Any, current: Any): Boolean =
    if (v == null) current != null
    else current != null && Aggregate.valueOrdering.compare(v, current) < 0

  def add(record: Record, ts: Long): Unit = {
    val o = record.get(ord)
    if (o != null) offer(o, record.stored(column))
  }
  def merge(other: Accumulator): Unit = {
    val o = other.asInstanceOf[ExtremeByAcc]
    if (o.seen) offer(o.best, o.value)
  }
  def result: Any = value
  def copy(): Accumulator = {
    val c = new ExtremeByAcc(column, ord, wantMax, tieByValue); c.best = best; c.value = value
    c.seen = seen; c
  }
  def save: Array[Any] = Array(best, value, seen)
  def restore(f: Array[Any]): Unit = {
    best = f(0); value = f(1); seen = f(2).asInstanceOf[Boolean]
  }
}

/** min_by_all / max_by_all: every value of `column` in the rows with the smallest / largest
  * `ord`, as an array (empty for a window without such rows). Rows where either is null are
  * skipped. With `tieByValue` the tied values are kept sorted ([[Aggregate.tieOrdering]]), so
  * the answer is the same whatever order rows arrive or partials merge in; otherwise they are in
  * arrival order. At most `limit` tied values are kept: the smallest in that order (so a bounded
  * answer is as order-blind as the whole one), or the first to arrive.
  */
final class ExtremeByAllAcc(
    column: Int,
    ord: Int,
    wantMax: Boolean,
    tieByValue: Boolean,
    limit: Long = Long.MaxValue
) extends Accumulator {
  var best: Any = null // null: no row yet
  val values = new java.util.ArrayList[Any]()

  /** Above 0 when `o` beats the best ord so far, 0 on a tie. */
  private def rank(o: Any): Int =
    if (best == null) 1
    else {
      val c = Aggregate.valueOrdering.compare(o, best)
      if (wantMax) c else -c
    }

  private def insert(v: Any): Unit =
    if (!tieByValue) { if (values.size < limit) values.add(v) }
    else {
      var lo = 0
      var hi = values.size
      while (lo < hi) {
        val mid = (lo + hi) >>> 1
        if (Aggregate.tieOrdering.compare(values.get(mid), v) <= 0) lo = mid + 1 else hi = mid
      }
      // Full: a value after every kept one is not among the smallest; one before pushes the last out.
      if (lo < limit) {
        values.add(lo, v)
        if (values.size > limit) values.remove(values.size - 1)
      }
    }

  def add(record: Record, ts: Long): Unit = {
    val o = record.get(ord)
    if (o != null && !record.isNullAt(column)) {
      // The ord first: a row below the best is not converted to a value state keeps.
      val c = rank(o)
      if (c > 0) { best = o; values.clear() }
      if (c >= 0) insert(record.stored(column))
    }
  }

  def merge(other: Accumulator): Unit = {
    val o = other.asInstanceOf[ExtremeByAllAcc]
    if (o.best != null) {
      val c = rank(o.best)
      if (c > 0) { best = o.best; values.clear(); values.addAll(o.values) }
      else if (c == 0) o.values.forEach(insert(_))
    }
  }

  def result: Any = values.toArray.toSeq

  def copy(): Accumulator = {
    val c = new ExtremeByAllAcc(column, ord, wantMax, tieByValue, limit)
    c.best = best
    c.values.addAll(values)
    c
  }

  def save: Array[Any] = Array(best, values.toArray)

  def restore(f: Array[Any]): Unit = {
    best = f(0)
    values.clear()
    f(1) match {
      case s: scala.collection.Seq[_] => s.foreach(values.add)
      case a: Array[_] => a.foreach(values.add)
      case other => throw new IllegalStateException(s"corrupt sparkwin state: max_by_all values $other")
    }
  }
}

/** The numeric type a double result is given back as (the input column's: Spark's
  * `percentile_approx` answers in its input's type).
  */
sealed trait NumberType {
  def of(d: Double): Any
}

object NumberType {
  case object ByteNumber extends NumberType { def of(d: Double): Any = d.toByte }
  case object ShortNumber extends NumberType { def of(d: Double): Any = d.toShort }
  case object IntNumber extends NumberType { def of(d: Double): Any = d.toInt }
  case object LongNumber extends NumberType { def of(d: Double): Any = d.toLong }
  case object FloatNumber extends NumberType { def of(d: Double): Any = d.toFloat }
  case object DoubleNumber extends NumberType { def of(d: Double): Any = d }
  final case class DecimalNumber(scale: Int) extends NumberType {
    def of(d: Double): Any =
      new java.math.BigDecimal(java.lang.Double.toString(d)).setScale(scale, java.math.RoundingMode.HALF_UP)
  }
}
