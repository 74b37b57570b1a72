package sparkwin

class BuildInfoSuite extends munit.FunSuite {
  test("the jar's version is the Python package's version") {
    val py = scala.io.Source.fromFile("../python/sparkwin/_version.py").mkString
    assert(py.contains("\"" + BuildInfo.version + "\""), py)
  }
}
