"""``dratwin allocate``: one claim at a time or together, the variant, the search bound, and inputs that
used to end in a traceback. End to end through ``main``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.builders import claim, device, device_class, node, resource_slice
from tests.builders.allocator import as_manifest, partition_claims, partition_classes, partitionable_gpus

from dratwin.cli.main import main

GPU = "gpu.example.com"
STABLE = "DRAConsumableCapacity=false,DRADeviceBindingConditions=false"


def gpus(count: int = 2) -> str:
    """A node with ``count`` GPUs; claim ``one`` wants 1, ``all`` wants every GPU the node has."""
    return as_manifest(
        [
            node("n1"),
            device_class("gpu", f"device.driver == '{GPU}'"),
            resource_slice("n1-gpus", GPU, node_name="n1", devices=[device(f"gpu-{i}") for i in range(count)]),
            claim("one").request("gpu", "gpu", 1, mode="ExactCount").build(),
            claim("all").request("gpu", "gpu", count, mode="ExactCount").build(),
        ]
    )


TEMPLATE_ONLY = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu}
"""

NO_POOL_NAME_AND_EMPTY_SPEC = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: any}
spec: {}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s1}
spec:
  driver: d.example.com
  nodeName: n1
  pool: {generation: 1, resourceSliceCount: 1}
  devices: [{name: a}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: empty}
spec: {}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: any}
"""

UNKNOWN_CLASS = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: typo, namespace: ml}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: gpu.exmple.com}
"""


def two_pools() -> str:
    """Two pools with one device each, the later pool name first in the input."""
    return as_manifest(
        [
            node("n1"),
            device_class("any", "true"),
            resource_slice("s-b", GPU, "pool-b", node_name="n1", devices=[device("d")]),
            resource_slice("s-a", GPU, "pool-a", node_name="n1", devices=[device("d")]),
            claim("c").request("r", "any", 1, mode="ExactCount").build(),
        ]
    )


def partitions() -> str:
    return as_manifest([node("n1"), *partition_classes(), *partitionable_gpus(), *partition_claims(5)])


@dataclass
class Run:
    id: str
    text: Callable[[], str]
    argv: list[str]
    code: int
    check: Callable[[dict[str, Any] | str], None]
    json: bool = True


def body_is(**expected: Any) -> Callable[[dict[str, Any] | str], None]:
    def check(body: dict[str, Any] | str) -> None:
        assert isinstance(body, dict)
        for key, value in expected.items():
            assert body.get(key) == value, (key, body.get(key))

    return check


def allocated_claims(*keys: str) -> Callable[[dict[str, Any] | str], None]:
    def check(body: dict[str, Any] | str) -> None:
        assert isinstance(body, dict) and sorted(body["allocations"]) == sorted(keys)

    return check


def both(*checks: Callable[[dict[str, Any] | str], None]) -> Callable[[dict[str, Any] | str], None]:
    def check(body: dict[str, Any] | str) -> None:
        for one in checks:
            one(body)

    return check


def claim_results(*pairs: tuple[str, str]) -> Callable[[dict[str, Any] | str], None]:
    def check(body: dict[str, Any] | str) -> None:
        assert isinstance(body, dict)
        assert [(c["claim"], c["result"]) for c in body["claims"]] == list(pairs)

    return check


def order_dependent(body: dict[str, Any] | str) -> None:
    assert isinstance(body, dict)
    probe = body["claims"][0]["poolOrder"]
    assert probe["dependsOnOrder"] is True and len(probe["answers"]) == 2


def says(*parts: str) -> Callable[[dict[str, Any] | str], None]:
    def check(out: dict[str, Any] | str) -> None:
        text = out if isinstance(out, str) else json.dumps(out)
        for part in parts:
            assert part in text, (part, text)

    return check


RUNS = [
    # Without --claim, independent claims are allocated one by one: "one" gets a GPU, "all" then lacks one.
    Run(
        "one-by-one-by-default",
        gpus,
        [],
        1,
        both(body_is(result="unsatisfiable", mode="one-by-one", variant="incubating"), allocated_claims("default/one")),
    ),
    Run(
        "each-claim-has-its-own-result",
        gpus,
        [],
        1,
        claim_results(("default/one", "allocated"), ("default/all", "unsatisfiable")),
    ),
    # --together: all claims as one pod's, all or none.
    Run("together-is-all-or-none", gpus, ["--together"], 1, both(body_is(mode="together"), allocated_claims())),
    # --claim keeps the joint semantics (the conformance runner relies on it).
    Run("named-claims-are-joint", gpus, ["--claim", "one"], 0, allocated_claims("default/one")),
    Run("table-says-one-by-one", gpus, [], 1, says("1 of 2 claim(s) allocated, one by one", "--together"), False),
    # Templates only: say why there is nothing, and where to go.
    Run(
        "templates-point-at-schedule",
        lambda: TEMPLATE_ONLY,
        [],
        0,
        says("ResourceClaimTemplate", "creates a claim from a template for each pod", "dratwin schedule -f "),
        False,
    ),
    Run("templates-in-json", lambda: TEMPLATE_ONLY, [], 0, says("dratwin schedule -f ")),
    # Used to end in KeyError: 'results' and KeyError: 'pool' while printing the table.
    Run(
        "empty-claim-and-unnamed-pool-in-the-table",
        lambda: NO_POOL_NAME_AND_EMPTY_SPEC,
        [],
        0,
        says("(no devices requested)", "d.example.com//a"),
        False,
    ),
    # The variant upstream would run, and where its random pool order decides.
    Run(
        "stable-pool-order-is-reported",
        two_pools,
        ["--feature-gates", STABLE],
        0,
        both(body_is(variant="stable"), order_dependent),
    ),
    Run(
        "stable-note-in-the-table",
        two_pools,
        ["--feature-gates", STABLE],
        0,
        says("note: the stable allocator variant", "random on every call", "2 different answers"),
        False,
    ),
    Run(
        "variants-can-be-limited",
        two_pools,
        ["--feature-gates", STABLE, "--variants", "incubating"],
        0,
        both(body_is(variant="incubating"), says("pool-a")),
    ),
    Run("unknown-variant", two_pools, ["--variants", "beta"], 2, says("unknown allocator variant 'beta'")),
    # Errors name the object and where it was written.
    Run(
        "errors-say-where",
        lambda: UNKNOWN_CLASS,
        ["--claim", "ml/typo"],
        2,
        says("objects.yaml:5: claim ml/typo, request r: could not retrieve device class gpu.exmple.com"),
    ),
    # The search bound: kube-scheduler's message, exit 1 (the node is unschedulable for the pod).
    Run(
        "search-past-the-filter-timeout",
        partitions,
        ["--together", "--filter-timeout", "0.02"],
        1,
        both(body_is(result="timeout", error="timed out trying to allocate devices"), says("filterTimeout of 0.02 s")),
    ),
    Run(
        "timeout-in-the-table",
        partitions,
        ["--together", "--filter-timeout", "0.02"],
        1,
        says("cannot allocate on node n1: timed out trying to allocate devices"),
        False,
    ),
]


@pytest.mark.parametrize("case", RUNS, ids=[r.id for r in RUNS])
def test_allocate(case: Run, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text(case.text())
    output = ["-o", "json"] if case.json else []
    code = main(["allocate", "-f", str(path), "--node", "n1", *case.argv, *output])
    captured = capsys.readouterr()
    assert code == case.code, captured
    if case.json:
        case.check(json.loads(captured.out))
    else:
        case.check(captured.out + captured.err)
