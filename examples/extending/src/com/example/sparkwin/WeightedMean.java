package com.example.sparkwin;

import sparkwin.api.Aggregate;
import sparkwin.api.Input;
import sparkwin.api.Setup;

/** The mean of a value column weighted by a weight column (rows with a null in either skipped). */
public final class WeightedMean implements Aggregate {
  private final int value;
  private final int weight;

  public WeightedMean(Setup setup) {
    int[] columns = setup.columns();
    if (columns.length != 2) {
      throw new IllegalArgumentException(
          "columns: WeightedMean takes two columns, the value and the weight, got " + columns.length);
    }
    value = columns[0];
    weight = columns[1];
  }

  @Override
  public String resultType() {
    return "double";
  }

  @Override
  public Accumulator newAccumulator() {
    return new Sums();
  }

  private final class Sums implements Accumulator {
    double weighted; // sum of value * weight
    double weights; // sum of weight

    @Override
    public void add(Input element, long timestamp) {
      if (!element.isNullAt(value) && !element.isNullAt(weight)) {
        weighted += element.getDouble(value) * element.getDouble(weight);
        weights += element.getDouble(weight);
      }
    }

    @Override
    public void merge(Accumulator other) {
      Sums o = (Sums) other;
      weighted += o.weighted;
      weights += o.weights;
    }

    @Override
    public Object result() {
      return weights == 0 ? null : weighted / weights;
    }

    @Override
    public Object[] save() {
      return new Object[] {weighted, weights};
    }

    @Override
    public void restore(Object[] values) {
      weighted = (Double) values[0];
      weights = (Double) values[1];
    }
  }
}
