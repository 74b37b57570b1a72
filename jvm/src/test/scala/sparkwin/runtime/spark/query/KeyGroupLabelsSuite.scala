package sparkwin.runtime.spark.query

import sparkwin.plan._
import sparkwin.runtime.spark._

import org.apache.spark.sql.catalyst.expressions.{Literal, Murmur3Hash, Pmod}

/** Labels name every key group once, and Spark's own shuffle hash spreads them evenly over any
  * number of partitions that divides the number of groups.
  */
class KeyGroupLabelsSuite extends munit.FunSuite {
  // Spark's partition for a grouping key: pmod(murmur3(key), partitions), as HashPartitioning.
  private def sparkPartition(label: Int, partitions: Int): Int =
    Pmod(new Murmur3Hash(Seq(Literal(label))), Literal(partitions)).eval().asInstanceOf[Int]

  for (groups <- Seq(1, 2, 3, 128, 1000, 4096)) {
    test(s"$groups groups: distinct labels, each hashing back to its own group") {
      val labels = KeyGroupLabels(groups)
      assertEquals(labels.length, groups)
      assertEquals(labels.distinct.length, groups)
      assert(labels.forall(_ >= 0))
      labels.zipWithIndex.foreach { case (l, g) => assertEquals(sparkPartition(l, groups), g) }
    }
  }

  test("128 groups spread evenly over 1 to 128 partitions, where plain numbers do not") {
    val labels = KeyGroupLabels(128)
    for (partitions <- Seq(1, 2, 4, 8, 16, 32, 64, 128)) {
      val shares = labels.groupBy(sparkPartition(_, partitions)).values.map(_.length).toSet
      assertEquals(shares, Set(128 / partitions), s"$partitions partitions")
    }
    val plain = (0 until 128).groupBy(sparkPartition(_, 4)).values.map(_.length).toSeq.sorted
    assertEquals(plain, Seq(25, 29, 33, 41))
  }
}
