"""Fuzz settings: a small derandomized run in `make test`; `make fuzz` sets DRATWIN_FUZZ_EXAMPLES for a campaign."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings
from tests.fuzz.harness import TALLY

_EXAMPLES = os.environ.get("DRATWIN_FUZZ_EXAMPLES")
_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
           HealthCheck.large_base_example]
settings.register_profile("test", max_examples=12, derandomize=True, deadline=None, suppress_health_check=_CHECKS,
                          database=None)
settings.register_profile("fuzz", max_examples=int(_EXAMPLES or 0) or 100, deadline=None,
                          suppress_health_check=_CHECKS)
FUZZ = settings.get_profile("fuzz" if _EXAMPLES else "test")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TALLY.inputs:
        return
    commands = ", ".join(f"{name or '-'} {count:,}" for name, count in sorted(TALLY.by_command.items()))
    terminalreporter.write_line(
        f"fuzz: {TALLY.inputs:,} inputs tried ({commands}); {len(TALLY.failures)} broke the contract "
        "(traceback, hang, bad exit status or no JSON)"
    )
    for failure in TALLY.failures:
        terminalreporter.write_line(f"  {failure}")
