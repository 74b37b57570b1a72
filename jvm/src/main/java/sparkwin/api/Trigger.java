package sparkwin.api;

import java.util.List;

/**
 * Decides when a window's contents are emitted, as Flink's triggers do: on each element, on the
 * timers it set, and when session windows merge. Flink's pane rules apply: a firing emits when
 * the window has contents.
 *
 * <p>A trigger keeps per-window state only under the names it declares in {@link #states()},
 * through its {@link Context}; values are {@code Long}, {@code Integer}, {@code Double},
 * {@code Boolean}, {@code String} or null (unset). The state lives with the window and goes
 * when the window is cleaned up. It is saved under the trigger's class name, each name at
 * {@link #version()}: a query restarted from a checkpoint whose state another class or version
 * wrote is refused, so bump the version when what a value means changes.
 *
 * <p>Timers: the trigger may set timers only on the clocks it declares
 * ({@link #usesEventTimeTimers()}, {@link #usesProcessingTimeTimers()}); the runtime picks
 * Spark's time mode from them. A timer is unique per window and time; register it again as
 * often as you like, it fires once. {@link #clear} must delete the timers the trigger set.
 */
public interface Trigger {

  /** The names of the per-window state this trigger keeps (words without dots). */
  default List<String> states() {
    return java.util.Collections.emptyList(); // Java 8: the 2.12 jar runs on it
  }

  /** The version of this trigger's state; bump it when what a stored value means changes. */
  default int version() {
    return 1;
  }

  /** Whether the trigger sets event-time timers. */
  default boolean usesEventTimeTimers() {
    return false;
  }

  /** Whether the trigger sets processing-time timers. */
  default boolean usesProcessingTimeTimers() {
    return false;
  }

  /** An element was added to {@code window}. */
  TriggerResult onElement(Input element, long timestamp, Window window, Context ctx);

  /** An event-time timer this trigger set for {@code window} fired at {@code time}. */
  default TriggerResult onEventTime(long time, Window window, Context ctx) {
    return TriggerResult.CONTINUE;
  }

  /** A processing-time timer this trigger set for {@code window} fired at {@code time}. */
  default TriggerResult onProcessingTime(long time, Window window, Context ctx) {
    return TriggerResult.CONTINUE;
  }

  /** Whether the trigger can run on session (merging) windows: it then implements onMerge. */
  default boolean canMerge() {
    return false;
  }

  /**
   * Session windows merged into {@code window}: combine the merged windows' state
   * ({@link MergeContext#mergedValues}) into this one and set the timers it needs.
   */
  default void onMerge(Window window, MergeContext ctx) {
    throw new UnsupportedOperationException(getClass().getName() + " cannot merge windows");
  }

  /** The window is going: delete the timers this trigger set for it. */
  default void clear(Window window, Context ctx) {}

  /** What a trigger may use while deciding about one window of one key. */
  interface Context {

    /** The watermark (Long.MIN_VALUE before the first one). */
    long currentWatermark();

    /** Processing time, in epoch milliseconds. */
    long currentProcessingTime();

    void registerEventTimeTimer(long time);

    void deleteEventTimeTimer(long time);

    void registerProcessingTimeTimer(long time);

    void deleteProcessingTimeTimer(long time);

    /** This window's value of the declared state {@code state}; null when unset. */
    Object get(String state);

    /** Sets (null: clears) this window's value of the declared state {@code state}. */
    void set(String state, Object value);

    /** The declared state {@code state} as a long, or {@code ifUnset}. */
    default long getLong(String state, long ifUnset) {
      Object value = get(state);
      return value == null ? ifUnset : ((Number) value).longValue();
    }
  }

  /** During {@link #onMerge}: the merged window's context, and the merged windows' values. */
  interface MergeContext extends Context {

    /** The values of {@code state} in the windows merged into this one, nulls included. */
    List<Object> mergedValues(String state);
  }
}
