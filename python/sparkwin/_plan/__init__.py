"""The plan a builder writes (docs/plan.md): the builders' immutable state and the plan it
becomes (``builder``), a call's columns and types (``schema``), the JVM's rules asked and their
refusals rendered (``refusal``), the contract both halves read (``contract``) and durations
(``durations``). Nothing here starts a query or reaches the JVM but to ask its rules."""
