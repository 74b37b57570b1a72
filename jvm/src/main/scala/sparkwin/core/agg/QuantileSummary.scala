package sparkwin.core.agg

import sparkwin.core.{Record, Values}

/** A mergeable quantile summary in the manner of Greenwald and Khanna: sorted values, each with
  * bounds `[rmin, rmax]` on its rank among the `count` values summarised.
  *
  * Invariant: the first entry is the smallest value (rank 1), the last the largest (rank
  * `count`), and between neighbours `rmax(i + 1) - rmin(i) <= 2 * eps * count`. Then, for any
  * rank r, some entry has `r - eps * count <= rmin` and `rmax <= r + eps * count`: its value's
  * rank is within `eps * count` of r. Merging two summaries bounds each entry's rank in the
  * union from its own bounds and its neighbours in the other summary (Greenwald and Khanna's
  * combine), which keeps the invariant for the summed count; compressing drops an entry only
  * when its neighbours stay within the bound. So the bound holds after any number of merges, in
  * any order. While `2 * eps * count < 2` nothing is dropped and answers are exact.
  *
  * Values are buffered unsorted and folded in a thousand at a time.
  */
final class QuantileSummary(val eps: Double) {
  var count: Long = 0L
  var size: Int = 0
  var values: Array[Double] = new Array[Double](0)
  var rmin: Array[Long] = new Array[Long](0)
  var rmax: Array[Long] = new Array[Long](0)
  private var buffer: Array[Double] = new Array[Double](0)
  private var buffered = 0

  def isEmpty: Boolean = count == 0L && buffered == 0

  def add(v: Double): Unit = {
    if (buffered == buffer.length) {
      if (buffered >= QuantileSummary.BufferSize) flush()
      else
        buffer =
          java.util.Arrays.copyOf(buffer, math.max(16, math.min(2 * buffered, QuantileSummary.BufferSize)))
    }
    buffer(buffered) = v
    buffered += 1
  }

  /** Folds the buffered values in. */
  def flush(): Unit =
    if (buffered > 0) {
      val sorted = java.util.Arrays.copyOf(buffer, buffered)
      java.util.Arrays.sort(sorted)
      val exact = new QuantileSummary(eps)
      exact.values = sorted
      exact.rmin = Array.tabulate(sorted.length)(i => i + 1L)
      exact.rmax = exact.rmin.clone()
      exact.size = sorted.length
      exact.count = sorted.length
      buffered = 0
      combine(exact)
    }

  /** Folds `other` in; `other` is not changed. */
  def merge(other: QuantileSummary): Unit =
    if (!other.isEmpty) {
      flush()
      val o = if (other.buffered == 0) other else { val c = other.copy(); c.flush(); c }
      combine(o)
    }

  private def combine(o: QuantileSummary): Unit =
    if (count == 0L) {
      values = java.util.Arrays.copyOf(o.values, o.size); rmin = java.util.Arrays.copyOf(o.rmin, o.size)
      rmax = java.util.Arrays.copyOf(o.rmax, o.size); size = o.size; count = o.count
    } else {
      val n = size + o.size
      val vs = new Array[Double](n)
      val lo = new Array[Long](n)
      val hi = new Array[Long](n)
      var i = 0 // next of this (first among equal values)
      var j = 0 // next of o
      var k = 0
      while (k < n) {
        if (j >= o.size || (i < size && java.lang.Double.compare(values(i), o.values(j)) <= 0)) {
          // this(i): o's entries before it are o(0 until j), all smaller; o(j) is after it.
          vs(k) = values(i)
          lo(k) = rmin(i) + (if (j > 0) o.rmin(j - 1) else 0L)
          hi(k) = rmax(i) + (if (j < o.size) o.rmax(j) - 1 else o.count)
          i += 1
        } else {
          // o(j): this's entries before it are this(0 until i), smaller or equal; this(i) is after.
          vs(k) = o.values(j)
          lo(k) = o.rmin(j) + (if (i > 0) rmin(i - 1) else 0L)
          hi(k) = o.rmax(j) + (if (i < size) rmax(i) - 1 else count)
          j += 1
        }
        k += 1
      }
      values = vs; rmin = lo; rmax = hi; size = n; count += o.count
      compress()
    }

  /** Drops every entry whose neighbours stay within the bound without it. */
  private def compress(): Unit = {
    val bound = math.floor(2.0 * eps * count).toLong
    if (size > 2 && bound >= 2) {
      var kept = 1 // entries 0 until kept are final; the first stays
      var i = 1
      while (i < size - 1) {
        if (rmax(i + 1) - rmin(kept - 1) > bound) {
          values(kept) = values(i); rmin(kept) = rmin(i); rmax(kept) = rmax(i); kept += 1
        }
        i += 1
      }
      values(kept) = values(size - 1); rmin(kept) = rmin(size - 1); rmax(kept) = rmax(size - 1)
      size = kept + 1
    }
  }

  /** The value whose rank is nearest `ceil(q * count)` (Spark's target rank); the smallest for
    * `q <= eps`, the largest for `q >= 1 - eps`, as Spark's; NaN when empty.
    */
  def query(q: Double): Double = {
    flush()
    if (size == 0) Double.NaN
    else if (q <= eps) values(0)
    else if (q >= 1.0 - eps) values(size - 1)
    else {
      val r = math.max(1L, math.ceil(q * count).toLong)
      var best = 0
      var bestErr = Long.MaxValue
      var i = 0
      while (i < size) {
        val err = math.max(r - rmin(i), rmax(i) - r)
        if (err < bestErr) { best = i; bestErr = err }
        i += 1
      }
      values(best)
    }
  }

  def copy(): QuantileSummary = {
    val c = new QuantileSummary(eps)
    c.count = count; c.size = size
    c.values = java.util.Arrays.copyOf(values, size)
    c.rmin = java.util.Arrays.copyOf(rmin, size)
    c.rmax = java.util.Arrays.copyOf(rmax, size)
    c.buffer = java.util.Arrays.copyOf(buffer, buffered)
    c.buffered = buffered
    c
  }

  /** The summary (after a flush) as bytes: count, size, then (value, rmin, rmax) per entry. */
  def toBytes: Array[Byte] = {
    flush()
    val b = java.nio.ByteBuffer.allocate(12 + 24 * size)
    b.putLong(count).putInt(size)
    var i = 0
    while (i < size) { b.putDouble(values(i)).putLong(rmin(i)).putLong(rmax(i)); i += 1 }
    b.array
  }

  def readBytes(bytes: Array[Byte]): Unit = {
    val b = java.nio.ByteBuffer.wrap(bytes)
    count = b.getLong; size = b.getInt
    values = new Array[Double](size); rmin = new Array[Long](size); rmax = new Array[Long](size)
    var i = 0
    while (i < size) { values(i) = b.getDouble; rmin(i) = b.getLong; rmax(i) = b.getLong; i += 1 }
    buffered = 0
  }
}

object QuantileSummary {
  val BufferSize = 1024
}

/** percentile_approx of the non-null values of a numeric column: one value per percentage, in
  * the column's type, the rank of each within `count / accuracy` of the exact one's (Spark's
  * documented accuracy); exact while the window holds fewer than `accuracy` values.
  */
final class PercentileAcc(column: Int, spec: Aggregate.PercentileApprox) extends Accumulator {
  var summary = new QuantileSummary(1.0 / spec.accuracy)

  def add(record: Record, ts: Long): Unit = {
    val v = record.get(column)
    if (v != null) summary.add(Values.toDouble(v))
  }

  def merge(other: Accumulator): Unit = summary.merge(other.asInstanceOf[PercentileAcc].summary)

  def result: Any =
    if (summary.isEmpty) null
    else {
      val out = spec.percentages.map(q => spec.resultType.of(summary.query(q)))
      if (spec.array) out else out.head
    }

  def copy(): Accumulator = { val c = new PercentileAcc(column, spec); c.summary = summary.copy(); c }
  def save: Array[Any] = Array(summary.toBytes)
  def restore(f: Array[Any]): Unit = {
    summary = new QuantileSummary(1.0 / spec.accuracy)
    summary.readBytes(f(0).asInstanceOf[Array[Byte]])
  }
}
