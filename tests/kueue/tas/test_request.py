"""A PodSet's topology request from its pod template's annotations (pkg/controller/jobframework/tas.go Build,
pkg/workload IsExplicitlyRequestingTAS, pkg/util/tas IsTAS at Kueue ff69552; concepts/
topology_aware_scheduling.md 'User-facing APIs')."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from dratwin.api.kueue import PodSetTopologyRequest
from dratwin.api.validation_formats import label_key
from dratwin.kueue.tas.request import (
    JOB_COMPLETION_INDEX,
    annotation_problems,
    explicitly_requests_tas,
    is_tas_pod,
    slice_layers,
    topology_request,
)

RACK = "cloud.com/topology-rack"
BLOCK = "cloud.com/topology-block"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
GROUP = "kueue.x-k8s.io/podset-group-name"

CASES: list[tuple[str, dict[str, str], str | None, Any]] = [
    ("no annotation and no pod index label: no request", {}, None, None),
    ("a Job always records its completion index label", {}, JOB_COMPLETION_INDEX,
     {"podIndexLabel": JOB_COMPLETION_INDEX}),
    ("required", {REQUIRED: RACK}, None, {"required": RACK}),
    ("preferred", {PREFERRED: BLOCK}, None, {"preferred": BLOCK}),
    ("required wins over preferred", {REQUIRED: RACK, PREFERRED: BLOCK}, None, {"required": RACK}),
    ("unconstrained parsed as Go's ParseBool", {UNCONSTRAINED: "True"}, None, {"unconstrained": True}),
    ("unconstrained false is still written", {UNCONSTRAINED: "0"}, None, {"unconstrained": False}),
    ("a bad unconstrained value is an error", {UNCONSTRAINED: "yes"}, None,
     f'strconv.ParseBool: parsing "yes": invalid syntax ({UNCONSTRAINED})'),
    ("slices need the size too", {SLICE: RACK}, None, None),
    ("slices alone", {SLICE: RACK, SLICE_SIZE: "4"}, None, {"podSetSliceRequiredTopology": RACK, "podSetSliceSize": 4}),
    ("slices beside required", {REQUIRED: BLOCK, SLICE: RACK, SLICE_SIZE: "2"}, None,
     {"required": BLOCK, "podSetSliceRequiredTopology": RACK, "podSetSliceSize": 2}),
    ("a group name only with required or preferred", {PREFERRED: BLOCK, GROUP: "g"}, None,
     {"preferred": BLOCK, "podSetGroupName": "g"}),
    ("a group name alone is dropped", {UNCONSTRAINED: "true", GROUP: "g"}, None, {"unconstrained": True}),
]


@pytest.mark.parametrize(("name", "annotations", "index_label", "expected"), CASES, ids=[c[0] for c in CASES])
def test_topology_request(name: str, annotations: dict[str, str], index_label: str | None, expected: Any) -> None:
    assert topology_request(annotations, index_label) == expected


EXPLICIT = [
    ("none", None, False),
    ("only a pod index label", {"podIndexLabel": JOB_COMPLETION_INDEX}, False),
    ("unconstrained false still asks for TAS", {"unconstrained": False}, True),
    ("required", {"required": RACK}, True),
    ("a slice size alone", {"podSetSliceSize": 2}, True),
]


@pytest.mark.parametrize(("name", "wire", "expected"), EXPLICIT, ids=[c[0] for c in EXPLICIT])
def test_explicit_request(name: str, wire: dict[str, Any] | None, expected: bool) -> None:
    request = None if wire is None else msgspec.convert(wire, PodSetTopologyRequest)
    assert explicitly_requests_tas(request) is expected


def test_slice_layers_and_tas_pods() -> None:
    multi = msgspec.convert({"podsetSliceRequiredTopologyConstraints": [{"topology": BLOCK, "size": 8},
                                                                        {"topology": RACK, "size": 4}]},
                            PodSetTopologyRequest)
    assert slice_layers(multi) == [(BLOCK, 8), (RACK, 4)]
    assert slice_layers(msgspec.convert({"podSetSliceRequiredTopology": RACK}, PodSetTopologyRequest)) == [(RACK, 0)]
    assert is_tas_pod({UNCONSTRAINED: "false"}) and is_tas_pod({SLICE: RACK}) and not is_tas_pod({GROUP: "g"})


PROBLEMS: list[tuple[str, dict[str, str], list[tuple[str, str]]]] = [
    ("one topology annotation is fine", {REQUIRED: RACK}, []),
    ("two of required, preferred and unconstrained", {REQUIRED: RACK, PREFERRED: RACK},
     [("", f'must not contain more than one topology annotation: ["{REQUIRED}", "{PREFERRED}", "{UNCONSTRAINED}"]')]),
    ("a level that is not a label name", {REQUIRED: "bad label!"},
     [(REQUIRED, problem) for problem in label_key("bad label!")]),
    ("a group needs required or preferred, and no slices", {GROUP: "7", SLICE: RACK, SLICE_SIZE: "2"},
     [(GROUP, "'7': must not be a number"), (GROUP, f"may not be set when '{SLICE_SIZE}' is specified"),
      (GROUP, f"may not be set when '{SLICE}' is specified"),
      (GROUP, f"may not be set when neither '{PREFERRED}' nor '{REQUIRED}' is specified")]),
    ("unconstrained must be a boolean", {UNCONSTRAINED: "yes"}, [(UNCONSTRAINED, "'yes': must be a boolean value")]),
    ("a slice size above the count, and without its level", {SLICE_SIZE: "8"},
     [(SLICE_SIZE, "'8': must not be greater than pod set count 4"),
      (SLICE_SIZE, f"may not be set when '{SLICE}' is not specified")]),
    ("a slice level needs its size", {SLICE: RACK}, [(SLICE_SIZE, f"must be set when '{SLICE}' is specified")]),
    ("a slice size below 1", {SLICE: RACK, SLICE_SIZE: "0"}, [(SLICE_SIZE, "'0': must be greater than or equal to 1")]),
]


@pytest.mark.parametrize(("name", "annotations", "expected"), PROBLEMS, ids=[c[0] for c in PROBLEMS])
def test_annotation_problems(name: str, annotations: dict[str, str], expected: list[tuple[str, str]]) -> None:
    """jobframework/tas_validation.go ValidateTASPodSetRequest and ValidateSliceSizeAnnotationUpperBound."""
    assert annotation_problems(annotations, count=4) == expected
