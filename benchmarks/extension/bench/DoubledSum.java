package bench;

import sparkwin.api.Aggregate;
import sparkwin.api.Input;
import sparkwin.api.Setup;

/**
 * The sum of twice a long column: what {@code sw.agg.sum(F.col("amount") * 2)} computes, written
 * as a Java extension, for benchmarks/columns.py.
 */
public final class DoubledSum implements Aggregate {
  private final int column;

  public DoubledSum(Setup setup) {
    column = setup.columns()[0];
  }

  @Override
  public String resultType() {
    return "bigint";
  }

  @Override
  public Accumulator newAccumulator() {
    return new Sum();
  }

  private final class Sum implements Accumulator {
    long total;
    boolean any;

    @Override
    public void add(Input element, long timestamp) {
      if (!element.isNullAt(column)) {
        total += element.getLong(column) * 2;
        any = true;
      }
    }

    @Override
    public void merge(Accumulator other) {
      Sum o = (Sum) other;
      total += o.total;
      any |= o.any;
    }

    @Override
    public Object result() {
      return any ? total : null;
    }

    @Override
    public Object[] save() {
      return new Object[] {total, any};
    }

    @Override
    public void restore(Object[] values) {
      total = (Long) values[0];
      any = (Boolean) values[1];
    }
  }
}
