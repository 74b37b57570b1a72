package sparkwin

import java.io.File

/** The main sources' packages import in one direction (DESIGN.md, "Layout"): the model and the
  * operator, then the plan, then the runtimes with their Spark glue, then the gateways that
  * Python and Spark Connect reach. A file's layer is its folder under `sparkwin/`; a reference is
  * any `sparkwin.<layer>` outside a comment, so a fully qualified name counts as an import.
  */
class PackageLayersSuite extends munit.FunSuite {
  import PackageLayersSuite._

  test("the main sources' package graph has no cycle and follows the layers") {
    val edges = PackageLayers.edges(PackageLayers.sources(new File("src/main")))
    assert(edges.nonEmpty, "found no sources under src/main (the tests run in jvm/)")
    assertEquals(PackageLayers.cycle(edges.keySet), None, describe(edges))
    assertEquals(PackageLayers.unlayered(edges), Map.empty[(String, String), List[String]], describe(edges))
  }

  test("a plan -> runtime import is caught") {
    val plan = SourceFile("plan", "package sparkwin.plan\n\nimport sparkwin.runtime.Driver\n")
    val runtime = SourceFile("runtime", "package sparkwin.runtime\n\nimport sparkwin.plan.Plan\n")
    val edges = PackageLayers.edges(List(plan, runtime))
    assert(PackageLayers.cycle(edges.keySet).isDefined)
    assertEquals(PackageLayers.unlayered(edges).keySet, Set("plan" -> "runtime"))
  }

  test("comments and strings that only mention a package are not imports") {
    val text =
      "package sparkwin.plan\n// see sparkwin.runtime.Driver\n/** [[sparkwin.gateway.X]]\n  * sparkwin.runtime */\n"
    assertEquals(
      PackageLayers.edges(List(SourceFile("plan", text))),
      Map.empty[(String, String), List[String]]
    )
  }
}

object PackageLayersSuite {
  final case class SourceFile(layer: String, text: String, name: String = "test.scala")

  private def describe(edges: Map[(String, String), List[String]]): String =
    edges.toList
      .sortBy(_._1)
      .map { case ((a, b), files) => s"$a -> $b (${files.take(3).mkString(", ")})" }
      .mkString("\n")

  object PackageLayers {

    /** Each layer and the layers it may import; nothing may import the gateways. */
    val allowed: Map[String, Set[String]] = Map(
      "api" -> Set(),
      "core" -> Set("api"),
      "operator" -> Set("api", "core"),
      "plan" -> Set("api", "core", "operator"),
      "runtime" -> Set("api", "core", "operator", "plan"),
      "gateway" -> Set("api", "core", "operator", "plan", "runtime")
    )

    private val Reference = """\bsparkwin\.(api|core|operator|plan|runtime|gateway)\b""".r

    /** Every Scala and Java source under `main`, with its layer (its folder under sparkwin/). */
    def sources(main: File): List[SourceFile] = {
      def walk(f: File): List[File] =
        if (f.isDirectory) Option(f.listFiles).toList.flatten.sortBy(_.getName).flatMap(walk) else List(f)
      walk(main).filter(f => f.getName.endsWith(".scala") || f.getName.endsWith(".java")).flatMap { f =>
        val parts = f.getPath.split(File.separatorChar).toList
        parts.dropWhile(_ != "sparkwin") match {
          case "sparkwin" :: layer :: _ :: _ =>
            val s = scala.io.Source.fromFile(f, "UTF-8")
            try List(SourceFile(layer, s.mkString, f.getPath))
            finally s.close()
          case _ => Nil // sparkwin/ itself (BuildInfo): below every layer
        }
      }
    }

    /** The code of `text` without comments: line comments, block comments and doc comments. */
    def code(text: String): String =
      text.replaceAll("""(?s)/\*.*?\*/""", "").linesIterator.map(_.replaceAll("//.*$", "")).mkString("\n")

    /** Layer -> referenced layer, with the files that make each edge. */
    def edges(sources: List[SourceFile]): Map[(String, String), List[String]] =
      sources
        .flatMap { s =>
          val body = code(s.text).linesIterator.filterNot(_.trim.startsWith("package ")).mkString("\n")
          Reference
            .findAllMatchIn(body)
            .map(_.group(1))
            .filter(_ != s.layer)
            .toSet
            .map((to: String) => ((s.layer, to), s.name))
        }
        .groupBy(_._1)
        .map { case (edge, hits) => edge -> hits.map(_._2).distinct }

    /** Edges the layers do not allow, with their files. */
    def unlayered(edges: Map[(String, String), List[String]]): Map[(String, String), List[String]] =
      edges.filter { case ((from, to), _) => !allowed.getOrElse(from, Set.empty).contains(to) }

    /** A cycle of the graph (its layers in order), if there is one: a depth-first search. */
    def cycle(graph: Set[(String, String)]): Option[List[String]] = {
      val next = graph.groupBy(_._1).map { case (k, v) => k -> v.map(_._2).toList.sorted }
      def from(node: String, path: List[String]): Option[List[String]] =
        if (path.contains(node)) Some((node :: path.takeWhile(_ != node)).reverse :+ node)
        else next.getOrElse(node, Nil).iterator.map(from(_, node :: path)).collectFirst { case Some(c) => c }
      graph.map(_._1).toList.sorted.iterator.map(from(_, Nil)).collectFirst { case Some(c) => c }
    }
  }
}
