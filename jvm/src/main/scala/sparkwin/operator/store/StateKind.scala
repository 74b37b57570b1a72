package sparkwin.operator.store

import java.io.{DataInputStream, DataOutputStream}

/** How one algorithm keeps a key's state: it makes a fresh one, and writes and reads the body
  * of a stored one (the codec writes the header that says which algorithm wrote it, and the
  * timers). Each algorithm's state is its own class, read only by the algorithm that wrote it.
  */
abstract class StateKind {
  def algorithm: Algorithm

  def newState(): KeyState

  def write(out: DataOutputStream, state: KeyState): Unit

  def read(in: DataInputStream): KeyState

  /** A state stored before states said who wrote them (versions 1 to 3, written by the
    * algorithm the same spec chose then), in this algorithm's form; or an error saying why it
    * cannot be resumed.
    */
  def fromLegacy(legacy: LegacyState): KeyState
}
