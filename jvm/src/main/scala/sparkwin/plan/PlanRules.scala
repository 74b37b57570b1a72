package sparkwin.plan

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.sql.types.{DataType, StructType}

import sparkwin.core.time.WatermarkStrategy
import sparkwin.core.trigger.Trigger
import sparkwin.core.window.WindowAssigner

/** Every rule that refuses a plan for how its pieces combine, in one place.
  *
  * The contract (contract.json) says what each piece may be on its own; these rules say which
  * pieces go together (a stream without a timestamp takes only Storm windows, session windows
  * need a trigger that can merge, ...). Python's builder asks them after every step with the
  * plan so far (`PythonEntryPoint.validate`, or the Connect relation `validate`), so a user
  * hears of a mistake at the call that made it; the decoder asks them again of every whole
  * plan, for clients other than the builder.
  *
  * A plan so far lacks what the builder has not reached yet: a rule speaks only of pieces that
  * are there, and rules about the input being a stream stay silent where that is not known.
  * A refusal names the plan's pieces as JSON pointers in braces (`{/assigner}`), so each side
  * says them in its own words: Python as the builder wrote them (`TumblingEventTimeWindows.of(
  * 1000)`), the JVM as the plan's JSON.
  */
object PlanRules {

  /** A broken rule: its name (for tests) and its message, pieces still as `{/pointer}`s. */
  final case class Refusal(rule: String, message: String) {

    /** The message with each piece written as the plan's JSON (a string in quotes). */
    def rendered(plan: JsonNode): String =
      Piece.replaceAllIn(
        message,
        m => {
          val node = plan.at(m.group(1))
          val text = Limits.quoted(if (node.isTextual) s"'${node.asText}'" else node.toString)
          scala.util.matching.Regex.quoteReplacement(text)
        }
      )
  }

  // Option.when and Iterator.nextOption are 2.13's: the engine also builds for Scala 2.12.
  private def when[A](condition: Boolean)(value: => A): Option[A] = if (condition) Some(value) else None

  private val Piece = """\{(/[^{}]*)\}""".r

  /** The first rule the plan (so far) breaks; `streaming` is None where it is not known. */
  def check(plan: JsonNode, streaming: Option[Boolean]): Option[Refusal] = {
    val view = new View(plan, streaming)
    rules.iterator.map { case (name, rule) => rule(view).map(Refusal(name, _)) }.collectFirst {
      case Some(r) => r
    }
  }

  /** Throws a [[PlanException]] for the first rule the plan breaks. */
  def refuse(plan: JsonNode, streaming: Option[Boolean]): Unit =
    check(plan, streaming).foreach(r => throw new PlanException(r.rendered(plan)))

  /** Throws a [[PlanException]] if `plan` cannot be replayed (`ReplayRuntime`) from `df`. */
  def refuseReplay(plan: Plan, streaming: Boolean): Unit = {
    val why =
      if (streaming) Some("replay() needs a bounded DataFrame (history); a stream is live already")
      else if (!plan.hasTimestamp)
        Some(
          "replay() needs event time: a stream without a timestamp (Storm's windows in arrival order) " +
            "runs as it arrives; use toDF() or writeStream()"
        )
      else if (plan.arrivalColumn.isEmpty)
        Some("replay() needs the arrival order: sw.stream(df, ..., arrival='offset_or_arrival_time')")
      else if (plan.watermark.isEmpty)
        Some(
          "replay() needs a watermark strategy: " +
            "sw.stream(df, ..., watermark=WatermarkStrategy.forBoundedOutOfOrderness(...))"
        )
      else None
    why.foreach(w => throw new PlanException(w))
  }

  /** Refuses what Spark's real-time mode (`trigger(realTime=...)`) cannot run, before a query
    * starts, naming the fix: the plan on an input that is a stream or not (`streaming`, where
    * known), and, where the client is about to start it, the query around it ([[RealTimeQuery]]).
    * `toDF(realTime=True)` asks with the plan alone; `writeStream` with the query too.
    */
  def refuseRealTime(plan: Plan, streaming: Option[Boolean], query: Option[RealTimeQuery]): Unit = {
    query.foreach(q => realTimeTrigger(q).foreach(realTimeRefusal))
    if (streaming.contains(false))
      realTimeRefusal("real-time mode runs streams only; a bounded DataFrame runs as a batch job")
    if (plan.isProcess)
      realTimeRefusal(
        "real-time mode cannot run process() pipelines (a pane's rows go to Python in Arrow " +
          "batches, which real-time mode does not run): use aggregate(), or micro-batch mode"
      )
    if (plan.spec.emitsElements)
      realTimeRefusal(
        "real-time mode cannot run pandas aggregates (a pane's rows go to Python in Arrow " +
          "batches, which real-time mode does not run): use sparkwin's aggregates, or micro-batch mode"
      )
    plan.timeIn(RunMode.RealTime) // the policy's own rules: refuseInRealTime
    query.foreach(q => (realTimeOutputs(q) orElse realTimeSlots(q)).foreach(realTimeRefusal))
  }

  private def realTimeRefusal(message: String): Nothing = throw new PlanException(message)

  private val RealTimeSinks = "use sw.toKafka(topic, servers) or sw.forEachRow(fn) for this output"

  private def realTimeTrigger(q: RealTimeQuery): Option[String] =
    q.interval match {
      case Left(text) if text.trim.nonEmpty => None
      case given =>
        val found = given.fold(t => s"'$t'", identity)
        Some(
          "trigger={'realTime': ...} takes the batch length as a string, e.g. " +
            s"{'realTime': '5 minutes'}, got $found"
        )
    }

  private def realTimeOutputs(q: RealTimeQuery): Option[String] = {
    val perOutput = q.outputs.iterator.flatMap { o =>
      val where = s"outputs['${o.tag}']"
      o.kind match {
        case "kafka" | "row" => None
        case "directory" =>
          Some(
            s"$where is a directory ('${o.written}'), written per micro-batch; real-time mode " +
              s"writes row by row: $RealTimeSinks"
          )
        case "table" =>
          Some(
            s"$where is a table, written per micro-batch; real-time mode writes row by row: $RealTimeSinks"
          )
        case "function" =>
          Some(
            s"$where is a foreachBatch function fn(df, batchId); real-time mode has no " +
              "micro-batches: wrap a per-row function as sw.forEachRow(fn), or write to " +
              "sw.toKafka(topic, servers)"
          )
        case _ => Some(s"$where: real-time mode cannot write ${o.written}: $RealTimeSinks")
      }
    }
    val kinds = q.outputs.map(_.kind).distinct
    if (q.foreachOutput)
      Some(
        "real-time mode has no micro-batches for foreachOutput(tag, df, batchId): give " +
          "outputs={tag: sw.forEachRow(fn)} or {tag: sw.toKafka(topic, servers)} instead"
      )
    else if (q.outputs.isEmpty) Some(s"real-time mode needs at least one output: $RealTimeSinks")
    else if (perOutput.hasNext) Some(perOutput.next())
    else if (kinds.size > 1)
      Some(
        "real-time mode writes every output of one query through one sink: make them all " +
          "sw.toKafka(...) or all sw.forEachRow(...)"
      )
    else if (q.kafkaSinks > 1)
      Some(
        "real-time mode writes every Kafka output through one Kafka sink: give every " +
          "sw.toKafka(...) the same bootstrapServers and options (the topics may differ)"
      )
    else None
  }

  /** A real-time batch runs every source partition and every shuffle partition as a task at
    * once, and a task waiting for a slot holds the others back for the whole batch.
    */
  private def realTimeSlots(q: RealTimeQuery): Option[String] =
    for {
      (count, described) <- q.sources
      have <- q.taskSlots
      need = count + q.shufflePartitions
      if need > have
    } yield s"real-time mode runs all of a batch's tasks at once: $described and ${q.shufflePartitions} " +
      s"shuffle partitions (spark.sql.shuffle.partitions) need $need task slots, and this cluster " +
      s"has $have. Lower spark.sql.shuffle.partitions to at most ${math.max(have - count, 1)}, or " +
      s"run with more cores (e.g. master local[$need])"

  /** What a plan's time policy cannot do in real-time mode ([[TimePolicy.decide]] asks, so no
    * real-time policy exists for a plan refused here).
    */
  private[plan] def refuseInRealTime(plan: Plan, policy: TimePolicy): Unit = {
    def refuse(why: String): Nothing = realTimeRefusal(s"real-time mode: $why")
    if (policy.inheritsWatermark)
      refuse(
        "a pipeline over another pipeline's results (chained windows) needs two stateful " +
          "operators and Spark's watermark between them, which moves only between batches: run " +
          "it in micro-batch mode, or write the first pipeline's results to Kafka and read them " +
          "as a new stream with a watermark of its own"
      )
    if (policy.eventTimers && !policy.ownWatermark)
      refuse("event-time windows need a watermark strategy (sw.stream(df, ts, watermark=...))")
    if (plan.watermark.exists(_.kind.isInstanceOf[WatermarkStrategy.Punctuated]))
      refuse(
        "a punctuated watermark cannot run per channel on a live stream; use " +
          "WatermarkStrategy.forBoundedOutOfOrderness(...)"
      )
  }

  /** Every rule's name, in the order they are asked. */
  def names: Seq[String] = rules.map(_._1)

  /** The plan so far, as the rules read it: a piece that is absent or null is not given. */
  private final class View(val root: JsonNode, val streaming: Option[Boolean]) {
    def piece(field: String): Option[JsonNode] = Option(root.get(field)).filterNot(_.isNull)
    def isNull(field: String): Boolean = root.has(field) && root.get(field).isNull
    def text(field: String): Option[String] = piece(field).filter(_.isTextual).map(_.asText)
    def noTimestamp: Boolean = piece("timestamp").isEmpty
    def isStream: Boolean = streaming.contains(true)
    def isBounded: Boolean = streaming.contains(false)

    lazy val schema: Option[StructType] = piece("inputSchema").flatMap { s =>
      Try(DataType.fromJson(s.toString)).toOption.collect { case t: StructType => t }
    }
    def hasColumn(name: String): Boolean = schema.exists(_.fieldNames.contains(name))

    /** A sparkwin result's event time (marked by `toDF()`): a pipeline on it on a stream
      * follows the upstream watermark.
      */
    def marked(column: String): Boolean =
      schema.exists(_.fields.exists(f => f.name == column && f.metadata.contains(Contract.eventTimeMetadata)))

    /** Whether the pipeline inherits the upstream watermark; None where that is not known. */
    def inherits: Option[Boolean] =
      if (text("timestamp").exists(marked)) streaming else Some(false)

    def assignerKind: Option[String] = piece("assigner").map(_.path("kind").asText)
    def isStorm: Boolean = assignerKind.contains("storm")

    /** The decoded pieces; None when they do not decode (the contract then says why). */
    lazy val assigner: Option[WindowAssigner] =
      for (n <- piece("assigner"); s <- schema; a <- Try(PlanDecoder.assignerOf(n, s)).toOption) yield a
    def trigger(n: JsonNode): Option[Trigger] =
      schema.flatMap(s => Try(PlanDecoder.triggerOf(n, s)).toOption)

    def combiner: Option[String] =
      piece("function").flatMap(f => Option(f.get("timestampCombiner"))).filterNot(_.isNull).map(_.asText)
  }

  private def storm(what: String, goal: String): String =
    s"Storm windows fire each window once by Storm's own policy, so they take no $what; use a Flink " +
      s"assigner (e.g. SlidingEventTimeWindows) to $goal"

  private val timeInputs = Seq("watermark", "arrival", "channel", "channels")
  private def outputs = Contract.outputColumns.mkString(", ")

  /** The rules, in the order the builder meets them: stream(), keyBy(), window(), trigger(),
    * evictor(), allowedLateness(), withTimestampCombiner(), then aggregate() or process().
    */
  private val rules: Seq[(String, View => Option[String])] = Seq(
    // What a shared server takes at most (Limits), before anything else is asked of the plan.
    "durationsWithinTheSpan" -> { v =>
      Limits.durations(v.root).collectFirst {
        case (at, n)
            if !n.canConvertToLong || math.abs(n.asLong) > Limits.MaxSpanMs || n.asLong == Long.MinValue =>
          s"${Limits.quoted(at.stripPrefix("/"))} is ${Limits.quoted(n.asText)} ms; a duration or time of a plan is at most ${Limits.MaxSpanMs} ms " +
            "(about 73 million years) either way, so a window's end plus its lateness stays a long"
      }
    },
    "aggregatesAtMost" -> { v =>
      val n = v.piece("function").flatMap(f => Option(f.get("aggregates"))).fold(0)(_.size)
      when(n > Limits.MaxAggregates)(
        s"aggregate(): $n aggregates; a pipeline computes at most ${Limits.MaxAggregates}"
      )
    },
    // The place, not the tree: a tree past the limit is tens of KB, and the message goes back to
    // the client (Python writes a piece in braces as the builder's repr of all of it).
    "triggersNestAtMost" -> { v =>
      v.piece("trigger").flatMap(Limits.triggerPast(_, Limits.MaxTriggerNesting, "/trigger")).map { at =>
        s"trigger: triggers nest more than ${Limits.MaxTriggerNesting} deep (the one at " +
          s"${Limits.quoted(at)} is ${Limits.MaxTriggerNesting + 1} deep); at most " +
          s"${Limits.MaxTriggerNesting}: flatten the tree (AfterEach, AfterFirst and AfterAll take lists)"
      }
    },
    "windowsPerElementAtMost" -> { v =>
      v.piece("assigner").filter(_.path("kind").asText == "sliding").flatMap { a =>
        val (size, slide) = (a.path("sizeMs"), a.path("slideMs"))
        if (!size.canConvertToLong || !slide.canConvertToLong || size.asLong <= 0 || slide.asLong <= 0) None
        else {
          val perElement = (size.asLong - 1) / slide.asLong + 1
          when(perElement > Limits.MaxWindowsPerElement)(
            s"window: {/assigner} gives $perElement windows per element (its size, ${size.asLong} ms, over " +
              s"its slide, ${slide.asLong} ms); an element is in at most ${Limits.MaxWindowsPerElement} " +
              "windows: use a larger slide or a smaller size"
          )
        }
      }
    },
    "declaredChannelsAtMost" -> { v =>
      val n = v.piece("channels").fold(0)(_.size)
      when(n > Limits.MaxDeclaredChannels)(
        s"channels: $n channels declared; at most ${Limits.MaxDeclaredChannels}"
      )
    },
    "timeInputsNeedATimestamp" -> { v =>
      if (!v.noTimestamp) None
      else
        timeInputs.find(v.piece(_).isDefined).map { name =>
          s"$name: a stream without a timestamp has no event time, so it takes no $name; give the " +
            s"event-time column, e.g. sparkwin.stream(df, 'ts', $name=...)"
        }
    },
    "arrivalIsForReplay" -> { v =>
      when(v.isStream && v.piece("arrival").isDefined)(
        "arrival is for replaying a bounded DataFrame; a streaming DataFrame arrives in its own " +
          "order, so leave arrival out"
      )
    },
    "combinedTimeIsNotEventTime" -> { v =>
      when(
        v.isStream && v.text("timestamp").contains(Contract.eventTimeColumn) &&
          v.hasColumn(Contract.paneColumns.head) && !v.marked(Contract.eventTimeColumn)
      )(
        "timestamp: {/timestamp} of results with an EARLIEST or LATEST timestamp combiner is not " +
          "event time downstream (Beam holds its watermark back for it; sparkwin does not): chain " +
          "on results with the default END_OF_WINDOW"
      )
    },
    "windowBoundIsNotEventTime" -> { v =>
      val column = Contract.eventTimeColumn
      when(
        v.isStream && v.text("timestamp").exists(t => Contract.windowColumns.contains(t) && t != column) &&
          v.marked(column)
      )(
        s"timestamp: {/timestamp} is a window bound of a sparkwin result; its event time is '$column' " +
          "(the window's largest timestamp, as Flink's results carry it): use " +
          s"sw.stream(result, '$column'), which also inherits the upstream watermark"
      )
    },
    "inheritedTakesNoWatermark" -> { v =>
      when(v.inherits.contains(true) && v.piece("watermark").isDefined)(
        "watermark: {/timestamp} is a window bound of a sparkwin result on a stream, and a pipeline " +
          "on it inherits the upstream watermark (as Flink's downstream operators do); leave " +
          "watermark out. A second watermark would wait for this pipeline's own input and hold the " +
          "upstream windows back forever"
      )
    },
    "inheritedTakesNoChannel" -> { v =>
      when(v.inherits.contains(true) && v.piece("channel").isDefined)(
        "channel: a pipeline on a sparkwin result inherits the upstream watermark; give channel= to " +
          "the upstream pipeline"
      )
    },
    "channelsOnAStreamNeedAStrategy" -> { v =>
      when(v.isStream && v.piece("channel").isDefined && v.piece("watermark").isEmpty)(
        "watermark: channel= on a streaming DataFrame generates a watermark per channel, so it needs " +
          "a strategy, e.g. watermark=WatermarkStrategy.forBoundedOutOfOrderness(timedelta(seconds=5))" +
          ".withIdleness(timedelta(minutes=1))"
      )
    },
    "noPunctuatedChannelsOnAStream" -> { v =>
      when(
        v.isStream && v.piece("channel").isDefined &&
          v.piece("watermark").exists(_.path("kind").asText == "punctuated")
      )(
        "watermark: punctuated watermarks cannot be generated per channel on a live stream (a " +
          "micro-batch does not order one channel's rows across partitions); use " +
          "WatermarkStrategy.forBoundedOutOfOrderness or forStormLag with channel="
      )
    },
    "declaredChannelsNeedAChannel" -> { v =>
      when(v.piece("channels").isDefined && v.piece("channel").isEmpty)(
        "channels: declares the values of the channel column, so it needs channel= too, e.g. " +
          "sw.stream(kafka, 'ts', channel='partition', channels=range(8), watermark=...)"
      )
    },
    "keysAreNotOutputColumns" -> { v =>
      v.piece("keys").toSeq.flatMap(_.elements().asScala.map(_.asText).zipWithIndex).collectFirst {
        case (k, i) if Contract.outputColumns.contains(k) =>
          s"keyBy(columns): key column {/keys/$i} collides with the output column of the same name " +
            s"($outputs); rename it first, e.g. df.withColumnRenamed('$k', 'key_$k')"
      }
    },
    "noTimestampTakesOnlyStormWindows" -> { v =>
      val arrivalOrder = v.isStorm && v.piece("assigner").exists(_.path("eventTime").asText == "false")
      if (v.piece("assigner").isEmpty) None
      else if (v.noTimestamp && !arrivalOrder)
        Some(
          "timestamp: {/assigner} needs an event-time column, and this stream has none; give one, e.g. " +
            "sparkwin.stream(df, 'ts'). Only StormWindows run without one (in arrival order, as " +
            "Storm's default mode)"
        )
      else if (!v.noTimestamp && arrivalOrder)
        Some("timestamp: Storm windows in arrival order (eventTime false) take no timestamp")
      else None
    },
    "noLagWithoutTimestamp" -> { v =>
      when(v.noTimestamp && v.isStorm && v.piece("assigner").exists(_.path("lagMs").asLong > 0))(
        "{/assigner}: a lag is for event time; a stream without a timestamp has no out-of-order " +
          "tuples (arrival order), so leave withLag out"
      )
    },
    // The decoder gives Storm windows Storm's lag watermark where a plan leaves `watermark` out
    // (PlanDecoder.defaultWatermark), so a bounded Storm plan with a null one asked for
    // noWatermarks().
    "stormWindowsNeedWatermarks" -> { v =>
      when(
        v.isBounded && v.isStorm && v.assigner.exists(_.isEventTime) && v.isNull("watermark")
      )(
        "watermark: {/assigner} runs in event time and needs watermarks, but the stream was built " +
          "with WatermarkStrategy.noWatermarks(); leave watermark out (Storm's lag watermark is then " +
          "used) or pass WatermarkStrategy.forStormLag(lag)"
      )
    },
    "eventTimeOnAStreamNeedsAWatermark" -> { v =>
      when(
        v.isStream && v.assigner.exists(_.isEventTime) && v.piece("watermark").isEmpty &&
          v.inherits.contains(false)
      )(
        "watermark: {/assigner} is an event-time assigner and the DataFrame is streaming, so the " +
          "stream needs a watermark strategy; pass one, e.g. sparkwin.stream(df, {/timestamp}, " +
          "watermark=WatermarkStrategy.forBoundedOutOfOrderness(timedelta(seconds=5))), or use a " +
          "processing-time assigner"
      )
    },
    "stormTakesNoTrigger" -> { v =>
      when(v.isStorm && v.piece("trigger").isDefined)(
        "trigger: " + storm("trigger", "choose when windows fire")
      )
    },
    "mergingWindowsNeedAMergingTrigger" -> { v =>
      for {
        assigner <- v.assigner if assigner.isMerging
        root <- v.piece("trigger")
        culprit <- unmergeable(v, root, "/trigger")
      } yield {
        val inside = if (culprit == "/trigger") "" else " (inside {/trigger})"
        s"trigger: {$culprit}$inside cannot merge its state, so it cannot be used with merging " +
          "(session) windows such as {/assigner}; use a trigger that can merge (e.g. CountTrigger, " +
          "EventTimeTrigger, ContinuousEventTimeTrigger or a Beam trigger) or a non-session assigner"
      }
    },
    "stormTakesNoEvictor" -> { v =>
      when(v.isStorm && v.piece("evictor").isDefined)("evictor: " + storm("evictor", "evict elements"))
    },
    "stormTakesNoLateness" -> { v =>
      when(v.isStorm && v.piece("allowedLatenessMs").exists(_.asLong > 0))(
        "lateness: " + storm("allowed lateness", "fire windows again for late data") +
          "; Storm's withLag(lag) lets out-of-order elements wait instead"
      )
    },
    "combinerNeedsATimestamp" -> { v =>
      when(v.noTimestamp && v.combiner.exists(_ != "endOfWindow"))(
        "withTimestampCombiner: a stream without a timestamp has no event time to combine"
      )
    },
    "combinerIsForAggregates" -> { v =>
      when(
        v.piece("function").exists(_.path("kind").asText == "process") && v.combiner.exists(
          _ != "endOfWindow"
        )
      )("withTimestampCombiner is for aggregate(): a process function's rows are its own")
    },
    "resultColumnsAreDistinct" -> { v =>
      val keys = v.piece("keys").toSeq.flatMap(_.elements().asScala.map(_.asText)).toSet
      val aliases = v.piece("function").flatMap(f => Option(f.get("aggregates"))).toSeq.flatMap {
        _.elements().asScala.map(_.path("alias").asText)
      }
      aliases.zipWithIndex.iterator
        .flatMap { case (alias, i) =>
          val (name, of) = (s"{/function/aggregates/$i/alias}", s"{/function/aggregates/$i}")
          if (Contract.outputColumns.contains(alias))
            Some(
              s"alias $name of $of collides with the output column of the same name ($outputs); choose " +
                "another with .alias(name)"
            )
          else if (keys(alias))
            Some(s"alias $name of $of collides with the key column $name; choose another with .alias(name)")
          else if (aliases.take(i).contains(alias))
            Some(
              s"alias $name is used by more than one aggregate; give each a distinct name with .alias(name)"
            )
          else None
        }
        .find(_ => true)
    },
    // Last: a rule above says more. A piece the decoder refuses on its own (a calendar's time
    // zone, the type of a trigger's or an evictor's column) is refused at the step that adds it.
    "piecesDecode" -> { v =>
      v.schema.flatMap { schema =>
        Seq("assigner", "trigger", "evictor").iterator
          .flatMap { name =>
            v.piece(name).filter(Contract.follows(_, name)).flatMap { n => // else the contract says why
              try { PlanDecoder.pieceOf(name, n, schema); None }
              catch {
                case e: PlanException => Some(e.getMessage)
                case scala.util.control.NonFatal(_) => None // the contract or the decoder says why later
              }
            }
          }
          .find(_ => true)
      }
    }
  )

  /** The pointer of the innermost trigger that cannot merge although all its children can
    * (the one to replace), or None when the tree can merge.
    */
  private def unmergeable(v: View, node: JsonNode, at: String): Option[String] =
    if (v.trigger(node).forall(_.canMerge)) None
    else {
      val kind = node.path("kind").asText
      val children = Contract.nestedFields("trigger", kind).flatMap { case (field, isList) =>
        Option(node.get(field)).filterNot(_.isNull).toSeq.flatMap { child =>
          if (isList) child.elements().asScala.zipWithIndex.map { case (c, i) => (c, s"$at/$field/$i") }
          else Seq((child, s"$at/$field"))
        }
      }
      children.iterator.flatMap { case (c, p) => unmergeable(v, c, p) }.find(_ => true).orElse(Some(at))
    }
}
