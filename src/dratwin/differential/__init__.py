"""Differential testing of dratwin's allocator against the upstream Kubernetes allocator.

- :mod:`~dratwin.differential.casefile`: the allocator case format (the conformance suite's), its
  feature gates, and writing a case file;
- :mod:`~dratwin.differential.compare`: the conformance comparison rules, as a pure function;
- :mod:`~dratwin.differential.generator`: a seeded random case generator covering every allocator
  feature, and :func:`~dratwin.differential.coverage.coverage` to count what a case exercises;
- :mod:`~dratwin.differential.oracle`: running the Go oracle (``tools/oracle``), which answers with
  upstream's ``structured.NewAllocator``;
- :mod:`~dratwin.differential.run`: ``python -m dratwin.differential`` (``make differential``).
"""
