package sparkwin.runtime.local

import sparkwin.core.agg.{Aggregate, NumericKind}
import sparkwin.operator.session.{SessionAlgorithm, SessionState, SessionStateKind}
import sparkwin.operator.slice.{SliceState, SliceStateKind}
import sparkwin.operator.storm.{StormState, StormStateKind}

/** The local backend reuses a key's emptied state object: reused, it must be as a new one. */
class LocalBackendSuite extends munit.FunSuite {
  private val sum = IndexedSeq[Aggregate](Aggregate.Sum("s", 1, NumericKind.Integral))

  test("a key's emptied state comes back as a new state, keeping only its allocated maps") {
    val backend = new LocalBackend
    backend.install(new SliceStateKind(sum, 10))
    backend.setCurrentKey("k")
    val st = backend.state.asInstanceOf[SliceState]
    st.put(0L, null)
    assertEquals(backend.numKeysWithState, 1)
    st.dropOldest(1)
    st.hot = 3 // a stale position a reused state must forget
    backend.stateTouched()
    assertEquals(backend.numKeysWithState, 0)

    val again = backend.state.asInstanceOf[SliceState]
    assert(again eq st, "the emptied state object is reused")
    assertEquals(backend.numKeysWithState, 1)
    val fresh = new SliceState
    assertEquals(again.hot, fresh.hot)
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
    a.put(0L, null)
    backend.setCurrentKey("b")
    val b = backend.state
    assert(!(a eq b))
    backend.stateTouched() // b is empty: it goes, a stays
    assertEquals(backend.numKeysWithState, 1)
    backend.setCurrentKey("a")
    assert(backend.state eq a)
  }
}
