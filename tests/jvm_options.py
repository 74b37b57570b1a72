"""The JVM options of every JVM the tests start: the session's driver, the Kafka broker, the
standalone cluster's daemons, driver and executors.

Test JVMs live minutes and run small data: C2's compiles of Spark's planner, code generator and
state store cost more CPU than their faster code saves there (a compat subset with two workers:
13-19% less CPU, 4-9% less time), and the CPU is what a CI run waits on. The serial collector
keeps a small heap without GC threads. Neither changes what a test checks.
"""

QUICK_JVM = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
