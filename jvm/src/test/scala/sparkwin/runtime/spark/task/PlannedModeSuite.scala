package sparkwin.runtime.spark.task

import sparkwin.plan.PlanException

/** A micro-batch plan takes one call of a group's rows per task and refuses a second (Spark's
  * real-time mode, a call per row); a real-time plan takes any number.
  */
class PlannedModeSuite extends munit.FunSuite {

  test("a micro-batch plan takes one call per group, and the second names toDF(realTime=True)") {
    val mode = new PlannedMode(realTime = false)
    mode.rowsOf(7)
    mode.rowsOf(3) // another group of the same task
    val e = intercept[PlanException](mode.rowsOf(7))
    assert(e.getMessage.contains("planned for micro-batches"), e.getMessage)
    assert(e.getMessage.contains("toDF(realTime=True)"), e.getMessage)
    assert(e.getMessage.contains("key group 7"), e.getMessage)
  }

  test("outside a query's thread there is no trigger to look up, and planning goes on") {
    assertEquals(PlannedMode.runningQueryTrigger(), None)
    new PlannedMode(realTime = false).atPlanning()
  }

  test("a real-time plan takes a call per row") {
    val mode = new PlannedMode(realTime = true)
    (1 to 5).foreach(_ => mode.rowsOf(7))
  }

  test("each task starts afresh: a new check per task takes the group again") {
    new PlannedMode(realTime = false).rowsOf(1)
    new PlannedMode(realTime = false).rowsOf(1)
  }
}
