package sparkwin.runtime.checkpoint

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.spark.sql.Row

import sparkwin.runtime.spark.task.{GroupHost, KeyGroupLoop, LoopFixtures, LoopSpec}

/** What a state reader shows of a key group is what the loop left in it: each algorithm's open
  * windows with their aggregates now, the keys' timers, and the group's size and Spark timer.
  */
class StateViewsSuite extends munit.FunSuite {
  private val mapper = new ObjectMapper()

  /** The fixtures' plan (user, amount, ts; sum of amount per user) with `change` applied. */
  private def plan(change: ObjectNode => Unit): String = {
    val root = mapper.readTree(LoopFixtures.tumblingPlanJson).asInstanceOf[ObjectNode]
    change(root)
    mapper.writeValueAsString(root)
  }

  private def node(json: String): com.fasterxml.jackson.databind.JsonNode = mapper.readTree(json)

  /** A group's entries as a map state holds them (4.x: keys packed in buckets). */
  private final class Host(val watermark: Long) extends GroupHost {
    val entries = new java.util.TreeMap[Array[Byte], Array[Byte]](StateViewsSuite.unsigned)
    var timerAt: Long = Long.MinValue
    def get(key: Array[Byte]): Array[Byte] = entries.get(key)
    def put(key: Array[Byte], value: Array[Byte]): Unit = entries.put(key, value)
    def remove(key: Array[Byte]): Unit = entries.remove(key)
    def packsKeys: Boolean = true
    def batchTime: Long = 1000L
    def timer(current: Long, wanted: Long, firing: Boolean): Unit = timerAt = wanted
    def all: Seq[(Array[Byte], Array[Byte])] = {
      val out = Seq.newBuilder[(Array[Byte], Array[Byte])]
      entries.forEach((k, v) => out += ((k, v)))
      out.result()
    }
  }

  /** The views of the group the loop leaves after `rows` (user, amount, ts) at Spark watermark `wm`. */
  private def views(planJson: String, wm: Long, rows: Row*): (Host, Map[String, Seq[Row]]) = {
    val host = new Host(wm)
    val loop = new KeyGroupLoop(
      LoopSpec(planJson, java8Time = false, combined = false, 1, None, tickColumn = -1)
    )
    loop.call(host, rows.iterator, firing = false).foreach(_ => ())
    val out = new StateViews(planJson, java8Time = false).rows(7, 3, host.all).toSeq
    val byView = out.groupBy(_.getString(0)).map { case (view, rs) =>
      view -> rs.map(r => r.getStruct(1 + StateViews.Views.indexOf(view)))
    }
    (host, byView)
  }

  private def ms(r: Row, i: Int): Long = r.getTimestamp(i).getTime

  test("the general algorithm's windows show their aggregates now, panes fired and trigger state") {
    // 10 ms windows, a count trigger of 2, lateness 20: a fires early once, b has one element.
    val p = plan { root =>
      root.set[ObjectNode]("trigger", node("""{"kind": "count", "count": 2}"""))
      root.put("allowedLatenessMs", 20)
    }
    val (host, v) = views(p, 0L, Row("a", 1L, 1L), Row("a", 2L, 2L), Row("a", 4L, 3L), Row("b", 8L, 15L))
    val windows = v("windows").map(r => (r.getString(1), ms(r, 2), ms(r, 3), r.getLong(5), r.getLong(7)))
    // (user, start, end, sum now, panes fired): a's window fired once (at 2 elements) and holds 3.
    assertEquals(windows.sortBy(_._1), Seq(("a", 0L, 10L, 7L, 1L), ("b", 10L, 20L, 8L, 0L)))
    val a = v("windows").find(_.getString(1) == "a").get
    assertEquals(a.getMap[String, String](10).keySet.toList, List("count"), "the count trigger's own state")
    assertEquals(a.getMap[String, String](10)("count"), "1")
    // A count trigger sets no timer: each window has its cleanup (end - 1 + 20), on event time.
    val timers = v("timers").map(r => (r.getString(1), r.getString(2), ms(r, 3))).sorted
    assertEquals(timers, Seq(("a", "event", 29L), ("b", "event", 39L)))
    val group = v("keyGroups").loneElement
    assertEquals((group.getInt(0), group.getInt(1), group.getLong(2)), (7, 3, 2L))
    assertEquals(ms(group, 7), host.timerAt, "the group's Spark timer, as the loop set it")
  }

  test("sliced windows show every window not fired yet, each the merge of its slices") {
    // Sliding 10 ms every 5 ms, default trigger: sliced. At watermark 0 nothing fired.
    val p = plan { root =>
      root.set[ObjectNode](
        "assigner",
        node("""{"kind": "sliding", "sizeMs": 10, "slideMs": 5, "offsetMs": 0, "eventTime": true}""")
      )
    }
    val (_, v) = views(p, 0L, Row("a", 1L, 1L), Row("a", 2L, 6L), Row("a", 4L, 12L))
    val windows = v("windows").map(r => (ms(r, 2), ms(r, 3), r.getLong(5))).sorted
    assertEquals(windows, Seq((-5L, 5L, 1L), (0L, 10L, 3L), (5L, 15L, 6L), (10L, 20L, 4L)))
    assert(v("windows").forall(_.isNullAt(6)), "slices keep aggregates, not elements")
  }

  test("sessions show each live session; a window reader changes nothing the loop reads next") {
    val p = plan { root =>
      root.set[ObjectNode](
        "assigner",
        node("""{"kind": "session", "gapMs": 5, "gapColumn": null, "eventTime": true}""")
      )
    }
    val (host, v) = views(p, 0L, Row("a", 1L, 1L), Row("a", 2L, 4L), Row("a", 4L, 20L))
    assertEquals(
      v("windows").map(r => (ms(r, 2), ms(r, 3), r.getLong(5))).sorted,
      Seq((1L, 9L, 3L), (20L, 25L, 4L))
    )
    val before = host.all.map { case (k, b) => (k.toSeq, b.toSeq) }
    new StateViews(p, java8Time = false).rows(7, 3, host.all).foreach(_ => ())
    assertEquals(host.all.map { case (k, b) => (k.toSeq, b.toSeq) }, before)
  }

  test("a Storm window shows the key's queue") {
    val p = plan { root =>
      root.set[ObjectNode](
        "assigner",
        node("""{"kind": "storm", "length": {"durationMs": 10}, "slide": {"durationMs": 5}, "lagMs": 0}""")
      )
      root.set[ObjectNode](
        "watermark",
        node("""{"kind": "stormLag", "lagMs": 0, "idleTimeoutMs": null, "intervalMs": 1000}""")
      )
    }
    val (_, v) = views(p, 0L, Row("a", 1L, 1L), Row("a", 2L, 3L))
    val w = v("windows").loneElement
    assert(w.isNullAt(2), "Storm windows have no start")
    assertEquals((w.getLong(5), w.getLong(6)), (3L, 2L))
  }

  implicit private class Lone[A](xs: Seq[A]) {
    def loneElement: A = { assertEquals(xs.size, 1, xs.toString); xs.head }
  }
}

object StateViewsSuite {

  /** Byte arrays in unsigned lexicographic order (`Arrays.compareUnsigned` is not in Java 8's API,
    * which the Scala 2.12 jar is built against).
    */
  val unsigned: java.util.Comparator[Array[Byte]] = (a: Array[Byte], b: Array[Byte]) => {
    val n = math.min(a.length, b.length)
    var i = 0
    while (i < n && a(i) == b(i)) i += 1
    if (i < n) (a(i) & 0xff) - (b(i) & 0xff) else a.length - b.length
  }
}
