"""The driver manifests of the test data (tests/data/drivers) validate without errors.

Each file is validated on its own (claims together with the DeviceClasses they use): some files hold
alternative layouts of the same node, which are not meant to coexist in one cluster.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import DRIVERS

from dratwin.api.loader import load_paths
from dratwin.api.validation import ProblemKind, SelectorCompilerLike, validate_objects

NOT_OBJECTS = {"karpenter-dra-instance-device-metadata.yaml"}  # per-instance-type metadata, not Kubernetes objects


def _compiler() -> SelectorCompilerLike | None:
    try:
        from dratwin.cel import SelectorCompiler  # type: ignore[attr-defined, unused-ignore]
    except ImportError:  # pragma: no cover - dratwin.cel is written separately
        return None
    compiler: SelectorCompilerLike = SelectorCompiler(list_type_attributes=False)
    return compiler


def _manifests() -> list[Path]:
    return sorted(p for p in DRIVERS.glob("*.yaml") if p.name not in NOT_OBJECTS)


def test_the_manifests_are_there() -> None:
    names = {p.name for p in _manifests()}
    assert {"deviceclasses.yaml", "resourceclaims.yaml", "resourceslice-p5.48xlarge.yaml"} <= names
    assert len(names) >= 7


def test_every_driver_manifest_validates_without_errors() -> None:
    drivers = DRIVERS
    compiler = _compiler()
    for manifest in _manifests():
        paths = [manifest] if manifest.name == "deviceclasses.yaml" else [drivers / "deviceclasses.yaml", manifest]
        objects = load_paths([str(p) for p in paths])
        problems = validate_objects(objects, compiler)
        assert [str(p) for p in problems if p.is_error] == [], manifest.name
        for problem in problems:  # warnings: only the ComputeDomain CRD and the example driver's alternative layouts
            assert problem.kind is ProblemKind.NOT_CHECKED or "dra-example-driver" in manifest.name, str(problem)


@pytest.mark.parametrize("name", ["resourceslice-p4d.24xlarge-dynamic-mig.yaml"])
def test_partitionable_layout_is_a_complete_valid_pool(name: str) -> None:
    # 1 counters slice + 8 device slices: counter references are checked across the whole pool.
    objects = load_paths([str(DRIVERS / name)])
    assert len(objects) == 9
    assert validate_objects(objects, None) == []
