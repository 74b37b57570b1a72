package sparkwin.core.window

class MergingWindowSetSuite extends munit.FunSuite {
  private val sessions = SessionWindows(5, -1, isEventTime = true)
  private type Merge = (TimeWindow, Seq[TimeWindow], TimeWindow, Seq[TimeWindow])

  private def add(set: MergingWindowSet, w: TimeWindow): (TimeWindow, List[Merge]) = {
    var merges = List.empty[Merge]
    val r = set.addWindow(w, sessions, (a, b, c, d) => merges ::= ((a, b, c, d)))
    (r, merges.reverse)
  }

  test("a new window is its own state window") {
    val set = new MergingWindowSet()
    assertEquals(add(set, TimeWindow(0, 5)), (TimeWindow(0, 5), Nil))
    assertEquals(set.stateWindow(TimeWindow(0, 5)), TimeWindow(0, 5))
  }

  test("a window bridging two sessions merges all three and keeps one state window") {
    val set = new MergingWindowSet()
    add(set, TimeWindow(0, 5)); add(set, TimeWindow(7, 12))
    val (result, merges) = add(set, TimeWindow(4, 8))
    assertEquals(result, TimeWindow(0, 12))
    assertEquals(merges.size, 1)
    val (merged, mergedWindows, stateWindow, mergedStateWindows) = merges.head
    assertEquals(merged, TimeWindow(0, 12))
    assertEquals(mergedWindows.toSet, Set(TimeWindow(0, 5), TimeWindow(7, 12)))
    assert(Set(TimeWindow(0, 5), TimeWindow(7, 12)).contains(stateWindow))
    assertEquals(mergedStateWindows.size, 1)
    assertEquals(set.mapping.toMap, Map(TimeWindow(0, 12) -> stateWindow))
  }

  test("a new window inside an existing one changes nothing") {
    val set = new MergingWindowSet()
    add(set, TimeWindow(0, 10))
    assertEquals(add(set, TimeWindow(2, 7)), (TimeWindow(0, 10), Nil))
    assertEquals(set.mapping.toMap, Map(TimeWindow(0, 10) -> TimeWindow(0, 10)))
  }

  test("a new window equal to a merged window keeps the merged window's state window") {
    // Flink re-points such a window at itself and orphans the merged contents; we do not.
    val set = new MergingWindowSet()
    add(set, TimeWindow(0, 5)); add(set, TimeWindow(5, 10)) // merged [0,10) -> [0,5)
    val sw = set.stateWindow(TimeWindow(0, 10))
    assertEquals(add(set, TimeWindow(0, 10)), (TimeWindow(0, 10), Nil))
    assertEquals(set.stateWindow(TimeWindow(0, 10)), sw)
  }

  test("a refused merge leaves the set unchanged") {
    val set = new MergingWindowSet()
    add(set, TimeWindow(0, 5))
    intercept[IllegalStateException] {
      set.addWindow(
        TimeWindow(3, 8),
        sessions,
        (_, _, _, _) => (),
        _ => throw new IllegalStateException("no")
      )
    }
    assertEquals(set.mapping.toMap, Map(TimeWindow(0, 5) -> TimeWindow(0, 5)))
  }

  test("retiring an unknown window is an error") {
    intercept[IllegalStateException](new MergingWindowSet().retireWindow(TimeWindow(0, 1)))
  }
}
