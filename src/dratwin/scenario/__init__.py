"""Scenarios: what ``dratwin simulate`` is asked to run, read from a ``kind: Scenario`` file."""
