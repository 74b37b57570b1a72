package sparkwin.operator.slice

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import sparkwin.core.agg.{Accumulator, Aggregate, NumericKind}
import sparkwin.core.ArrayRecord
import sparkwin.operator.store.ValueCodec

/** A key's slices stay sorted by start whatever order they come in, and the `hot` position
  * follows its slice as others are inserted before it or dropped.
  */
class SliceStateSuite extends munit.FunSuite {
  private val sum = Array[Aggregate](Aggregate.Sum("s", 0, NumericKind.Integral))

  private def accs(v: Long): Array[Accumulator] = {
    val a = Accumulator.fresh(sum)
    Accumulator.addAll(a, new ArrayRecord(Array[Any](v)), 0L)
    a
  }
  private def value(st: SliceState, i: Int): Long = st.accumulators(i)(0).result.asInstanceOf[Long]

  test("slices inserted in any order are kept sorted, past the initial capacity") {
    val st = new SliceState
    val order = Seq(50L, 10L, 90L, 30L, 70L, 20L, 80L, 0L, 60L, 40L)
    order.foreach(s => st.insert(st.from(s), s, accs(s)))
    assertEquals(st.starts, order.sorted)
    assertEquals((0 until st.count).map(value(st, _)), order.sorted)
    assertEquals(st.from(35L), 4) // the first slice at or after 35 is 40, at index 4
    assertEquals(st.from(40L), 4)
    assertEquals(st.from(-5L), 0)
    assertEquals(st.from(95L), st.count)
  }

  test("put replaces a slice with the same start") {
    val st = new SliceState
    st.put(20L, accs(1))
    st.put(10L, accs(2))
    st.put(20L, accs(3))
    assertEquals(st.starts, Seq(10L, 20L))
    assertEquals(value(st, 1), 3L)
  }

  test("the hot position follows its slice through inserts before it and drops") {
    val st = new SliceState
    Seq(10L, 20L, 30L).foreach(s => st.put(s, accs(s)))
    st.hot = 1 // slice 20
    st.insert(st.from(5L), 5L, accs(5))
    assertEquals(st.start(st.hot), 20L)
    st.insert(st.from(25L), 25L, accs(25)) // after it: no move
    assertEquals(st.start(st.hot), 20L)
    st.dropOldest(2) // 5 and 10 go
    assertEquals(st.starts, Seq(20L, 25L, 30L))
    assertEquals(st.start(st.hot), 20L)
    st.dropOldest(1) // the hot slice itself goes
    assertEquals(st.hot, -1)
    st.dropOldest(st.count)
    assert(st.isEmpty)
    assertEquals(st.numEntries, 0)
  }

  test("a stored state with its slices out of order (written from a hash map) reads sorted") {
    val bytes = new ByteArrayOutputStream
    val out = new DataOutputStream(bytes)
    out.writeLong(10L) // the slice width
    out.writeInt(3)
    for (s <- Seq(30L, 10L, 20L)) { out.writeLong(s); ValueCodec.writeAccumulators(out, accs(s)) }
    out.flush()
    val kind = new SliceStateKind(sum.toIndexedSeq, 10L)
    val st =
      kind.read(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray))).asInstanceOf[SliceState]
    assertEquals(st.starts, Seq(10L, 20L, 30L))
    assertEquals((0 until st.count).map(value(st, _)), Seq(10L, 20L, 30L))
    // And it is written back oldest first.
    val again = new ByteArrayOutputStream
    kind.write(new DataOutputStream(again), st)
    val back =
      kind.read(new DataInputStream(new ByteArrayInputStream(again.toByteArray))).asInstanceOf[SliceState]
    assertEquals(back.starts, st.starts)
  }
}
