package sparkwin.plan

import com.fasterxml.jackson.databind.JsonNode

import sparkwin.core.EventTime

/** What a plan may ask of a server at most: a Spark Connect server is shared, and a plan from
  * any client is decoded and planned there. Each limit is here once; [[PlanRules]] refuses a
  * plan past one (naming the limit, before a query starts), and the decoder refuses a plan's
  * text past [[MaxPlanChars]] or nested past [[MaxPlanNesting]] while it parses it. DESIGN.md
  * ("Hostile input") has the table.
  */
object Limits {

  /** A plan's JSON text, in characters (the largest stored scenario's is under 3,000). */
  val MaxPlanChars: Int = 1 << 20

  /** How deep a plan's JSON nests: objects and arrays, the plan's own object being level 1.
    * Every reader of the tree (the rules, the contract, Spark's schema reader, Jackson's writer)
    * walks it recursively, so a tree nested hundreds of levels deep, though far under
    * [[MaxPlanChars]], could overflow a thread's stack before the JIT has compiled those walks.
    * The parser refuses it before a tree exists. A real plan stays far under 128: triggers
    * nested [[MaxTriggerNesting]] deep take two levels each at most (`afterEach`'s list and its
    * item), 66 with the plan's own; a struct column takes three a level of its schema (the
    * field, its type, the type's fields), so 128 still holds a schema of structs 40 deep.
    */
  val MaxPlanNesting: Int = 128

  /** Windows one element is in: a sliding window's size over its slide, rounded up. The engine
    * makes each of them for every element (and a timer per window). Python's builder asks for
    * less by default (10,000, unless `maxWindowsPerElement=` says more).
    */
  val MaxWindowsPerElement: Long = 1000000L

  /** The most of a plan's own text a message quotes (a value, a name, a piece of the plan, a
    * place in it): messages go back to the client, over gRPC on Spark Connect, and a piece may be
    * as long as the plan. A place within the limits above fits (nested 128 deep its pointer is
    * about 260 characters; the deepest trigger's, about 370).
    */
  val MaxQuotedChars: Int = 500

  /** `text` as a message quotes it: at most [[MaxQuotedChars]] characters, and how many more. */
  def quoted(text: String): String =
    if (text == null || text.length <= MaxQuotedChars) String.valueOf(text)
    else s"${text.take(MaxQuotedChars)}... (${text.length - MaxQuotedChars} characters more)"

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

  /** The JSON pointer (below `at`) of the first trigger nested deeper than `limit` in `n`, a
    * trigger being an object with a `kind` (`n` itself the first), or None.
    */
  private[plan] def triggerPast(n: JsonNode, limit: Int, at: String = ""): Option[String] = {
    import scala.jdk.CollectionConverters._
    val isTrigger = n.isObject && n.has("kind")
    if (isTrigger && limit == 0) Some(at)
    else if (n.isObject)
      n.properties()
        .asScala
        .iterator
        .map(e => triggerPast(e.getValue, if (isTrigger) limit - 1 else limit, s"$at/${escaped(e.getKey)}"))
        .collectFirst { case Some(p) => p }
    else if (n.isArray)
      n.elements().asScala.zipWithIndex.map { case (c, i) => triggerPast(c, limit, s"$at/$i") }.collectFirst {
        case Some(p) => p
      }
    else None
  }

  /** A field's name as a step of a JSON pointer (RFC 6901). */
  private def escaped(field: String): String = field.replace("~", "~0").replace("/", "~1")
}
