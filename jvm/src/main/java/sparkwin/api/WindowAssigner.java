package sparkwin.api;

/**
 * Puts each element into windows {@code [start, end)}, as Flink's assigners do. Windows of an
 * event-time assigner close when the watermark passes their end (plus allowed lateness), those
 * of a processing-time one when processing time does; its default trigger is the event-time or
 * processing-time one to match. The windows do not merge (session windows are built in).
 *
 * <p>An assigner keeps no state: a query restarted with another assigner keeps the windows it
 * has open, as with the built-in assigners.
 */
public interface WindowAssigner {

  /** Whether windows follow event time (else processing time). */
  boolean isEventTime();

  /**
   * Adds the windows of an element with event time {@code timestamp} through
   * {@link Context#addWindow}. A processing-time assigner reads
   * {@link Context#currentProcessingTime()} instead of the timestamp.
   */
  void assignWindows(Input element, long timestamp, Context ctx);

  /** What an assigner may use, and where its windows go. */
  interface Context {

    /** Processing time, in epoch milliseconds. */
    long currentProcessingTime();

    /**
     * The element belongs to {@code [start, end)}; {@code start < end}, or the element goes to
     * the errors output with a message naming the assigner.
     */
    void addWindow(long start, long end);
  }
}
