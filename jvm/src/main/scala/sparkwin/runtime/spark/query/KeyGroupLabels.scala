package sparkwin.runtime.spark.query

import sparkwin.plan._
import sparkwin.runtime.spark._

import org.apache.spark.unsafe.hash.Murmur3_x86_32

/** The value each key group goes to Spark's shuffle as. Spark hashes a grouping key again to
  * pick its partition (Murmur3, seed 42, modulo the partitions), and hashing the groups
  * 0..G-1 spreads them unevenly: 128 groups over 4 partitions land 25/41/29/33, so one task of
  * the stateful stage has a third more keys than another. Group `i` goes instead as the
  * smallest non-negative Int whose hash is `i` modulo G: for any number of partitions that
  * divides G (powers of two with the default G = 128), every partition gets G/P groups.
  */
object KeyGroupLabels {
  private val SparkHashSeed = 42

  def apply(groups: Int): Array[Int] = {
    require(groups >= 1, s"key groups must be at least 1, got $groups")
    val labels = Array.fill(groups)(-1)
    var missing = groups
    var candidate = 0
    // Each candidate fills the group its hash names, if still empty: about G ln G hashes.
    while (missing > 0) {
      val group = Math.floorMod(Murmur3_x86_32.hashInt(candidate, SparkHashSeed), groups)
      if (labels(group) < 0) { labels(group) = candidate; missing -= 1 }
      candidate += 1
    }
    labels
  }
}
