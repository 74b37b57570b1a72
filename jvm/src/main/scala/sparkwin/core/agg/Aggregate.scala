package sparkwin.core.agg

import sparkwin.core.{Record, Values}

/** A declarative aggregate: what to compute, over which field, under which output name.
  * The operator makes one mutable [[Accumulator]] per aggregate per window.
  */
sealed trait Aggregate {
  def alias: String

  /** The input column it reads (negative: none, as count() over rows). */
  def column: Int

  /** Every input column it reads: `column`, and `ord` for min_by/max_by. */
  def columns: Seq[Int] = if (column < 0) Nil else column :: Nil
  def newAccumulator(): Accumulator

  /** Whether its accumulators undo a merge exactly ([[Invertible]]), so a sliding window's
    * total can take the entering slice in and the leaving one out. Sums of doubles are not:
    * subtracting a large value back out loses the small ones it rounded away.
    */
  def invertible: Boolean = false

  /** The aggregate without its `FILTER` ([[Aggregate.Filtered]]): how it merges and packs. */
  def unfiltered: Aggregate = this
}

/** An accumulator whose merge has an exact inverse: after `a.merge(b)` then `a.subtract(b)`, `a`
  * gives what it gave before, bit for bit (the aggregate says so with `invertible`).
  */
trait Invertible {
  def subtract(other: Accumulator): Unit
}

/** The running state of one aggregate in one window. Mutated in place on the hot path. */
abstract class Accumulator {
  def add(record: Record, ts: Long): Unit
  def merge(other: Accumulator): Unit
  def result: Any
  def copy(): Accumulator

  /** The accumulator's fields, for serialisation; `restore` is the inverse. */
  def save: Array[Any]
  def restore(fields: Array[Any]): Unit
}

object Accumulator {

  /** A new accumulator per aggregate, in plan order. */
  def fresh(aggregates: Array[Aggregate]): Array[Accumulator] = {
    val out = new Array[Accumulator](aggregates.length)
    var i = 0
    while (i < out.length) { out(i) = aggregates(i).newAccumulator(); i += 1 }
    out
  }

  /** Adds one element to every accumulator, in plan order. */
  def addAll(accs: Array[Accumulator], record: Record, ts: Long): Unit = {
    var i = 0
    while (i < accs.length) { accs(i).add(record, ts); i += 1 }
  }

  /** Folds `from` into `into`, aggregate by aggregate (both in plan order). */
  def mergeAll(into: Array[Accumulator], from: Array[Accumulator]): Unit = {
    var i = 0
    while (i < into.length) { into(i).merge(from(i)); i += 1 }
  }

  /** Takes `from` back out of `into` (every one [[Invertible]]), aggregate by aggregate. */
  def subtractAll(into: Array[Accumulator], from: Array[Accumulator]): Unit = {
    var i = 0
    while (i < into.length) { into(i).asInstanceOf[Invertible].subtract(from(i)); i += 1 }
  }

  /** The aggregates' current values, in plan order. */
  def results(accs: Array[Accumulator]): Array[Any] = {
    val out = new Array[Any](accs.length)
    var i = 0
    while (i < accs.length) { out(i) = accs(i).result; i += 1 }
    out
  }
}

/** How a numeric input column is summed: as longs, doubles or decimals. */
sealed trait NumericKind
object NumericKind {
  case object Integral extends NumericKind
  case object Fractional extends NumericKind
  case object Decimal extends NumericKind
}

object Aggregate {
  final case class Count(alias: String, column: Int) extends Aggregate {
    def newAccumulator(): Accumulator = new CountAcc(column)
    override def invertible: Boolean = true
  }

  /** `integerDigits`: how many digits left of the point a decimal result holds (Spark's result
    * type is the input's precision + 10, at most 38, at the input's scale).
    */
  final case class Sum(alias: String, column: Int, kind: NumericKind, integerDigits: Int = Sum.MaxPrecision)
      extends Aggregate {
    def newAccumulator(): Accumulator = kind match {
      case NumericKind.Integral => new LongSumAcc(column)
      case NumericKind.Fractional => new DoubleSumAcc(column)
      case NumericKind.Decimal => new DecimalSumAcc(column, integerDigits)
    }
    // Long sums wrap and count their wraps, so taking one out is exact; decimals' scales and
    // doubles' rounding are not undone.
    override def invertible: Boolean = kind == NumericKind.Integral
  }
  object Sum {
    val MaxPrecision: Int = 38 // Spark's DecimalType.MAX_PRECISION
  }
  final case class Avg(alias: String, column: Int) extends Aggregate {
    def newAccumulator(): Accumulator = new AvgAcc(column)
  }
  final case class Min(alias: String, column: Int) extends Aggregate {
    def newAccumulator(): Accumulator = new ExtremeAcc(column, wantMax = false)
  }
  final case class Max(alias: String, column: Int) extends Aggregate {
    def newAccumulator(): Accumulator = new ExtremeAcc(column, wantMax = true)
  }
  final case class First(alias: String, column: Int) extends Aggregate {
    def newAccumulator(): Accumulator = new ByTimeAcc(column, wantLast = false)
  }
  final case class Last(alias: String, column: Int) extends Aggregate {
    def newAccumulator(): Accumulator = new ByTimeAcc(column, wantLast = true)
  }
  final case class CollectList(alias: String, column: Int) extends Aggregate {
    def newAccumulator(): Accumulator = new CollectAcc(column, distinct = false)
  }
  final case class CollectSet(alias: String, column: Int) extends Aggregate {
    def newAccumulator(): Accumulator = new CollectAcc(column, distinct = true)
  }

  /** `stddev`, `stddevSamp`, `stddevPop`, `variance`, `varSamp`, `varPop`: one accumulator of
    * (count, mean, M2), a sample (n - 1) or population (n) variance, its square root or not.
    */
  final case class Variance(alias: String, column: Int, sample: Boolean, sqrt: Boolean) extends Aggregate {
    def newAccumulator(): Accumulator = new VarianceAcc(column, sample, sqrt)
  }

  /** `countIf`: rows whose boolean column is true. */
  final case class CountIf(alias: String, column: Int) extends Aggregate {
    def newAccumulator(): Accumulator = new CountIfAcc(column)
    override def invertible: Boolean = true
  }

  /** `minBy` / `maxBy`: the value of `column` at the smallest / largest `ord`. `tieByValue`:
    * the column's values order, so ties on `ord` go to the smallest value, whatever the order.
    */
  final case class ExtremeBy(alias: String, column: Int, ord: Int, wantMax: Boolean, tieByValue: Boolean)
      extends Aggregate {
    override def columns: Seq[Int] = Seq(column, ord)
    def newAccumulator(): Accumulator = new ExtremeByAcc(column, ord, wantMax, tieByValue)
  }

  /** `minByAll` / `maxByAll`: every value of `column` in the rows with the smallest / largest
    * `ord`, ties all kept, or the first `limit` of them. `tieByValue`: the column's values order
    * ([[tieOrdering]]), so the tied values are kept in that order, the first `limit` are the
    * smallest, and the answer does not depend on arrival order.
    */
  final case class ExtremeByAll(
      alias: String,
      column: Int,
      ord: Int,
      wantMax: Boolean,
      tieByValue: Boolean,
      limit: Long = Long.MaxValue
  ) extends Aggregate {
    require(limit > 0, s"aggregate $alias: limit must be positive, got $limit")
    override def columns: Seq[Int] = Seq(column, ord)
    def newAccumulator(): Accumulator = new ExtremeByAllAcc(column, ord, wantMax, tieByValue, limit)
  }

  /** `approxCountDistinct`: HyperLogLog++ with Spark's precision for `rsd` and Spark's hash of
    * a value of the column's type (`hash`).
    */
  final case class ApproxCountDistinct(alias: String, column: Int, rsd: Double, hash: SparkHash.Kind)
      extends Aggregate {
    val precision: Int = HyperLogLog.precisionFor(rsd)
    def newAccumulator(): Accumulator = new HyperLogLogAcc(column, precision, hash)
  }

  /** `percentileApprox`: a quantile summary of rank error at most `1 / accuracy` of the count;
    * one value per percentage, as a `resultType` value, in an array when `array`.
    */
  final case class PercentileApprox(
      alias: String,
      column: Int,
      percentages: IndexedSeq[Double],
      accuracy: Long,
      array: Boolean,
      resultType: NumberType
  ) extends Aggregate {
    def newAccumulator(): Accumulator = new PercentileAcc(column, this)
  }

  /** A user's aggregate (`sparkwin.api.Aggregate`, from the user's jar) over `columns`, whose
    * results become `result` (one of [[Extension.ResultTypes]]). `description` is how the
    * pipeline named it.
    */
  final case class Extension(
      alias: String,
      override val columns: Seq[Int],
      className: String,
      impl: sparkwin.api.Aggregate,
      result: String,
      description: String
  ) extends Aggregate {
    def column: Int = columns.headOption.getOrElse(-1)
    val version: Int = impl.version
    def newAccumulator(): Accumulator = new ExtensionAcc(this, impl.newAccumulator())
    override def toString: String = description
  }

  /** SQL's `agg(...) FILTER (WHERE cond)`: `inner` over the rows whose boolean column `filter`
    * is true (false and null leave it as it was). The accumulator is `inner`'s, state and all: a
    * filter decides only which rows reach it.
    */
  final case class Filtered(inner: Aggregate, filter: Int) extends Aggregate {
    def alias: String = inner.alias
    def column: Int = inner.column
    override def columns: Seq[Int] = inner.columns :+ filter
    def newAccumulator(): Accumulator = new FilteredAcc(inner.newAccumulator(), filter)
    override def invertible: Boolean = inner.invertible
    override def unfiltered: Aggregate = inner.unfiltered
  }

  object Extension {

    /** The result types a user's aggregate may have (Spark's names), each a plain Java value. */
    val ResultTypes: Seq[String] = Seq("bigint", "int", "double", "string", "boolean")
  }

  /** A total order over the values ties keep, Spark's for these types: nulls first, then
    * [[valueOrdering]]'s, records (structs) field by field and sequences (arrays) element by
    * element, a prefix before what extends it.
    */
  val tieOrdering: Ordering[Any] = new Ordering[Any] {
    def compare(a: Any, b: Any): Int = (a, b) match {
      case (null, null) => 0
      case (null, _) => -1
      case (_, null) => 1
      case (x: Record, y: Record) => lexical(x.length, y.length, i => compare(x.get(i), y.get(i)))
      case (x: scala.collection.Seq[_], y: scala.collection.Seq[_]) =>
        val (xs, ys) = (x.toIndexedSeq, y.toIndexedSeq)
        lexical(xs.length, ys.length, i => compare(xs(i), ys(i)))
      case _ => valueOrdering.compare(a, b)
    }

    private def lexical(m: Int, n: Int, at: Int => Int): Int = {
      var i = 0
      var c = 0
      while (c == 0 && i < math.min(m, n)) { c = at(i); i += 1 }
      if (c != 0) c else Integer.compare(m, n)
    }
  }

  /** Orders the values min/max compare: numbers numerically, strings, timestamps, booleans. */
  val valueOrdering: Ordering[Any] = new Ordering[Any] {
    def compare(a: Any, b: Any): Int = (a, b) match {
      case (x: java.math.BigDecimal, y: java.math.BigDecimal) => x.compareTo(y)
      case (x: java.lang.Double, y: java.lang.Number) => java.lang.Double.compare(x, y.doubleValue)
      case (x: java.lang.Float, y: java.lang.Number) => java.lang.Double.compare(x.doubleValue, y.doubleValue)
      case (x: java.lang.Number, y: java.lang.Double) => java.lang.Double.compare(x.doubleValue, y)
      case (x: java.lang.Number, y: java.lang.Float) => java.lang.Double.compare(x.doubleValue, y.doubleValue)
      case (x: java.lang.Number, y: java.lang.Number) => java.lang.Long.compare(x.longValue, y.longValue)
      case (x: String, y: String) => x.compareTo(y)
      case (x: java.lang.Boolean, y: java.lang.Boolean) => x.compareTo(y)
      case (x: java.sql.Timestamp, y: java.sql.Timestamp) => x.compareTo(y)
      case (x: java.time.Instant, y: java.time.Instant) => x.compareTo(y)
      case (x: java.time.LocalDate, y: java.time.LocalDate) => x.compareTo(y)
      case (x: java.sql.Date, y: java.sql.Date) => x.compareTo(y)
      case (x: Comparable[_], y) =>
        x.asInstanceOf[Comparable[Any]].compareTo(y)
      case _ =>
        throw new IllegalArgumentException(s"cannot order $a and $b for min/max")
    }
  }
}

/** count() over rows (column < 0) or count(col) over non-null values. */
final class CountAcc(column: Int) extends Accumulator with Invertible {
  var n: Long = 0L
  def add(record: Record, ts: Long): Unit = if (column < 0 || !record.isNullAt(column)) n += 1
  def merge(other: Accumulator): Unit = n += other.asInstanceOf[CountAcc].n
  def subtract(other: Accumulator): Unit = n -= other.asInstanceOf[CountAcc].n
  def result: Any = n
  def copy(): Accumulator = { val c = new CountAcc(column); c.n = n; c }
  def save: Array[Any] = Array(n)
  def restore(f: Array[Any]): Unit = n = Values.toLong(f(0))
}

/** A sum whose exact value left its result type. The operator's shell turns it into what
  * Spark gives (see `WindowOperator.emitResult`): the wrapped long without ANSI, else null and
  * an error row. `wrapped` is the two's-complement sum (null for decimals, which never wrap).
  */
final case class SumOverflow(wrapped: Any)

object SumOverflow {

  /** How many times `a + v` (which gave `sum`) wrapped past the long range: +1 up, -1 down. */
  @inline def carry(a: Long, v: Long, sum: Long): Long =
    if (((a ^ sum) & (v ^ sum)) >= 0) 0L else if (v < 0) -1L else 1L
}

/** SQL sum: nulls are skipped; a window of only nulls sums to null. The sum wraps as Java's
  * does and counts its wraps (`carry`), so the exact total is `sum + carry * 2^64`: it fits a
  * long exactly when `carry` is 0, whatever the order the values came in or were merged. Spark
  * raises on the first wrap, which depends on that order.
  */
final class LongSumAcc(column: Int) extends Accumulator with Invertible {
  var sum: Long = 0L
  var seen: Boolean = false
  var carry: Long = 0L
  // How many values it holds, only as far as "none" goes (`seen`): a state read back (which
  // does not save it) holds 1 for any number, and a total of such states stays above 0 exactly
  // while one of them holds a value, which is all subtracting needs.
  var values: Long = 0L
  @inline private def plus(v: Long): Unit = {
    val s = sum + v
    carry += SumOverflow.carry(sum, v, s)
    sum = s
  }
  def add(record: Record, ts: Long): Unit = {
    val v = record.get(column)
    if (v != null) { plus(v.asInstanceOf[java.lang.Number].longValue); seen = true; values += 1 }
  }
  def merge(other: Accumulator): Unit = {
    val o = other.asInstanceOf[LongSumAcc]
    if (o.seen) { plus(o.sum); carry += o.carry; seen = true; values += math.max(o.values, 1L) }
  }
  def subtract(other: Accumulator): Unit = {
    val o = other.asInstanceOf[LongSumAcc]
    if (o.seen) {
      val v = o.sum
      val s = sum - v
      // The exact total is sum + carry * 2^64; a wrapped difference moves it by one 2^64.
      if (((sum ^ v) & (sum ^ s)) < 0) carry += (if (v > 0) -1L else 1L)
      sum = s
      carry -= o.carry
      values -= math.max(o.values, 1L)
      seen = values > 0
    }
  }
  def result: Any = if (!seen) null else if (carry != 0) new SumOverflow(sum) else sum
  def copy(): Accumulator = {
    val c = new LongSumAcc(column); c.sum = sum; c.seen = seen; c.carry = carry; c.values = values; c
  }
  def save: Array[Any] = Array(sum, seen, carry)
  // Two fields: saved before 0.4.0, which did not count wraps.
  def restore(f: Array[Any]): Unit = {
    sum = Values.toLong(f(0)); seen = f(1).asInstanceOf[Boolean]
    carry = if (f.length > 2) Values.toLong(f(2)) else 0L
    values = if (seen) 1L else 0L
  }
}

final class DoubleSumAcc(column: Int) extends Accumulator {
  var sum: Double = 0.0
  var seen: Boolean = false
  def add(record: Record, ts: Long): Unit = {
    val v = record.get(column)
    if (v != null) { sum += v.asInstanceOf[java.lang.Number].doubleValue; seen = true }
  }
  def merge(other: Accumulator): Unit = {
    val o = other.asInstanceOf[DoubleSumAcc]
    if (o.seen) { sum += o.sum; seen = true }
  }
  def result: Any = if (seen) sum else null
  def copy(): Accumulator = { val c = new DoubleSumAcc(column); c.sum = sum; c.seen = seen; c }
  def save: Array[Any] = Array(sum, seen)
  def restore(f: Array[Any]): Unit = {
    sum = Values.toDouble(f(0)); seen = f(1).asInstanceOf[Boolean]
  }
}

/** A decimal sum, exact; past `integerDigits` digits left of the point (the result type's) it
  * has overflowed, which Spark answers with an error (ANSI) or null, never a wrapped value.
  */
final class DecimalSumAcc(column: Int, integerDigits: Int = Aggregate.Sum.MaxPrecision) extends Accumulator {
  var sum: java.math.BigDecimal = null
  private def plus(v: java.math.BigDecimal): Unit = sum = if (sum == null) v else sum.add(v)
  def add(record: Record, ts: Long): Unit = {
    val v = record.get(column)
    if (v != null) plus(v match {
      case d: java.math.BigDecimal => d
      case d: scala.math.BigDecimal => d.bigDecimal
      case n: java.lang.Number => new java.math.BigDecimal(n.toString)
      case other => throw new IllegalArgumentException(s"not a decimal: $other")
    })
  }
  def merge(other: Accumulator): Unit = {
    val o = other.asInstanceOf[DecimalSumAcc]
    if (o.sum != null) plus(o.sum)
  }
  def result: Any =
    if (sum != null && sum.precision - sum.scale > integerDigits) new SumOverflow(null) else sum
  def copy(): Accumulator = { val c = new DecimalSumAcc(column, integerDigits); c.sum = sum; c }
  def save: Array[Any] = Array(sum)
  def restore(f: Array[Any]): Unit = sum = f(0).asInstanceOf[java.math.BigDecimal]
}

/** avg over non-null values, as a double; null for a window of only nulls. */
final class AvgAcc(column: Int) extends Accumulator {
  var sum: Double = 0.0
  var n: Long = 0L
  def add(record: Record, ts: Long): Unit = {
    val v = record.get(column)
    if (v != null) { sum += v.asInstanceOf[java.lang.Number].doubleValue; n += 1 }
  }
  def merge(other: Accumulator): Unit = {
    val o = other.asInstanceOf[AvgAcc]; sum += o.sum; n += o.n
  }
  def result: Any = if (n == 0) null else sum / n
  def copy(): Accumulator = { val c = new AvgAcc(column); c.sum = sum; c.n = n; c }
  def save: Array[Any] = Array(sum, n)
  def restore(f: Array[Any]): Unit = { sum = Values.toDouble(f(0)); n = Values.toLong(f(1)) }
}

/** min/max over non-null values, in the value's natural order. */
final class ExtremeAcc(column: Int, wantMax: Boolean) extends Accumulator {
  var best: Any = null
  private def offer(v: Any): Unit =
    if (v != null) {
      if (best == null) best = v
      else {
        val c = Aggregate.valueOrdering.compare(v, best)
        if (if (wantMax) c > 0 else c < 0) best = v
      }
    }
  def add(record: Record, ts: Long): Unit = offer(record.get(column))
  def merge(other: Accumulator): Unit = offer(other.asInstanceOf[ExtremeAcc].best)
  def result: Any = best
  def copy(): Accumulator = { val c = new ExtremeAcc(column, wantMax); c.best = best; c }
  def save: Array[Any] = Array(best)
  def restore(f: Array[Any]): Unit = best = f(0)
}

/** first/last by event time; among equal timestamps the earlier (first) or later (last)
  * arrival wins, so the result does not depend on how a batch was split.
  */
final class ByTimeAcc(column: Int, wantLast: Boolean) extends Accumulator {
  var ts: Long = 0L
  var value: Any = null
  var seen: Boolean = false
  private def offer(t: Long, v: Any): Unit =
    if (!seen || (if (wantLast) t >= ts else t < ts)) { ts = t; value = v; seen = true }
  def add(record: Record, t: Long): Unit = offer(t, record.stored(column))
  def merge(other: Accumulator): Unit = {
    val o = other.asInstanceOf[ByTimeAcc]
    if (o.seen) offer(o.ts, o.value)
  }
  def result: Any = value
  def copy(): Accumulator = {
    val c = new ByTimeAcc(column, wantLast); c.ts = ts; c.value = value; c.seen = seen; c
  }
  def save: Array[Any] = Array(ts, value, seen)
  def restore(f: Array[Any]): Unit = {
    ts = Values.toLong(f(0)); value = f(1); seen = f(2).asInstanceOf[Boolean]
  }
}

/** collectList / collectSet of non-null values, in arrival order. */
final class CollectAcc(column: Int, distinct: Boolean) extends Accumulator {
  val values = new java.util.ArrayList[Any]()
  private lazy val seen = new java.util.HashSet[Any]()
  private def offer(v: Any): Unit =
    if (v != null && (!distinct || seen.add(v))) values.add(v)
  def add(record: Record, ts: Long): Unit = offer(record.stored(column))
  def merge(other: Accumulator): Unit = other.asInstanceOf[CollectAcc].values.forEach(offer(_))
  def result: Any = {
    val out = new Array[Any](values.size)
    var i = 0
    while (i < out.length) { out(i) = values.get(i); i += 1 }
    out.toSeq
  }
  def copy(): Accumulator = { val c = new CollectAcc(column, distinct); c.merge(this); c }
  def save: Array[Any] = values.toArray.asInstanceOf[Array[Any]]
  def restore(f: Array[Any]): Unit = { values.clear(); f.foreach(offer) }
}

/** A user's accumulator. Its saved fields start with the aggregate's class and version, so a
  * checkpoint written by another class or version is refused by name instead of misread; its
  * result is converted to the declared type, so Spark's rows get the Java type they expect.
  */
final class ExtensionAcc(spec: Aggregate.Extension, val impl: sparkwin.api.Aggregate.Accumulator)
    extends Accumulator {
  def add(record: Record, ts: Long): Unit = impl.add(record, ts)
  def merge(other: Accumulator): Unit = impl.merge(other.asInstanceOf[ExtensionAcc].impl)

  def result: Any = impl.result match {
    case null => null
    case v =>
      (spec.result, v) match {
        case ("bigint", n: java.lang.Number) => n.longValue
        case ("int", n: java.lang.Number) => n.intValue
        case ("double", n: java.lang.Number) => n.doubleValue
        case ("string", s: String) => s
        case ("boolean", b: java.lang.Boolean) => b
        case _ =>
          throw new IllegalStateException(
            s"${spec.description} returned a ${v.getClass.getName} where its resultType is ${spec.result}"
          )
      }
  }

  def copy(): Accumulator = { val c = spec.newAccumulator(); c.restore(save); c }

  def save: Array[Any] = {
    val fields = impl.save
    val out = new Array[Any](fields.length + 2)
    out(0) = spec.className
    out(1) = spec.version
    var i = 0
    while (i < fields.length) {
      val v = fields(i)
      if (!ExtensionAcc.storable(v))
        throw new IllegalArgumentException(
          s"${spec.description} saves a ${v.getClass.getName}: accumulators save Long, Integer, " +
            "Double, Boolean, String or byte[] values (or null)"
        )
      out(i + 2) = v
      i += 1
    }
    out
  }

  def restore(fields: Array[Any]): Unit = {
    val (writer, version) =
      if (fields.length >= 2) (fields(0), fields(1)) else (null, null)
    if (writer != spec.className || version != spec.version)
      throw new sparkwin.core.IncompatibleStateException(
        s"this checkpoint holds the aggregate '${spec.alias}' saved by " +
          (if (writer == null) "another aggregate" else s"$writer version $version") +
          s", but the pipeline's is ${spec.className} version ${spec.version}: restore the aggregate " +
          "as it was to resume, or start the query from a new checkpoint"
      )
    impl.restore(fields.drop(2).map(_.asInstanceOf[AnyRef]))
  }
}

object ExtensionAcc {
  private def storable(v: Any): Boolean = v match {
    case null | _: java.lang.Long | _: java.lang.Integer | _: java.lang.Double | _: java.lang.Boolean |
        _: String | _: Array[Byte] =>
      true
    case _ => false
  }
}

/** [[Aggregate.Filtered]]'s accumulator: `inner`, fed only the rows whose `filter` is true. */
final class FilteredAcc(val inner: Accumulator, filter: Int) extends Accumulator with Invertible {
  def add(record: Record, ts: Long): Unit =
    if (record.stored(filter) == java.lang.Boolean.TRUE) inner.add(record, ts)
  def merge(other: Accumulator): Unit = inner.merge(other.asInstanceOf[FilteredAcc].inner)
  def subtract(other: Accumulator): Unit =
    inner.asInstanceOf[Invertible].subtract(other.asInstanceOf[FilteredAcc].inner)
  def result: Any = inner.result
  def copy(): Accumulator = new FilteredAcc(inner.copy(), filter)
  def save: Array[Any] = inner.save
  def restore(fields: Array[Any]): Unit = inner.restore(fields)
}
