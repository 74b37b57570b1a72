"""The one place the sparkwin version is written; build.sbt reads it for the jar."""

__version__ = "0.6.0.dev0"
