"""The FGD paper's table on the published trace (DRATWIN_SHARED): FGD and BestFit on the default workload,
10 seeds, within 0.5 points of the published mean of unallocated GPU % at 100% arrival.

Collected only when DRATWIN_SHARED is set (tests/conftest.py); the whole table is in bench/RESULTS.md.
"""

from __future__ import annotations

import pytest
from tests.conftest import shared_folder

from dratwin.trace.paper_table import find_expected, find_trace, read_published, run_table
from dratwin.trace.replay import PAPER_SEEDS


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["fgd", "bestfit"])
def test_default_workload_matches_the_published_mean(policy: str) -> None:
    shared = shared_folder()
    assert shared is not None
    folder = shared / "data" / "alibaba-gpu-v2023" / "csv"
    expected = find_expected(folder)
    assert expected is not None
    [cell] = run_table(find_trace(folder), ["default"], [policy], PAPER_SEEDS, read_published(expected))
    assert len(cell.ours) == len(cell.published) == 10
    assert cell.difference is not None and abs(cell.difference) <= 0.5
