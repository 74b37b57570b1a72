/**
 * sparkwin's extension points: a trigger, window assigner, evictor or aggregate of your own,
 * written in Java or Scala against these interfaces, packaged in a jar on Spark's class path
 * and named by class from Python ({@code sparkwin.jvm.trigger("com.acme.MyTrigger", {"n": 3})}).
 *
 * <p>The engine builds one instance per plan and JVM, from a public constructor taking a
 * {@link sparkwin.api.Setup} (or a public no-argument one), when the pipeline is built and on
 * every executor; instances are shared by all keys, windows and threads, so they keep no
 * mutable fields: per-window state goes through the contexts. docs/concepts/extending.md is the
 * guide.
 *
 * <p>This package is the stable surface: it changes only with sparkwin's minor version, and
 * nothing in it exposes the engine's own classes.
 */
package sparkwin.api;
