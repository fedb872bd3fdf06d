"""Shared test configuration: where the test data lives.

Everything the tests need is in the repository: the allocator conformance cases (``conformance/``), the
device shapes real drivers publish (``tests/data/drivers/``, provenance in its README) and a small GPU
trace in the Alibaba format (``tests/data/trace/``). ``DRATWIN_SHARED`` may name a reference folder of the
same layout (``conformance/``, ``data/drivers/``) whose extra cases are run too; it is never required.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
DRIVERS = DATA / "drivers"
CONFORMANCE = REPO / "conformance"
EXAMPLES = REPO / "examples"


def shared_folder() -> Path | None:
    """The optional reference folder named by ``DRATWIN_SHARED``, when it exists."""
    named = os.environ.get("DRATWIN_SHARED")
    if not named:
        return None
    folder = Path(named)
    return folder if folder.is_dir() else None


# Modules that read the reference folder (tests/**/test_reference_*.py) are collected only when it is given.
collect_ignore_glob = [] if shared_folder() is not None else ["*/test_reference_*.py"]
