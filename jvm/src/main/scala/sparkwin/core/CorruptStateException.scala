package sparkwin.core

import java.io.DataInput

/** State bytes that do not read as their layout says: the one error every state codec raises on
  * a corrupt or truncated value (a checkpoint copied wrong, a disk, a writer of another version),
  * so it is never an `ArrayIndexOutOfBounds`, a `NegativeArraySize` or an allocation the bytes
  * cannot back.
  *
  * @param layout what the bytes were read as (`a key's state, layout 5`, `a key group's record`)
  * @param problem what the reader expected where it stopped, and what it found
  * @param offset the byte where it stopped (-1: unknown)
  * @param size the value's length in bytes
  * @param where who holds the value, when the caller knows (`key group 3 of 128`)
  */
final class CorruptStateException(
    val layout: String,
    val problem: String,
    val offset: Int,
    val size: Int,
    val where: Option[String] = None,
    cause: Throwable = null
) extends IllegalStateException(
      s"corrupt sparkwin state${where.fold("")(w => s" in $w")}: $layout of $size bytes is " +
        s"unreadable${if (offset >= 0) s" at byte $offset" else ""}: $problem. The " +
        "checkpoint's state is damaged or was written by another program: restore the checkpoint " +
        "from a copy, or start the query from a new one",
      cause
    ) {

  /** The same error, saying who holds the value (the first to say wins). */
  def in(holder: String): CorruptStateException =
    if (where.isDefined) this
    else new CorruptStateException(layout, problem, offset, size, Some(holder), getCause)
}

object CorruptStateException {

  /** A count or length read from state, refused unless `0 <= n` and `n` items of at least
    * `minBytes` bytes each fit in what is left: so no allocation or loop of a reader is larger
    * than the value's own length allows.
    */
  def checkedCount(n: Int, minBytes: Int, remaining: Int, what: String): Int =
    if (n < 0 || n.toLong * minBytes > remaining)
      throw new Refused(
        s"expected a count of $what that the bytes left can hold, found $n with $remaining left"
      )
    else n

  /** A count or length read from `in`, checked as [[checkedCount]] with what `in` has left. */
  def count(in: DataInput, minBytes: Int, what: String): Int = {
    val n = in.readInt()
    in match {
      case s: java.io.InputStream => checkedCount(n, minBytes, s.available(), what)
      case _ => checkedCount(n, minBytes, scala.Int.MaxValue, what)
    }
  }

  /** A reader's refusal before it knows the value's layout and size; the codec that called it
    * turns it into a [[CorruptStateException]] with both.
    */
  final class Refused(val problem: String) extends RuntimeException(problem, null, false, false)

  /** Runs `read` over a value of `size` bytes as `layout`, turning whatever a corrupt value makes
    * a reader throw (a refused count, an early end, an unknown tag, a value of the wrong type) into
    * a [[CorruptStateException]] at the offset `position` says. A [[CorruptStateException]] or an
    * [[IncompatibleStateException]] (a readable state of another pipeline) passes unchanged.
    * `layout` is made only for an error: readers run once per key and call.
    */
  def reading[T](layout: => String, size: Int, position: () => Int)(read: => T): T =
    try read
    catch {
      case e: CorruptStateException => throw e
      case e: IncompatibleStateException => throw e
      case e: Refused => throw new CorruptStateException(layout, e.problem, position(), size)
      case e @ (_: java.io.EOFException | _: java.nio.BufferUnderflowException) =>
        throw new CorruptStateException(
          layout,
          "expected more bytes, it ends early",
          position(),
          size,
          None,
          e
        )
      case e: VirtualMachineError => throw e
      case e @ (_: RuntimeException | _: java.io.IOException | _: LinkageError) =>
        throw new CorruptStateException(
          layout,
          s"expected a readable value, found $e",
          position(),
          size,
          None,
          e
        )
    }
}

/** A state that reads well but was written by another pipeline than the one resuming it (another
  * algorithm, aggregates, trigger, slice width, class or version of a user's aggregate): refused
  * with what changed and how to resume, never misread.
  */
final class IncompatibleStateException(message: String) extends IllegalStateException(message)
