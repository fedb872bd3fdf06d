"""The NodePools a plan reads: :mod:`dratwin.provisioner.nodepools` (shared with the simulation's provisioner)."""

from __future__ import annotations

from dratwin.provisioner.nodepools import (
    AUTO_MODE_DRA_VERSION,
    AUTO_MODE_NVIDIA_ROLE,
    PlanError,
    PlanOptions,
    managed_nodepools,
    read_pool,
    why_nothing,
)

__all__ = [
    "AUTO_MODE_DRA_VERSION",
    "AUTO_MODE_NVIDIA_ROLE",
    "PlanError",
    "PlanOptions",
    "managed_nodepools",
    "read_pool",
    "why_nothing",
]
