package com.example.sparkwin;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import sparkwin.api.Input;
import sparkwin.api.Setup;
import sparkwin.api.WindowAssigner;

/**
 * Calendar days in a time zone, from one local midnight to the next: 23 or 25 hours long on the
 * days daylight saving time starts or ends, which fixed-size windows with an offset cannot be.
 */
public final class ZonedDayWindows implements WindowAssigner {
  private final ZoneId zone;

  public ZonedDayWindows(Setup setup) {
    String name = setup.getString("zone");
    try {
      zone = ZoneId.of(name);
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(
          "param 'zone' must be a time zone such as \"Europe/Berlin\", got \"" + name + "\"");
    }
  }

  @Override
  public boolean isEventTime() {
    return true;
  }

  @Override
  public void assignWindows(Input element, long timestamp, Context ctx) {
    LocalDate day = Instant.ofEpochMilli(timestamp).atZone(zone).toLocalDate();
    long start = day.atStartOfDay(zone).toInstant().toEpochMilli();
    long end = day.plusDays(1).atStartOfDay(zone).toInstant().toEpochMilli();
    ctx.addWindow(start, end);
  }
}
