"""Sweep files for the tests: a small sweep over the base scenario of :mod:`tests.builders.scenarios` (its
lines are asserted), written beside that scenario, and edits of it."""

from __future__ import annotations

from pathlib import Path

from tests.builders.scenarios import BASE, write

# Line numbers are part of the tests: keep this text as it is, add cases by editing copies of it.
SWEEP = """\
apiVersion: dratwin.io/v1alpha1
kind: Sweep
metadata:
  name: grid
spec:
  scenario: scenario.yaml
  seeds: [1, 2]
  axes:
    scoring: [LeastAllocated, MostAllocated]
    autoscalerTarget: [50, 80]
    arrivalRateScale: [1, 2]
"""


def sweep_text(old: str = "", new: str = "", text: str = SWEEP) -> str:
    """``text`` with ``old`` (which must be there once) replaced by ``new``; ``text`` itself without ``old``."""
    if not old:
        return text
    assert text.count(old) == 1, f"{old!r} is not in the sweep exactly once"
    return text.replace(old, new)


def write_sweep(folder: Path, text: str = SWEEP, scenario: str = BASE) -> str:
    """The sweep and, beside it as scenario.yaml, its base scenario; the sweep's path."""
    write(folder, scenario, "scenario.yaml")
    return write(folder, text, "sweep.yaml")


def tiny_sweep(scenario_file: str, axes: str = "    scoring: [LeastAllocated, MostAllocated]\n",
               seeds: str = "[7]") -> str:
    """A sweep of ``scenario_file`` over ``axes`` (YAML lines under ``axes:``)."""
    return ("apiVersion: dratwin.io/v1alpha1\nkind: Sweep\nmetadata:\n  name: tiny\nspec:\n"
            f"  scenario: {scenario_file}\n  seeds: {seeds}\n  axes:\n{axes}")
