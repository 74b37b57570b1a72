package sparkwin.plan

import com.fasterxml.jackson.databind.JsonNode

import sparkwin.core.EventTime

/** What a plan may ask of a server at most: a Spark Connect server is shared, and a plan from
  * any client is decoded and planned there. Each limit is here once; [[PlanRules]] refuses a
  * plan past one (naming the limit, before a query starts), and the decoder refuses a plan's
  * text past [[MaxPlanChars]] before it parses it. Windows per element are the sliding
  * assigner's own limit (`SlidingWindows.MaxPerElement`). DESIGN.md ("Hostile input") has the
  * table.
  */
object Limits {

  /** A plan's JSON text, in characters (the largest stored scenario's is under 3,000). */
  val MaxPlanChars: Int = 1 << 20

  /** Aggregates of one pipeline: each is an accumulator per window and a result column. */
  val MaxAggregates: Int = 1000

  /** Any duration or time of the plan (a field ending in `Ms`: sizes, slides, offsets, gaps,
    * lateness, watermark bounds, intervals, lags), in absolute value: the engine's span around
    * Spark's timestamps, so a window's end plus its lateness never overflows a long.
    */
  val MaxSpanMs: Long = EventTime.MaxSpan

  /** Triggers nested in one another (Beam's `AfterEach`, `Repeatedly`, ...): the engine walks
    * the tree for every element.
    */
  val MaxTriggerNesting: Int = 32

  /** Channels a plan may declare (`channels=`): each is a watermark kept in every key group. */
  val MaxDeclaredChannels: Int = 10000

  /** Every `Ms` field of `n` (at any depth) with its JSON pointer; not inside schemas (a
    * column's metadata) or a user extension's params (its own business).
    */
  private[plan] def durations(n: JsonNode, at: String = ""): Iterator[(String, JsonNode)] = {
    import scala.jdk.CollectionConverters._
    if (n.isObject)
      n.fields().asScala.filterNot(e => NotDurations(e.getKey)).flatMap { e =>
        val here = s"$at/${e.getKey}"
        if (e.getKey.endsWith("Ms") && e.getValue.isNumber) Iterator((here, e.getValue))
        else durations(e.getValue, here)
      }
    else if (n.isArray) n.elements().asScala.zipWithIndex.flatMap { case (c, i) => durations(c, s"$at/$i") }
    else Iterator.empty
  }

  private val NotDurations = Set("inputSchema", "outputSchema", "params")

  /** How many triggers deep `n` nests (1: a trigger without children). */
  private[plan] def triggerDepth(n: JsonNode, limit: Int): Int = {
    import scala.jdk.CollectionConverters._
    if (limit <= 0 || !(n.isObject || n.isArray)) 0
    else {
      val below = n.elements().asScala.map(triggerDepth(_, limit - 1)).foldLeft(0)(math.max)
      if (n.isObject && n.has("kind")) below + 1 else below
    }
  }
}
