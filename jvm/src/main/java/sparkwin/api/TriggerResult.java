package sparkwin.api;

/**
 * What a {@link Trigger} decides, as in Flink: emit the window's contents ({@code FIRE}), clear
 * them ({@code PURGE}), both, or nothing ({@code CONTINUE}). Purging clears contents, not the
 * trigger's state or timers.
 */
public enum TriggerResult {
  CONTINUE,
  FIRE,
  PURGE,
  FIRE_AND_PURGE
}
