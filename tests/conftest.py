"""Shared test configuration: where the reference material (../shared) lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DRATWIN_SHARED", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared reference folder; its absence is an error, not a reason to skip."""
    assert SHARED.is_dir(), f"reference folder {SHARED} is missing: set DRATWIN_SHARED to its path"
    return SHARED
