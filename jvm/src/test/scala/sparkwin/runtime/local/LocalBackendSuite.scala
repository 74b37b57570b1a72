package sparkwin.runtime.local

import sparkwin.operator.store.WindowContents
import sparkwin.core.window.TimeWindow

/** The local backend reuses a key's emptied state object: reused, it must be as a new one. */
class LocalBackendSuite extends munit.FunSuite {
  test("a key's emptied state comes back as a new state, keeping only its allocated maps") {
    val backend = new LocalBackend
    backend.setCurrentKey("k")
    val st = backend.state
    val w = TimeWindow(0, 10)
    st.contents.put(w, new WindowContents(null, null))
    st.hotSlice = 7L
    st.hotContents = st.contents.get(w)
    st.hotWindow = w
    st.sessionTimer = 9L
    st.stormState.lastProcessed = 5L
    st.mergingSet
    assertEquals(backend.numKeysWithState, 1)
    st.contents.clear()
    backend.stateTouched()
    assertEquals(backend.numKeysWithState, 0)

    val again = backend.state
    assert(again eq st, "the emptied state object is reused")
    assertEquals(backend.numKeysWithState, 1)
    val fresh = new sparkwin.operator.store.KeyState
    assertEquals(
      (again.hotSlice, again.hotContents, again.hotWindow, again.sessionTimer),
      (fresh.hotSlice, fresh.hotContents, fresh.hotWindow, fresh.sessionTimer)
    )
    assert(again.merging == null && again.storm == null)
    assertEquals(again.stormState.lastProcessed, fresh.stormState.lastProcessed)
    assert(again.isEmpty)
  }

  test("keys do not share states") {
    val backend = new LocalBackend
    backend.setCurrentKey("a")
    val a = backend.state
    a.contents.put(TimeWindow(0, 10), new WindowContents(null, null))
    backend.setCurrentKey("b")
    val b = backend.state
    assert(!(a eq b))
    backend.stateTouched() // b is empty: it goes, a stays
    assertEquals(backend.numKeysWithState, 1)
    backend.setCurrentKey("a")
    assert(backend.state eq a)
  }
}
