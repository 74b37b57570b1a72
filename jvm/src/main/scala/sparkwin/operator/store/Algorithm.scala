package sparkwin.operator.store

/** Which algorithm wrote a key's state. Its id is part of the checkpoint format (a key's state
  * records it, [[KeyStateCodec]]): never renumber one. `operator.Selection` decides which runs.
  */
sealed abstract class Algorithm(val id: Byte, val name: String) {
  override def toString: String = name
}
object Algorithm {
  case object General extends Algorithm(1, "general")
  case object Sliced extends Algorithm(2, "sliced")
  case object Session extends Algorithm(3, "session")
  case object Storm extends Algorithm(4, "storm")
  case object StormArrival extends Algorithm(5, "storm-arrival")
  val all: Seq[Algorithm] = Seq(General, Sliced, Session, Storm, StormArrival)
  def byId(id: Int): Option[Algorithm] = all.find(_.id == id)
}

/** Which state layout an algorithm runs over; its id is part of the checkpoint format too. */
sealed abstract class Layout(val id: Byte, val name: String) {
  override def toString: String = name
}
object Layout {
  case object Keyed extends Layout(1, "keyed")
  case object Packed extends Layout(2, "packed")
  val all: Seq[Layout] = Seq(Keyed, Packed)
  def byId(id: Int): Option[Layout] = all.find(_.id == id)
}
