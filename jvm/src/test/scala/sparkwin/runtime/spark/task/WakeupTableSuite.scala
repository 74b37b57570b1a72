package sparkwin.runtime.spark.task

import org.scalacheck.Gen
import org.scalacheck.Prop.forAll

/** A group's wake-up table read in place answers as the decoded table would, and writes the
  * table with its changes in the record's layout.
  */
class WakeupTableSuite extends munit.ScalaCheckSuite {
  private def key(xs: Int*): Array[Byte] = xs.map(_.toByte).toArray

  private def record(wakeups: Seq[Wakeup], processing: Boolean = false): Array[Byte] =
    GroupRecord.encode(GroupRecord(8, 1L, wakeups.size.toLong, wakeups, processing = processing))

  private def listed(table: WakeupTable): List[(Seq[Byte], Long, Long)] =
    table.entries.map(w => (w.key.toSeq, w.at, w.processingAt)).toList

  private def rewritten(stored: GroupRecord.Stored, processing: Boolean): GroupRecord = {
    val bytes = GroupRecord.write(8, 1L, stored.table.size.toLong, stored.table, None, processing)
    GroupRecord.decode(bytes)
  }

  test("a read table answers lookups; unchanged entries keep their place, changes follow in order") {
    val stored = GroupRecord.read(record((0 until 40).map(i => Wakeup(key(i % 7, i), 1000L + i))))
    val t = stored.table
    assertEquals((t.size, t.earliest()), (40, (1000L, Long.MaxValue)))
    assertEquals(t.get(key(0, 7)).at, 1007L)
    assert(t.get(key(7)) == null && !t.contains(key(7)) && t.contains(key(0, 7)))
    t.put(key(0, 7), Wakeup(null, 5L))
    t.remove(key(1, 8))
    t.remove(key(9)) // not there: nothing to remove
    t.put(key(0x80), Wakeup(null, 2000L))
    t.put(key(3), Wakeup(null, 3000L))
    t.remove(key(3)) // put, then removed: nothing is left of it
    assertEquals(t.size, 40)
    assertEquals(t.get(key(0, 7)).at, 5L)
    assert(t.get(key(1, 8)) == null && t.get(key(3)) == null && t.changed)
    assertEquals(t.earliest(), (5L, Long.MaxValue))
    val back = rewritten(stored, processing = false)
    val kept =
      (0 until 40).filter(i => i != 7 && i != 8).map(i => (Seq[Byte]((i % 7).toByte, i.toByte), 1000L + i))
    assertEquals(
      back.wakeups.map(w => (w.key.toSeq, w.at)).toList,
      (kept ++ Seq((Seq[Byte](0, 7), 5L), (Seq[Byte](0x80.toByte), 2000L))).toList
    )
  }

  property("any run of gets, puts and removes (a key's change often right after its get) answers as a map") {
    // Few keys, so that a key is read, changed, removed and put again within one run, with the
    // same array for a key as the loop passes: a change reuses what its get found.
    val op = Gen.zip(Gen.choose(0, 3), Gen.choose(0, 11), Gen.choose(0L, 99L))
    forAll(Gen.listOf(Gen.choose(0, 11)), Gen.listOf(op)) { (storedKeys, ops) =>
      val keys = (0 until 12).map(i => key(0, 0, 0, i))
      val initial = storedKeys.distinct.map(i => Wakeup(keys(i), 100L + i))
      val t = GroupRecord.read(record(initial)).table
      val model = scala.collection.mutable.LinkedHashMap[Int, Long]()
      initial.foreach(w => model(w.key(3).toInt) = w.at)
      ops.foreach { case (what, i, at) =>
        what match {
          case 0 | 1 => assertEquals(Option(t.get(keys(i))).map(_.at), model.get(i))
          case 2 => t.put(keys(i), Wakeup(null, at)); model(i) = at
          case _ => t.remove(keys(i)); model.remove(i)
        }
        assertEquals(t.size, model.size)
      }
      val back = GroupRecord.decode(GroupRecord.write(8, 1L, t.size.toLong, t, None, false))
      assertEquals(back.wakeups.map(w => (w.key(3).toInt, w.at)).toMap, model.toMap)
    }
  }

  test("the due keys are those the test accepts, changes included, in table order") {
    val t = GroupRecord.read(record(Seq(Wakeup(key(5), 50L), Wakeup(key(1), 10L), Wakeup(key(3), 30L)))).table
    t.put(key(2), Wakeup(null, 20L))
    t.put(key(3), Wakeup(null, 300L))
    t.remove(key(1))
    assertEquals(t.due((at, _) => at <= 50L).map(_.key.toSeq).toList, List(Seq[Byte](5), Seq[Byte](2)))
  }

  test("a table is read without decoding its keys: lookups probe the bytes, a write copies them") {
    // Many keys alike but for their last byte, as UnsafeRow bytes of numeric keys are.
    val many = (0 until 5000).map(i => Wakeup(Array.fill[Byte](8)(0) ++ key(i & 0xff, i >> 8), i.toLong))
    val bytes = record(many)
    val t = GroupRecord.read(bytes).table
    assert(many.forall(w => t.get(w.key).at == w.at))
    assert(!t.contains(Array.fill[Byte](8)(0) ++ key(0, 20)))
    assertEquals(GroupRecord.write(8, 1L, 5000L, t, None, processing = false).toSeq, bytes.toSeq)
  }

  test("a table read with one time per key is written with both when the layout asks") {
    val stored = GroupRecord.read(record(Seq(Wakeup(key(1), 10L), Wakeup(key(2), 20L))))
    stored.table.put(key(3), Wakeup(null, 30L, 33L))
    val back = rewritten(stored, processing = true)
    assert(back.processing)
    assertEquals(
      back.wakeups.map(w => (w.at, w.processingAt)).toList,
      List((10L, Long.MaxValue), (20L, Long.MaxValue), (30L, 33L))
    )
  }

  test("a settled table reads as its written bytes; one with many changes asks to be read again") {
    val bytes = record((0 until 100).map(i => Wakeup(key(i), i.toLong)))
    val t = GroupRecord.read(bytes).table
    (0 until 20).foreach(i => t.remove(key(i)))
    t.put(key(200), Wakeup(null, -1L))
    val written = GroupRecord.write(8, 1L, 81L, t, None, processing = false)
    assert(t.settle())
    assert(!t.changed)
    assertEquals((t.earliest(), t.size), ((-1L, Long.MaxValue), 81))
    assertEquals(listed(t), listed(GroupRecord.read(written).table))
    // 64 changes and a quarter of the stored entries: read the bytes again.
    (20 until 100).foreach(i => t.put(key(i), Wakeup(null, 7L)))
    assert(!t.settle())
  }

  test("a repeated key is refused, never misread") {
    val twice = Seq(Wakeup(key(1), 1L), Wakeup(key(1), 2L))
    val out = java.nio.ByteBuffer.allocate(25 + 2 * (4 + 1 + 8))
    out.put(GroupRecord.Version).putInt(8).putLong(1L).putLong(2L).putInt(2)
    twice.foreach(w => out.putInt(w.key.length).put(w.key).putLong(w.at))
    val e = intercept[IllegalStateException](GroupRecord.read(out.array()))
    assert(e.getMessage.contains("wake-up 1 repeats a key"), e.getMessage)
  }

  property("after any changes, on either layout, a table reads back as the map it stands for") {
    val op = for {
      k <- Gen.choose(0, 60)
      put <- Gen.oneOf(true, true, false)
      at <- Gen.choose(-5L, 5L)
    } yield (k, put, at)
    forAll(Gen.listOf(op), Gen.listOf(op), Gen.oneOf(true, false)) { (first, second, processing) =>
      def k(i: Int) = key(i % 7, i) // shared prefixes and different lengths
      var model = Map.empty[Seq[Byte], (Long, Long)]
      var bytes = record(Nil)
      var settled: WakeupTable = null // the last round's table, when it settled (as a kept record)
      for (ops <- List(first, second)) {
        val t = if (settled != null) settled else GroupRecord.read(bytes).table
        assert(!t.changed)
        ops.foreach { case (i, put, at) =>
          val pAt = if (processing) at * 2 else Long.MaxValue
          if (put) { t.put(k(i), Wakeup(null, at, pAt)); model += k(i).toSeq -> ((at, pAt)) }
          else { t.remove(k(i)); model -= k(i).toSeq }
          assertEquals(t.size, model.size)
          assertEquals(t.contains(k(i)), model.contains(k(i).toSeq))
          assertEquals(Option(t.get(k(i))).map(w => (w.at, w.processingAt)), model.get(k(i).toSeq))
        }
        val earliest = (model.values.map(_._1) ++ Seq(Long.MaxValue)).min
        assertEquals(t.earliest(), (earliest, (model.values.map(_._2) ++ Seq(Long.MaxValue)).min))
        bytes = GroupRecord.write(8, 1L, 0L, t, None, processing)
        settled = if (t.settle()) t else null
      }
      val back = GroupRecord.read(bytes).table
      val expected = model.toList.map { case (key, (at, pAt)) => (key, at, pAt) }
      assertEquals(listed(back).sortBy(_.toString), expected.sortBy(_.toString))
      assertEquals(back.earliest()._1, (model.values.map(_._1) ++ Seq(Long.MaxValue)).min)
      true
    }
  }
}
