package com.example.sparkwin;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import sparkwin.api.Element;
import sparkwin.api.Evictor;
import sparkwin.api.Setup;
import sparkwin.api.Window;

/** Keeps the {@code k} elements with the largest value of {@code column} (a numeric column). */
public final class KeepLargestEvictor implements Evictor {
  private final int column;
  private final long k;

  public KeepLargestEvictor(Setup setup) {
    column = setup.column("column");
    k = setup.getLong("k");
    if (k < 0) {
      throw new IllegalArgumentException("param 'k' must not be negative, got " + k);
    }
  }

  @Override
  public void evictBefore(List<? extends Element> elements, Window window, Context ctx) {
    List<Element> largest = new ArrayList<>(elements);
    largest.sort(Comparator.comparingDouble((Element e) -> e.record().getDouble(column)).reversed());
    Set<Element> keep = new HashSet<>(largest.subList(0, (int) Math.min(k, largest.size())));
    elements.removeIf(e -> !keep.contains(e));
  }
}
