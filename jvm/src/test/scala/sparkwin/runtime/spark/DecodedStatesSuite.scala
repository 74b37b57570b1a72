package sparkwin.runtime.spark

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
}
