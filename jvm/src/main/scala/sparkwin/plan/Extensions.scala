package sparkwin.plan

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.sql.types.StructField

import sparkwin.api
import sparkwin.core.agg.Aggregate
import sparkwin.core.evictor.ExtensionEvictor
import sparkwin.core.trigger.{ExtensionTrigger, StateDescriptor}
import sparkwin.core.window.ExtensionWindows

/** Users' own triggers, assigners, evictors and aggregates: the plan's `jvm` kinds, loaded by
  * class name and built from their params (`sparkwin.api`).
  *
  * This is the one place that decides whether an extension is acceptable; Python asks it (by
  * describing the plan) when the pipeline is built, and every runtime decodes the same plan, so
  * a missing class, a class of the wrong kind or bad params fail before a query starts, with a
  * [[PlanException]] naming the class, the param and the fix.
  *
  * Classes load from the thread's context class loader (Spark's: the jars of `spark.jars`,
  * `--jars`, `SparkContext.addJar` on executors, a Connect session's artifacts), else sparkwin's.
  */
object Extensions {

  /** What the decoder knows of the input's columns: a name's position (or a [[PlanException]]
    * naming `param`), and a position's field.
    */
  final class Columns(val index: (String, String) => Int, val field: Int => StructField)

  def trigger(n: JsonNode, columns: Columns): ExtensionTrigger = {
    val (className, impl, label) = build(n, "trigger", classOf[api.Trigger], columns, Array.empty)
    val names = impl.states.asScala.toSeq
    val fix = s"correct $className's states()"
    names.groupBy(identity).collectFirst { case (name, seen) if seen.size > 1 => name }.foreach { name =>
      throw new PlanException(s"trigger $className declares the state '$name' twice: $fix")
    }
    names.foreach { name =>
      try new StateDescriptor(name)
      catch {
        case e: IllegalArgumentException =>
          throw new PlanException(s"trigger $className: ${e.getMessage}: $fix")
      }
    }
    new ExtensionTrigger(className, impl, label)
  }

  def assigner(n: JsonNode, columns: Columns): ExtensionWindows = {
    val (_, impl, label) = build(n, "assigner", classOf[api.WindowAssigner], columns, Array.empty)
    new ExtensionWindows(impl, label)
  }

  def evictor(n: JsonNode, columns: Columns): ExtensionEvictor = {
    val (_, impl, label) = build(n, "evictor", classOf[api.Evictor], columns, Array.empty)
    new ExtensionEvictor(impl, label)
  }

  /** The aggregate `alias` over the plan's `columns`, and the field its results fill. */
  def aggregate(n: JsonNode, alias: String, columns: Columns): (Aggregate.Extension, StructField) = {
    val inputs =
      n.get("columns").elements().asScala.map(c => columns.index(c.asText, s"aggregate $alias")).toArray
    val (className, impl, label) = build(n, s"aggregate $alias", classOf[api.Aggregate], columns, inputs)
    val result = Option(impl.resultType).map(_.trim.toLowerCase).getOrElse("null")
    if (!Aggregate.Extension.ResultTypes.contains(result))
      throw new PlanException(
        s"aggregate $alias $className: resultType() is '$result'; a user's aggregate returns one of " +
          s"${Aggregate.Extension.ResultTypes.mkString(", ")}"
      )
    val field = StructField(alias, org.apache.spark.sql.types.DataType.fromDDL(result))
    (Aggregate.Extension(alias, inputs.toSeq, className, impl, result, label), field)
  }

  /** The class `n` names, built from its params: (class name, instance, label). The label, the
    * class and its params, is how the pipeline named it (in `explain()` and runtime errors).
    */
  private def build[T](
      n: JsonNode,
      role: String,
      kind: Class[T],
      columns: Columns,
      inputs: Array[Int]
  ): (String, T, String) = {
    val className = n.get("className").asText
    val params = Option(n.get("params")).filterNot(_.isNull)
    val description = s"$role $className"
    val label = className + params.fold("")(_.toString)
    // Loaded without running its static initializer: a client names any class it likes, and
    // only one of the sparkwin interface may run code here (initialized when it is built).
    val cls =
      try Class.forName(className, false, loader)
      catch {
        case _: ClassNotFoundException =>
          throw new PlanException(
            s"$role: no class $className on the class path. Add the jar that holds it (spark.jars " +
              "or --jars when the session starts, or sparkwin.jvm.addJar(path) on a running one) and " +
              "check the name: package and class, a nested class as Outer$Inner"
          )
        case e: LinkageError =>
          throw new PlanException(s"$description could not be loaded: $e (a class it needs is missing?)")
      }
    if (!kind.isAssignableFrom(cls))
      throw new PlanException(
        s"$role: $className does not implement ${kind.getName}; a $role of your own implements that " +
          "interface (docs/concepts/extending.md)"
      )
    val setup = new ParamsSetup(className, params, columns, inputs)
    val instance =
      try construct(cls, setup)
      catch {
        case e: java.lang.reflect.InvocationTargetException => throw failed(description, e.getCause)
        case e: ExceptionInInitializerError => throw failed(description, e.getCause)
        case e: LinkageError =>
          throw new PlanException(s"$description could not be loaded: $e (a class it needs is missing?)")
        case e: PlanException => throw new PlanException(s"$role: ${e.getMessage}")
        case e: IllegalArgumentException => throw failed(description, e)
      }
    setup.unread.headOption.foreach { name =>
      throw new PlanException(
        s"$description: unknown param '$name' (it reads ${setup.read.toSeq.sorted match {
            case Seq() => "no params"
            case names => names.mkString(", ")
          }}): remove it or correct its name"
      )
    }
    (className, kind.cast(instance), label)
  }

  private def construct(cls: Class[_], setup: api.Setup): Any = {
    if (java.lang.reflect.Modifier.isAbstract(cls.getModifiers))
      throw new PlanException(s"${cls.getName} is abstract: name a concrete class")
    val withSetup = cls.getConstructors.find(_.getParameterTypes.sameElements(Array(classOf[api.Setup])))
    withSetup match {
      case Some(c) => c.newInstance(setup)
      case None =>
        cls.getConstructors.find(_.getParameterCount == 0) match {
          case Some(c) => c.newInstance()
          case None =>
            throw new PlanException(
              s"${cls.getName} needs a public constructor taking a sparkwin.api.Setup (or a public " +
                "one without arguments), and a public class"
            )
        }
    }
  }

  /** A failure while building: an IllegalArgumentException is the extension's own word on its
    * params (its message names them); anything else is reported with its class.
    */
  private def failed(description: String, e: Throwable): PlanException = e match {
    case i: IllegalArgumentException => new PlanException(s"$description: ${i.getMessage}")
    case other => new PlanException(s"$description failed to build: $other")
  }

  private def loader: ClassLoader =
    Option(Thread.currentThread.getContextClassLoader).getOrElse(getClass.getClassLoader)

  /** The params of one extension, as its constructor reads them; remembers what it read. */
  private final class ParamsSetup(
      val className: String,
      params: Option[JsonNode],
      schema: Columns,
      inputs: Array[Int]
  ) extends api.Setup {
    private val supplied: Map[String, JsonNode] =
      params.map(_.properties().asScala.map(e => e.getKey -> e.getValue).toMap).getOrElse(Map.empty)
    val read = scala.collection.mutable.LinkedHashSet.empty[String]
    def unread: Seq[String] = supplied.keys.filterNot(read).toSeq.sorted

    def has(param: String): Boolean = { read += param; supplied.contains(param) }

    private def value(param: String): Option[JsonNode] = {
      read += param; supplied.get(param).filterNot(_.isNull)
    }
    private def required(param: String, example: String): JsonNode =
      value(param).getOrElse(
        throw new IllegalArgumentException(
          s"""param '$param' is required: pass it, e.g. {"$param": $example}"""
        )
      )
    private def wrong(param: String, what: String, v: JsonNode) =
      new IllegalArgumentException(s"param '$param' must be $what, got $v")

    private def text(param: String, v: JsonNode): String =
      if (v.isTextual) v.asText else throw wrong(param, "a string", v)
    private def whole(param: String, v: JsonNode): Long =
      if (v.isIntegralNumber && v.canConvertToLong) v.asLong else throw wrong(param, "a whole number", v)
    private def number(param: String, v: JsonNode): Double =
      if (v.isNumber) v.asDouble else throw wrong(param, "a number", v)
    private def flag(param: String, v: JsonNode): Boolean =
      if (v.isBoolean) v.asBoolean else throw wrong(param, "true or false", v)

    def getString(param: String): String = text(param, required(param, "\"...\""))
    def getString(param: String, ifAbsent: String): String = value(param).fold(ifAbsent)(text(param, _))
    def getLong(param: String): Long = whole(param, required(param, "3"))
    def getLong(param: String, ifAbsent: Long): Long = value(param).fold(ifAbsent)(whole(param, _))
    def getDouble(param: String): Double = number(param, required(param, "0.5"))
    def getDouble(param: String, ifAbsent: Double): Double = value(param).fold(ifAbsent)(number(param, _))
    def getBoolean(param: String): Boolean = flag(param, required(param, "true"))
    def getBoolean(param: String, ifAbsent: Boolean): Boolean = value(param).fold(ifAbsent)(flag(param, _))

    def column(param: String): Int = schema.index(getString(param), s"param '$param'")
    def columns(): Array[Int] = inputs.clone()
    def columnType(position: Int): String = schema.field(position).dataType.simpleString
  }
}
