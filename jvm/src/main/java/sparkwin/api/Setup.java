package sparkwin.api;

/**
 * What an extension is built from: the params the pipeline gave it (a JSON object of names to
 * strings, numbers and booleans) and the input's columns. An extension's public constructor
 * takes one and reads what it needs.
 *
 * <p>Every getter names the param in the error it throws: a missing required param, or a value
 * of the wrong kind, fails the pipeline when it is built, before a query starts. A param the
 * constructor never reads is refused too (a misspelt name must not pass silently). Throw an
 * {@link IllegalArgumentException} naming the param for a value your extension cannot take
 * ({@code "param 'n' must be positive, got 0"}): it reaches the user the same way.
 */
public interface Setup {

  /** The class the pipeline names, as the user wrote it. */
  String className();

  /** Whether the pipeline gave {@code param}. */
  boolean has(String param);

  /** A required string param. */
  String getString(String param);

  /** A string param, or {@code ifAbsent}. */
  String getString(String param, String ifAbsent);

  /** A required whole-number param. */
  long getLong(String param);

  /** A whole-number param, or {@code ifAbsent}. */
  long getLong(String param, long ifAbsent);

  /** A required number param. */
  double getDouble(String param);

  /** A number param, or {@code ifAbsent}. */
  double getDouble(String param, double ifAbsent);

  /** A required boolean param. */
  boolean getBoolean(String param);

  /** A boolean param, or {@code ifAbsent}. */
  boolean getBoolean(String param, boolean ifAbsent);

  /**
   * The position in {@link Input} of the column that the string param {@code param} names; an
   * error naming the param and the input's columns if there is no such column.
   */
  int column(String param);

  /**
   * An aggregate's columns (the ones given in Python, in that order) as positions in
   * {@link Input}; empty for triggers, assigners and evictors.
   */
  int[] columns();

  /** Spark's name of the type of the column at {@code position}: "bigint", "double", ... */
  String columnType(int position);
}
