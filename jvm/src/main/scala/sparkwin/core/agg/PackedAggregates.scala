package sparkwin.core.agg

import sparkwin.core.Record

/** Aggregates that fold into longs, for operators that keep state in primitive arrays: count,
  * integral and fractional sum, and avg, two slots each (a value, and a seen flag or a count;
  * doubles as their bits). An integral sum's second slot is `carry << 1 | seen`, with
  * [[LongSumAcc]]'s count of wraps (0 and 1 as before 0.4.0, which did not count them). A row is `slots` consecutive longs from a base index; all zeros is
  * the empty row. Results are those of the aggregates' own accumulators.
  */
final class PackedAggregates(aggregates: Array[Aggregate]) {
  import PackedAggregates._

  private val kinds = aggregates.map(kindOf)
  private val columns = aggregates.map(_.column)
  val slots: Int = 2 * aggregates.length

  def add(values: Array[Long], base: Int, record: Record): Unit = {
    var j = 0
    while (j < kinds.length) {
      val at = base + 2 * j
      (kinds(j): @annotation.switch) match {
        case CountRows => values(at) += 1
        case CountValues => if (!record.isNullAt(columns(j))) values(at) += 1
        case LongSum =>
          val v = record.get(columns(j))
          if (v != null) longPlus(values, at, v.asInstanceOf[java.lang.Number].longValue, 1L)
        case DoubleSum =>
          val v = record.get(columns(j))
          if (v != null) {
            values(at) = plus(values(at), v.asInstanceOf[java.lang.Number].doubleValue)
            values(at + 1) = 1
          }
        case Avg =>
          val v = record.get(columns(j))
          if (v != null) {
            values(at) = plus(values(at), v.asInstanceOf[java.lang.Number].doubleValue)
            values(at + 1) += 1
          }
      }
      j += 1
    }
  }

  /** Folds the row at `fromBase` of `from` into the row at `intoBase` of `into`. */
  def merge(into: Array[Long], intoBase: Int, from: Array[Long], fromBase: Int): Unit = {
    var j = 0
    while (j < kinds.length) {
      val at = intoBase + 2 * j
      val src = fromBase + 2 * j
      (kinds(j): @annotation.switch) match {
        case CountRows | CountValues => into(at) += from(src)
        case LongSum => if (from(src + 1) != 0) longPlus(into, at, from(src), from(src + 1))
        case DoubleSum =>
          if (from(src + 1) != 0) {
            into(at) = plus(into(at), java.lang.Double.longBitsToDouble(from(src)))
            into(at + 1) = 1
          }
        case Avg =>
          into(at) = plus(into(at), java.lang.Double.longBitsToDouble(from(src)))
          into(at + 1) += from(src + 1)
      }
      j += 1
    }
  }

  /** Sets accumulators of the same aggregates (as `Accumulator.fresh` makes them) to the row
    * at `base`, whatever they held: a pre-aggregated group reaches the per-key operators this
    * way without a fresh accumulator per group.
    */
  def load(into: Array[Accumulator], values: Array[Long], base: Int): Unit = {
    var j = 0
    while (j < kinds.length) {
      val at = base + 2 * j
      (kinds(j): @annotation.switch) match {
        case CountRows | CountValues => into(j).asInstanceOf[CountAcc].n = values(at)
        case LongSum =>
          val a = into(j).asInstanceOf[LongSumAcc]
          a.sum = values(at)
          a.seen = values(at + 1) != 0
          a.carry = values(at + 1) >> 1
          a.values = if (a.seen) 1L else 0L
        case DoubleSum =>
          val a = into(j).asInstanceOf[DoubleSumAcc]
          a.sum = java.lang.Double.longBitsToDouble(values(at))
          a.seen = values(at + 1) != 0
        case Avg =>
          val a = into(j).asInstanceOf[AvgAcc]
          a.sum = java.lang.Double.longBitsToDouble(values(at))
          a.n = values(at + 1)
      }
      j += 1
    }
  }

  /** The row's results, in plan order. */
  def results(values: Array[Long], base: Int): Array[Any] = {
    val out = new Array[Any](kinds.length)
    var j = 0
    while (j < kinds.length) {
      val at = base + 2 * j
      out(j) = (kinds(j): @annotation.switch) match {
        case CountRows | CountValues => values(at)
        case LongSum =>
          val flag = values(at + 1)
          if (flag == 0) null else if ((flag >> 1) != 0) new SumOverflow(values(at)) else values(at)
        case DoubleSum => if (values(at + 1) != 0) java.lang.Double.longBitsToDouble(values(at)) else null
        case Avg =>
          if (values(at + 1) == 0) null else java.lang.Double.longBitsToDouble(values(at)) / values(at + 1)
      }
      j += 1
    }
    out
  }
}

object PackedAggregates {
  private final val CountRows = 0
  private final val CountValues = 1
  private final val LongSum = 2
  private final val DoubleSum = 3
  private final val Avg = 4

  private def kindOf(a: Aggregate): Int = a match {
    case Aggregate.Count(_, c) => if (c < 0) CountRows else CountValues
    case Aggregate.Sum(_, _, NumericKind.Integral, _) => LongSum
    case Aggregate.Sum(_, _, NumericKind.Fractional, _) => DoubleSum
    case _: Aggregate.Avg => Avg
    case other => throw new IllegalArgumentException(s"$other does not pack into longs")
  }

  /** Whether every one of `aggregates` packs (none at all does not: nothing to pack). */
  def packs(aggregates: Seq[Aggregate]): Boolean =
    aggregates.nonEmpty && aggregates.forall {
      case _: Aggregate.Count | _: Aggregate.Avg => true
      case Aggregate.Sum(_, _, kind, _) => kind != NumericKind.Decimal
      case _ => false
    }

  /** Adds `v` to the integral sum at `at`; `flag` is the added value's second slot (1 for a
    * record, a partial's own `carry << 1 | 1` when merging).
    */
  @inline private def longPlus(values: Array[Long], at: Int, v: Long, flag: Long): Unit = {
    val a = values(at)
    val sum = a + v
    val carry = (values(at + 1) >> 1) + (flag >> 1) + SumOverflow.carry(a, v, sum)
    values(at + 1) = carry << 1 | 1L
    values(at) = sum
  }

  @inline private def plus(bits: Long, v: Double): Long =
    java.lang.Double.doubleToRawLongBits(java.lang.Double.longBitsToDouble(bits) + v)
}
