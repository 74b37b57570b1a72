"""Running on Spark: the session and its jars (``session``, ``jar``, ``classpath``, ``conf``,
``delta``, ``kafka``), a pipeline's union of outputs split into each output (``runtime``) and
real-time mode's checks and query (``realtime``). The JVM is reached through the transport
(``sparkwin._transport``), never directly."""
