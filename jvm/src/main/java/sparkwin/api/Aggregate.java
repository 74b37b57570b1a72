package sparkwin.api;

/**
 * An aggregate function over a window's elements: one {@link Accumulator} per window, fed
 * element by element and merged with others (sliding windows are built from merged slices,
 * sessions merge), so {@code merge} must give what adding both accumulators' elements to one
 * would.
 *
 * <p>An accumulator is saved in state as its {@link Accumulator#save()} values, under the
 * aggregate's class name and {@link #version()}: a query restarted from a checkpoint written by
 * another class or version is refused, so bump the version when the saved values change
 * meaning.
 */
public interface Aggregate {

  /**
   * The result's Spark SQL type: "bigint", "int", "double", "string" or "boolean". Results are
   * converted to it: any {@code Number} for the numeric types.
   */
  String resultType();

  /** A new, empty accumulator. */
  Accumulator newAccumulator();

  /** The version of the accumulators' saved values. */
  default int version() {
    return 1;
  }

  /** The running state of the aggregate in one window; mutated in place. */
  interface Accumulator {

    /** Adds one element. */
    void add(Input element, long timestamp);

    /** Folds {@code other}, an accumulator of the same aggregate, into this one. */
    void merge(Accumulator other);

    /** The current result, of the aggregate's {@link Aggregate#resultType()}; null for none. */
    Object result();

    /**
     * The accumulator's values, to save in state: {@code Long}, {@code Integer},
     * {@code Double}, {@code Boolean}, {@code String}, {@code byte[]} or null each.
     */
    Object[] save();

    /** Restores what {@link #save()} gave, into a new accumulator. */
    void restore(Object[] values);
  }
}
