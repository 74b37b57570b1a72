package sparkwin.api;

import java.util.List;

/**
 * Removes elements from a window's buffer before and after the window function runs, as
 * Flink's evictors do. The list is in arrival order; remove from it in place
 * ({@code removeIf}, an iterator's {@code remove}, {@code subList(...).clear()}). Evictions are
 * permanent: the window keeps what is left.
 *
 * <p>An evictor keeps no state of its own: the window's elements are its state.
 */
public interface Evictor {

  /** Before the window function sees the elements. */
  default void evictBefore(List<? extends Element> elements, Window window, Context ctx) {}

  /** After the window function saw them. */
  default void evictAfter(List<? extends Element> elements, Window window, Context ctx) {}

  /** What an evictor may know besides the elements. */
  interface Context {

    long currentWatermark();

    long currentProcessingTime();
  }
}
