package com.example.sparkwin;

import java.util.List;
import sparkwin.api.Input;
import sparkwin.api.Setup;
import sparkwin.api.Trigger;
import sparkwin.api.TriggerResult;
import sparkwin.api.Window;

/**
 * Fires every {@code n} elements of a window (early results) and once more when the watermark
 * passes the window's end; an element that arrives after that, within allowed lateness, fires
 * the window again. Works on session windows: merged windows add up their counts.
 */
public final class CountOrEndTrigger implements Trigger {
  private final long n;

  public CountOrEndTrigger(Setup setup) {
    n = setup.getLong("n");
    if (n <= 0) {
      throw new IllegalArgumentException("param 'n' must be positive, got " + n);
    }
  }

  @Override
  public List<String> states() {
    return List.of("count"); // elements since the last count firing
  }

  @Override
  public boolean usesEventTimeTimers() {
    return true;
  }

  @Override
  public TriggerResult onElement(Input element, long timestamp, Window window, Context ctx) {
    if (window.maxTimestamp() <= ctx.currentWatermark()) {
      return TriggerResult.FIRE; // a late element within allowed lateness
    }
    ctx.registerEventTimeTimer(window.maxTimestamp());
    long count = ctx.getLong("count", 0) + 1;
    if (count >= n) {
      ctx.set("count", null);
      return TriggerResult.FIRE;
    }
    ctx.set("count", count);
    return TriggerResult.CONTINUE;
  }

  @Override
  public TriggerResult onEventTime(long time, Window window, Context ctx) {
    return time == window.maxTimestamp() ? TriggerResult.FIRE : TriggerResult.CONTINUE;
  }

  @Override
  public boolean canMerge() {
    return true;
  }

  @Override
  public void onMerge(Window window, MergeContext ctx) {
    long count = ctx.getLong("count", 0);
    for (Object merged : ctx.mergedValues("count")) {
      count += merged == null ? 0 : (Long) merged;
    }
    ctx.set("count", count);
    if (window.maxTimestamp() > ctx.currentWatermark()) {
      ctx.registerEventTimeTimer(window.maxTimestamp());
    }
  }

  @Override
  public void clear(Window window, Context ctx) {
    ctx.deleteEventTimeTimer(window.maxTimestamp());
  }
}
