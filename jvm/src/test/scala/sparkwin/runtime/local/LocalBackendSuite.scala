package sparkwin.runtime.local

import sparkwin.core.agg.{Aggregate, NumericKind}
import sparkwin.core.window.TimeWindow
import sparkwin.operator.session.{SessionAlgorithm, SessionState, SessionStateKind}
import sparkwin.operator.slice.{SliceState, SliceStateKind}
import sparkwin.operator.storm.{StormState, StormStateKind}
import sparkwin.operator.store.WindowContents

/** The local backend reuses a key's emptied state object: reused, it must be as a new one. */
class LocalBackendSuite extends munit.FunSuite {
  private val sum = IndexedSeq[Aggregate](Aggregate.Sum("s", 1, NumericKind.Integral))

  test("a key's emptied state comes back as a new state, keeping only its allocated maps") {
    val backend = new LocalBackend
    backend.install(new SliceStateKind(sum, 10))
    backend.setCurrentKey("k")
    val st = backend.state.asInstanceOf[SliceState]
    val w = TimeWindow(0, 10)
    st.slices.put(w, new WindowContents(null, null))
    st.hotSlice = 7L
    st.hotContents = st.slices.get(w)
    assertEquals(backend.numKeysWithState, 1)
    st.slices.clear()
    backend.stateTouched()
    assertEquals(backend.numKeysWithState, 0)

    val again = backend.state.asInstanceOf[SliceState]
    assert(again eq st, "the emptied state object is reused")
    assertEquals(backend.numKeysWithState, 1)
    val fresh = new SliceState
    assertEquals((again.hotSlice, again.hotContents), (fresh.hotSlice, fresh.hotContents))
    assert(again.isEmpty)
  }

  test("a reused state forgets a session timer and Storm's policy positions") {
    val sessions = new LocalBackend
    sessions.install(new SessionStateKind(sum))
    sessions.setCurrentKey("k")
    val st = sessions.state.asInstanceOf[SessionState]
    st.timer = 9L
    sessions.stateTouched()
    assertEquals(sessions.state.asInstanceOf[SessionState].timer, SessionAlgorithm.NoTimer)

    val storm = new LocalBackend
    storm.install(StormStateKind)
    storm.setCurrentKey("k")
    val s = storm.state.asInstanceOf[StormState]
    s.lastProcessed = 5L
    s.nextWindowEnd = 20L
    storm.stateTouched()
    val again = storm.state.asInstanceOf[StormState]
    val fresh = new StormState
    assert(again eq s)
    assertEquals((again.lastProcessed, again.nextWindowEnd), (fresh.lastProcessed, fresh.nextWindowEnd))
  }

  test("keys do not share states") {
    val backend = new LocalBackend
    backend.install(new SliceStateKind(sum, 10))
    backend.setCurrentKey("a")
    val a = backend.state.asInstanceOf[SliceState]
    a.slices.put(TimeWindow(0, 10), new WindowContents(null, null))
    backend.setCurrentKey("b")
    val b = backend.state
    assert(!(a eq b))
    backend.stateTouched() // b is empty: it goes, a stays
    assertEquals(backend.numKeysWithState, 1)
    backend.setCurrentKey("a")
    assert(backend.state eq a)
  }
}
