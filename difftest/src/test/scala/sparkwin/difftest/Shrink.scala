package sparkwin.difftest

/** Shrinks a failing input sequence: drops runs of steps (halving the run length when nothing
  * more can go), then merges keys and sets values to 1, keeping every change after which the
  * sequence still fails with the same kind of problem. Removing steps keeps watermarks and
  * processing times increasing, so every candidate is a valid input.
  */
object Shrink {
  def apply(steps: Vector[Step], fails: Vector[Step] => Boolean, budget: Int = 400): Vector[Step] = {
    var current = steps
    var tries = 0
    def attempt(candidate: Vector[Step]): Boolean =
      tries < budget && candidate != current && {
        tries += 1
        val failed =
          try fails(candidate)
          catch { case scala.util.control.NonFatal(_) => false }
        if (failed) current = candidate
        failed
      }
    var chunk = math.max(1, current.size / 2)
    while (chunk >= 1 && tries < budget) {
      var i = 0
      var progressed = false
      while (i < current.size && tries < budget) {
        if (attempt(current.patch(i, Nil, chunk))) progressed = true
        else i += chunk
      }
      if (!progressed) chunk /= 2
    }
    def mapElements(f: Ev => Ev): Vector[Step] = current.map {
      case Step.Element(e) => Step.Element(f(e))
      case s => s
    }
    attempt(mapElements(_.copy(key = "a")))
    attempt(mapElements(_.copy(value = 1)))
    current.indices.foreach { i =>
      current(i) match {
        case Step.Element(e) if e.value != 1 => attempt(current.updated(i, Step.Element(e.copy(value = 1))))
        case _ =>
      }
    }
    current
  }
}
