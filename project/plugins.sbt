addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.6.2")
