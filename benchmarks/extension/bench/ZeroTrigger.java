package bench;

import sparkwin.api.Input;
import sparkwin.api.Setup;
import sparkwin.api.Trigger;
import sparkwin.api.TriggerResult;
import sparkwin.api.Window;

/**
 * Fires when the long column {@code column} is 0: what {@code ConditionTrigger.of(F.col("amount")
 * == 0)} does, written as a Java extension, for benchmarks/columns.py.
 */
public final class ZeroTrigger implements Trigger {
  private final int column;

  public ZeroTrigger(Setup setup) {
    column = setup.column("column");
  }

  @Override
  public TriggerResult onElement(Input element, long timestamp, Window window, Context ctx) {
    boolean zero = !element.isNullAt(column) && element.getLong(column) == 0L;
    return zero ? TriggerResult.FIRE : TriggerResult.CONTINUE;
  }

  @Override
  public boolean canMerge() {
    return true;
  }
}
