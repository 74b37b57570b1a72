package sparkwin

import java.io.File

/** The main sources' packages import in one direction (DESIGN.md, "Layout"): the model and the
  * operator, then the plan, then the runtimes with their Spark glue, then the gateways that
  * Python and Spark Connect reach. A file's layer is its folder under `sparkwin/`; a reference is
  * any `sparkwin.<layer>` outside a comment, so a fully qualified name counts as an import.
  *
  * Every package, not only a layer, imports in one direction too: no two packages reach each
  * other, however deep (`operator` and `operator.store`, `runtime.spark.task` and
  * `runtime.spark.query`). There a file's package is its `package` clause, and a reference is a
  * name under `sparkwin.` outside comments and strings (the longest package it names) or a
  * sub-package named from its parent (`store.Bytes` in `operator`).
  */
class PackageLayersSuite extends munit.FunSuite {
  import PackageLayersSuite._

  test("the main sources' package graph has no cycle and follows the layers") {
    val edges = PackageLayers.edges(PackageLayers.sources(new File("src/main")))
    assert(edges.nonEmpty, "found no sources under src/main (the tests run in jvm/)")
    assertEquals(PackageLayers.cycle(edges.keySet), None, describe(edges))
    assertEquals(PackageLayers.unlayered(edges), Map.empty[(String, String), List[String]], describe(edges))
  }

  test("no two packages of the main sources reach each other, sub-packages included") {
    val sources = PackageLayers.sources(new File("src/main"))
    val edges = PackageLayers.packageEdges(sources)
    assert(edges.keySet.exists(_._1.count(_ == '.') > 1), "found no sub-package's imports")
    assertEquals(PackageLayers.cycle(edges.keySet), None, describe(edges))
  }

  test("a cycle between a package and its sub-package is caught, by full or relative names") {
    val parent = SourceFile("operator", "package sparkwin.operator\n\nclass A { val b = store.Bytes }\n")
    val child = SourceFile("operator", "package sparkwin.operator.store\n\nimport sparkwin.operator.A\n")
    val edges = PackageLayers.packageEdges(List(parent, child))
    assertEquals(
      edges.keySet,
      Set("sparkwin.operator" -> "sparkwin.operator.store", "sparkwin.operator.store" -> "sparkwin.operator")
    )
    assert(PackageLayers.cycle(edges.keySet).isDefined)
    val quoted = SourceFile(
      "operator",
      "package sparkwin.operator.store\n\nclass B { val s = \"sparkwin.operator.A\" }\n"
    )
    assertEquals(
      PackageLayers.packageEdges(List(parent, quoted)).keySet,
      Set("sparkwin.operator" -> "sparkwin.operator.store")
    )
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

    /** The package a source declares (its `package` clauses joined), or "" for none. */
    def packageOf(text: String): String =
      """(?m)^\s*package\s+([\w.]+);?\s*$""".r.findAllMatchIn(code(text)).map(_.group(1)).mkString(".")

    /** The code of `text` without comments and string literals. */
    def bare(text: String): String =
      code(text)
        .replaceAll("'(?:[^'\\\\\n]|\\\\.)'", "' '")
        .replaceAll("(?s)\"\"\".*?\"\"\"", "\"\"")
        .replaceAll("\"(?:[^\"\\\\\n]|\\\\.)*\"", "\"\"")

    private val Qualified = """\bsparkwin((?:\.[a-z]\w*)*)""".r

    /** Package -> referenced package (every package, sub-packages included), with the files that
      * make each edge. A qualified name counts for the longest package it names; a sub-package
      * named from its parent (`store.Bytes`, `import store._`) counts too.
      */
    def packageEdges(sources: List[SourceFile]): Map[(String, String), List[String]] = {
      val packaged = sources.map(s => (s, packageOf(s.text))).filter(_._2.startsWith("sparkwin"))
      val packages = packaged.map(_._2).toSet
      def longest(name: String): Option[String] =
        Iterator.iterate(name)(n => n.take(n.lastIndexOf('.').max(0))).takeWhile(_.nonEmpty).find(packages)
      packaged
        .flatMap { case (s, pkg) =>
          val body = bare(s.text).linesIterator.filterNot(_.trim.startsWith("package ")).mkString("\n")
          val qualified = Qualified.findAllMatchIn(body).flatMap(m => longest("sparkwin" + m.group(1)))
          val children = packages.iterator.filter { p =>
            p.startsWith(pkg + ".") && !p.drop(pkg.length + 1).contains('.') &&
            ("""(?<![\w.])""" + p.drop(pkg.length + 1) + """\.[A-Z_{]""").r.findFirstIn(body).isDefined
          }
          (qualified ++ children).filter(_ != pkg).toSet.map((to: String) => ((pkg, to), s.name))
        }
        .groupBy(_._1)
        .map { case (edge, hits) => edge -> hits.map(_._2).distinct }
    }

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
