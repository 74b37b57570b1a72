package sparkwin.runtime.spark.task

import sparkwin.operator.store.KeyStateCodec

/** A kept key state is handed back only for the very bytes it was saved as, and only once per
  * save: what a failed call or another writer left in the store is decoded afresh.
  */
class DecodedStatesSuite extends munit.FunSuite {

  private def stored(): KeyStateCodec.Stored = new KeyStateCodec.Stored(null, null, null)

  test("a state comes back for equal bytes, once, and not for other bytes or none") {
    val d = new DecodedStates(10)
    val s = stored()
    d.keep("a", Array[Byte](1, 2, 3), s)
    assert(d.take("a", Array[Byte](1, 2, 3)) eq s) // equal bytes, another array
    assertEquals(d.take("a", Array[Byte](1, 2, 3)), null) // taken: a failed call leaves nothing
    d.keep("a", Array[Byte](1, 2, 3), s)
    assertEquals(d.take("a", Array[Byte](1, 2, 4)), null) // the store holds other bytes
    d.keep("a", Array[Byte](1), s)
    assertEquals(d.take("a", null), null) // the store holds none
    assertEquals(d.take("b", Array[Byte](1)), null)
  }

  test("past its capacity it forgets every key") {
    val d = new DecodedStates(2)
    d.keep("a", Array[Byte](1), stored())
    d.keep("b", Array[Byte](1), stored())
    d.keep("c", Array[Byte](1), stored())
    assertEquals(d.take("a", Array[Byte](1)), null)
    assert(d.take("c", Array[Byte](1)) != null)
  }

  test("keys that seldom come back stop being kept, and keeping is tried again later") {
    val d = new DecodedStates(1 << 20)
    val bytes = Array[Byte](1)
    // A trial of keys that never come back: nothing kept is used.
    (0 until DecodedStates.Trial).foreach { i => d.take(i, bytes); d.keep(i, bytes, stored()) }
    assert(!d.isKeeping)
    d.keep("hot", bytes, stored())
    assertEquals(d.take("hot", bytes), null) // nothing is kept while paused
    (1 until DecodedStates.Pause).foreach(i => d.take(-i, bytes))
    assert(d.isKeeping, "tried again after the pause")
    // A hot key, loaded row after row, is used every time: keeping stays on.
    val s = stored()
    d.keep("hot", bytes, s)
    (0 until 2 * DecodedStates.Trial).foreach { _ =>
      assert(d.take("hot", bytes) eq s)
      d.keep("hot", bytes, s)
    }
    assert(d.isKeeping)
  }
}
