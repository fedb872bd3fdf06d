"""The published Alibaba GPU trace (in the reference folder named by DRATWIN_SHARED) reads with the same reader.

Collected only when DRATWIN_SHARED is set (tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import shared_folder

from dratwin.trace import read_nodes, read_pods


def _published() -> list[Path]:
    shared = shared_folder()
    assert shared is not None, "this module runs only with DRATWIN_SHARED set"
    return sorted((shared / "data" / "alibaba-gpu-v2023" / "csv").glob("*.csv"))


def test_the_published_trace_is_there() -> None:
    assert len(_published()) == 26


@pytest.mark.parametrize("path", _published(), ids=lambda p: p.name)
def test_the_published_trace_reads(path: Path) -> None:
    rows = read_nodes(path) if "node_list" in path.name else read_pods(path)
    assert len(rows) > 1000
