package sparkwin.plan.testext;

/**
 * A class a hostile plan names as its trigger: it implements no sparkwin interface, and its
 * static initializer records that it ran (a system property), which loading it to check the
 * interface must never do.
 */
public final class StaticInitProbe {
  public static final String RAN = "sparkwin.test.staticInitProbe";

  static {
    System.setProperty(RAN, "ran");
  }

  public StaticInitProbe() {}
}
