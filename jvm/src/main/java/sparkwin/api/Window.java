package sparkwin.api;

/**
 * A window: {@code [start, end)} in epoch milliseconds. The global window has start
 * {@code Long.MIN_VALUE} and end and maxTimestamp {@code Long.MAX_VALUE}.
 */
public interface Window {

  /** The first timestamp in the window. */
  long start();

  /** The first timestamp after the window. */
  long end();

  /** The largest timestamp in the window ({@code end - 1}): results carry it as their time. */
  long maxTimestamp();
}
