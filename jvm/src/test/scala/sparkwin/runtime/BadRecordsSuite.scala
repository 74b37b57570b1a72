package sparkwin.runtime

import sparkwin.core.{ArrayRecord, EventTime}

/** The bad-record rules, asked by every runtime: which records go to the errors output, and why. */
class BadRecordsSuite extends munit.FunSuite {
  private def record(ts: Any) = new ArrayRecord(Array[Any]("k", ts))

  test("a record with an event time in range is taken") {
    assertEquals(BadRecords.reason(record(5L), 1, arrivalMissing = false, channelMissing = false), null)
    assertEquals(BadRecords.reason(record(null), -1, arrivalMissing = false, channelMissing = false), null)
  }

  test("the first rule that applies names the reason: timestamp, arrival, channel, range") {
    def why(ts: Any, arrival: Boolean, channel: Boolean) = BadRecords.reason(record(ts), 1, arrival, channel)
    assertEquals(why(null, arrival = true, channel = true), "the timestamp is null")
    assertEquals(why(EventTime.Max + 1, arrival = true, channel = true), "the arrival is null")
    assertEquals(why(EventTime.Max + 1, arrival = false, channel = true), "the channel is null")
    assertEquals(
      why(EventTime.Max + 1, arrival = false, channel = false),
      EventTime.outOfRange(EventTime.Max + 1)
    )
    assertEquals(
      BadRecords.reason(record(null), -1, arrivalMissing = false, channelMissing = true),
      "the channel is null"
    )
  }
}
