package sparkwin.api;

/**
 * One input row: the input DataFrame's columns by position ({@link Setup#column} turns a column
 * name into its position). Values are what Spark's {@code Row} holds: {@code Long},
 * {@code Integer}, {@code Double}, {@code String}, {@code Boolean}, {@code java.math.BigDecimal},
 * {@code java.sql.Timestamp} or {@code java.time.Instant}, ...; null for SQL NULL.
 */
public interface Input {

  /** The number of columns. */
  int length();

  /** The value of column {@code column}; null for SQL NULL. */
  Object get(int column);

  /** Whether column {@code column} is SQL NULL. */
  boolean isNullAt(int column);

  /** A numeric or timestamp column as a long (timestamps as epoch milliseconds). */
  long getLong(int column);

  /** A numeric column as a double. */
  double getDouble(int column);
}
