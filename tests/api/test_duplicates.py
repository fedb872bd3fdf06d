"""The same object in several files (or twice in one): resolved as kubectl apply applies them in order."""

from __future__ import annotations

import copy

import pytest
from tests.builders.validation import GPU_CLASS, Wire, claim, load_files, namespace, pod, request, resource_slice

from dratwin.api.duplicates import first_difference, merge_duplicates, render_field

CLAIM = claim({"requests": [request()]}, namespace="ml")
BIGGER_CLAIM = claim({"requests": [request(count=2)]}, namespace="ml")
LABELLED_CLAIM = copy.deepcopy(CLAIM)
LABELLED_CLAIM["metadata"]["labels"] = {"team": "a"}
SLICE = resource_slice([{"name": "gpu-0"}])
MOVED_SLICE = resource_slice([{"name": "gpu-0"}], nodeName="node-2")
MORE_DEVICES = resource_slice([{"name": "gpu-0"}, {"name": "gpu-1"}])
NO_NAMESPACE = claim({"requests": [request()]})
del NO_NAMESPACE["metadata"]["namespace"]

# (id, first file, second file, objects kept, [(field of the difference, refused by the API server)])
CASES: list[tuple[str, list[Wire], list[Wire], int, list[tuple[str, bool]]]] = [
    ("identical-namespace", [namespace()], [namespace()], 1, []),
    ("identical-class-and-claim", [GPU_CLASS, CLAIM], [GPU_CLASS, CLAIM], 2, []),
    ("namespace-relabelled", [namespace()], [namespace(team="a")], 1, [("metadata.labels", False)]),
    ("class-changed", [GPU_CLASS], [{**GPU_CLASS, "spec": {}}], 1, [("spec.selectors", False)]),
    ("claim-spec-is-immutable", [CLAIM], [BIGGER_CLAIM], 1, [("spec.devices.requests[0].exactly.count", True)]),
    ("claim-labels-may-change", [CLAIM], [LABELLED_CLAIM], 1, [("metadata.labels", False)]),
    ("slice-node-is-immutable", [SLICE], [MOVED_SLICE], 1, [("spec.nodeName", True)]),
    ("slice-devices-may-change", [SLICE], [MORE_DEVICES], 1, [("spec.devices[1]", False)]),
    ("pod-image-may-change", [pod([], image="a")], [pod([], image="b")], 1, [("spec.containers[0].image", False)]),
    ("pod-claims-are-immutable", [pod([])], [pod([{"name": "g", "resourceClaimName": "c"}])], 1,
     [("spec.resourceClaims[0]", True)]),
    ("other-namespace-is-another-object", [CLAIM], [claim({"requests": [request()]}, namespace="other")], 2, []),
    ("no-namespace-is-default", [claim({"requests": [request()]})], [NO_NAMESPACE], 1, [("metadata.namespace", False)]),
]


@pytest.mark.parametrize(("first", "second", "kept", "differences"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_repeated_objects(first: list[Wire], second: list[Wire], kept: int,
                          differences: list[tuple[str, bool]]) -> None:
    merged = merge_duplicates(load_files({"a.yaml": first, "b.yaml": second}))
    assert len(merged.objects) == kept
    assert [(render_field(r.field), r.refused) for r in merged.replacements] == differences
    for replacement in merged.replacements:
        winner = replacement.earlier if replacement.refused else replacement.later
        assert winner in merged.objects  # a refused update leaves the earlier definition
        assert "a.yaml:" in replacement.describe()


def test_a_replaced_object_keeps_its_place_with_the_later_content() -> None:
    merged = merge_duplicates(load_files({"a.yaml": [namespace(), GPU_CLASS], "b.yaml": [namespace(team="a")]}))
    assert [o.kind for o in merged.objects] == ["Namespace", "DeviceClass"]
    assert merged.objects[0].source.path == "b.yaml"


def test_objects_without_a_name_are_never_duplicates() -> None:
    generated = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "p-"}, "spec": {}}
    assert len(merge_duplicates(load_files({"a.yaml": [generated, generated]})).objects) == 2


@pytest.mark.parametrize(("before", "after", "path"), [
    ({"a": 1, "b": 2}, {"a": 1, "b": 3}, ("b",)),
    ({"a": {"x": [1, 2]}}, {"a": {"x": [1, 5]}}, ("a", "x", 1)),
    ({"a": [1]}, {"a": [1, 2]}, ("a", 1)),
    ({"a": 1}, {"a": 1, "b": 2}, ("b",)),
    ({"a": 1, "b": 2}, {"a": 1}, ("b",)),
], ids=["changed", "nested", "longer-list", "added", "removed"])
def test_first_difference(before: Wire, after: Wire, path: tuple[str | int, ...]) -> None:
    assert first_difference(before, after) == path
