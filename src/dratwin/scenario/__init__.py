"""Scenarios: what ``dratwin simulate`` is asked to run, read from a ``kind: Scenario`` file.

``load(path)`` returns the :class:`Scenario` and its :class:`~dratwin.scenario.model.RunSpec` list (one per
variant and seed) or raises :class:`ScenarioError` (an ``InputError``) holding every problem of the file;
``check(path)`` returns the problems instead of raising (``dratwin validate`` uses it). The format is
described in :mod:`dratwin.scenario.format` and ``examples/simulate/README.md``. A ``kind: Sweep`` file (a
scenario and axes of values, expanded into every combination) is read by :mod:`dratwin.scenario.sweep`.
"""

from dratwin.scenario.document import Scenario, ScenarioError, check, check_document, is_scenario, load

__all__ = ["Scenario", "ScenarioError", "check", "check_document", "is_scenario", "load"]
