package sparkwin.api;

/** An element buffered in a window, as an {@link Evictor} sees it: a row and its event time. */
public interface Element {

  /** The element's event time, in epoch milliseconds. */
  long timestamp();

  /** The element's row. */
  Input record();
}
