package sparkwin.runtime.spark.task

import org.scalacheck.Gen
import org.scalacheck.Prop.forAll

/** Spark 3.5's one value per key group: it holds what a map of entries holds, in the documented
  * layout, and anything else is refused, never misread.
  */
class GroupTableSuite extends munit.ScalaCheckSuite {
  private def bytes(xs: Int*): Array[Byte] = xs.map(_.toByte).toArray

  /** The table's entries, decoded straight from the layout. */
  private def entries(value: Array[Byte]): List[(Seq[Byte], Seq[Byte])] = {
    val in = java.nio.ByteBuffer.wrap(value)
    assertEquals(in.get(), GroupTable.Version)
    List.fill(in.getInt()) {
      val k = new Array[Byte](in.getInt()); in.get(k)
      val v = new Array[Byte](in.getInt()); in.get(v)
      (k.toSeq, v.toSeq)
    }
  }

  test("entries are kept in unsigned byte order, the empty key (the group's record) first") {
    val t = GroupTable.empty()
    t.put(bytes(0x80), bytes(1))
    t.put(bytes(1, 2), bytes(2))
    t.put(Array.emptyByteArray, bytes(3))
    t.put(bytes(1), bytes(4))
    t.put(bytes(0), bytes(5))
    val value = t.encode()
    assertEquals(
      entries(value).map(_._1),
      List(Seq[Byte](), Seq[Byte](0), Seq[Byte](1), Seq[Byte](1, 2), Seq[Byte](0x80.toByte))
    )
    assertEquals(value.length, 5 + 5 * 8 + (0 + 1 + 1 + 2 + 1) + 5)
  }

  test("a read table answers from the value, and changes replace, add and remove entries") {
    val t = GroupTable.empty()
    (0 until 50).foreach(i => t.put(bytes(i, i), bytes(i)))
    val read = GroupTable.read(t.encode())
    assert(!read.changed)
    assertEquals(read.get(bytes(7, 7)).toSeq, Seq[Byte](7))
    assert(read.get(bytes(7)) == null)
    read.put(bytes(7, 7), bytes(70, 70))
    read.remove(bytes(8, 8))
    read.put(bytes(100), bytes(1))
    read.remove(bytes(9)) // not there: nothing to remove
    assertEquals(read.get(bytes(7, 7)).toSeq, Seq[Byte](70, 70))
    assert(read.get(bytes(8, 8)) == null)
    val again = entries(read.encode()).toMap
    assertEquals(again.size, 50)
    assertEquals(again(Seq[Byte](7, 7)), Seq[Byte](70, 70))
    assert(!again.contains(Seq[Byte](8, 8)))
    assertEquals(again(Seq[Byte](100)), Seq[Byte](1))
  }

  test("a table whose every entry goes encodes as null: the group's state is removed") {
    val t = GroupTable.empty()
    t.put(bytes(1), bytes(1))
    val read = GroupTable.read(t.encode())
    read.remove(bytes(1))
    assert(read.changed)
    assert(read.encode() == null)
    assert(GroupTable.empty().encode() == null)
  }

  property("after any changes a table reads back as the map it stands for") {
    val op = for {
      k <- Gen.choose(0, 40)
      put <- Gen.oneOf(true, true, false)
      v <- Gen.choose(0, 5)
      read <- Gen.choose(-1, 40) // a key read first (as a call loads before it saves), or none
    } yield (k, put, v, read)
    forAll(Gen.listOf(op), Gen.listOf(op)) { (first, second) =>
      // Keys with a long shared prefix and short ones, as UnsafeRow keys and the group's record.
      // One array a key, as a call passes the same one to get and put (the table keeps its place).
      val keys = Array.tabulate(41)(i => Array.fill(i % 3 * 9)(0x55.toByte) ++ bytes(i % 7, i))
      def k(i: Int) = keys(i)
      var model = Map.empty[Seq[Byte], Seq[Byte]]
      var value: Array[Byte] = null
      for (ops <- List(first, second)) {
        val t = GroupTable.read(value)
        ops.foreach { case (i, put, v, read) =>
          if (read >= 0) assertEquals(Option(t.get(k(read))).map(_.toSeq), model.get(k(read).toSeq))
          if (put) { t.put(k(i), Array.fill(v)(i.toByte)); model += (k(i).toSeq -> Seq.fill(v)(i.toByte)) }
          else { t.remove(k(i)); model -= k(i).toSeq }
        }
        model.foreach { case (key, v) => assertEquals(t.get(key.toArray).toSeq, v) }
        value = t.encode()
        if (model.isEmpty) assert(value == null)
        else {
          assertEquals(entries(value).toMap, model)
          val keys = entries(value).map(_._1.map(_ & 0xff).toList)
          assertEquals(keys, keys.sortWith((a, b) => compareUnsigned(a, b) < 0))
        }
      }
      true
    }
  }

  property("compare orders any two ranges as their unsigned bytes, eight at a time or fewer") {
    // Keys of up to 40 bytes sharing a prefix of up to 24 (as UnsafeRow keys do), with bytes
    // from the whole range, at any offset in arrays with bytes around them.
    val byte = Gen.oneOf(Gen.choose(-128, 127), Gen.oneOf(0, 1, 127, -128, -1)).map(_.toByte)
    val range = for {
      prefix <- Gen.choose(0, 24)
      tail <- Gen.choose(0, 16)
      ownTail <- Gen.listOfN(tail, byte)
      before <- Gen.choose(0, 9)
      after <- Gen.choose(0, 9)
    } yield (prefix, ownTail, before, after)
    forAll(Gen.listOfN(24, byte), range, range) { (shared, x, y) =>
      def place(r: (Int, List[Byte], Int, Int)): (Array[Byte], Int, List[Int]) = {
        val (prefix, tail, before, after) = r
        val key = shared.take(prefix) ++ tail
        (Array.fill(before)(7.toByte) ++ key ++ Array.fill(after)(-7.toByte), before, key.map(_ & 0xff))
      }
      val (a, aFrom, aKey) = place(x)
      val (b, bFrom, bKey) = place(y)
      val got = GroupTable.compare(a, aFrom, aKey.length, b, bFrom, bKey.length)
      assertEquals(Integer.signum(got), Integer.signum(compareUnsigned(aKey, bKey)), s"$aKey against $bKey")
      true
    }
  }

  test("compare refuses a range outside its array, before reading it") {
    val a = bytes(1, 2, 3, 4, 5, 6, 7, 8, 9)
    intercept[IndexOutOfBoundsException](GroupTable.compare(a, 2, 8, a, 0, 8))
    intercept[IndexOutOfBoundsException](GroupTable.compare(a, 0, 8, a, -1, 8))
    intercept[IndexOutOfBoundsException](GroupTable.compare(a, 0, -1, a, 0, 8))
    assertEquals(GroupTable.compare(a, 1, 8, a, 1, 8), 0)
  }

  private def compareUnsigned(a: List[Int], b: List[Int]): Int = (a, b) match {
    case (x :: xs, y :: ys) => if (x != y) x - y else compareUnsigned(xs, ys)
    case _ => a.length - b.length
  }

  test("another layout (a 4.x group record), a cut, trailing bytes or disorder are refused") {
    val t = GroupTable.empty()
    t.put(bytes(1), bytes(2, 3))
    t.put(bytes(2), bytes(4))
    val value = t.encode()
    def refused(b: Array[Byte], why: String): Unit = {
      val e = intercept[IllegalStateException](GroupTable.read(b))
      assert(e.getMessage.contains(why), e.getMessage)
    }
    refused(GroupRecord.encode(GroupRecord(128, 1L, 0L, Nil)), "layout 1, this sparkwin reads the Spark 3.5")
    refused(value.take(12), "2 entries")
    refused(value.take(value.length - 1), "a value of 1 bytes")
    refused(value :+ 0.toByte, "1 bytes after the entries")
    refused(value.patch(1, bytes(0, 0, 0, 9), 4), "9 entries")
    refused(value.patch(9, bytes(9), 1), "entry 1 is out of order") // the first key, 1, is now 9
    (1 until value.length).foreach(n => intercept[IllegalStateException](GroupTable.read(value.take(n))))
  }
}
