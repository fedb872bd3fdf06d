"""NVIDIA's ComputeDomain as the API server and the driver's controller take it: structure from the CRD,
the CRD's rules, the template name the controller creates, the immutable spec, the group's versions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.compute_domains import compute_domain
from tests.builders.validation import Wire, validate, validate_files

from dratwin.api.validation import ProblemKind, Severity


def _with(spec: dict[str, Any], **metadata: Any) -> Wire:
    domain = compute_domain()
    domain["spec"] = spec
    domain["metadata"].update(metadata)
    return domain


@dataclass(frozen=True)
class Case:
    name: str
    obj: Wire
    # (severity, kind, field, message fragment) of every problem, in order
    expect: list[tuple[Severity, ProblemKind, str, str]] = field(default_factory=list)


CHANNEL = {"resourceClaimTemplate": {"name": "imex-channel-0"}}
CASES = [
    Case("nvidia-demo", compute_domain(num_nodes=1)),
    Case("eks-guide-elastic", compute_domain(num_nodes=0)),
    Case("all-channels", compute_domain(allocation_mode="All")),
    Case("negative-num-nodes", _with({"numNodes": -1, "channel": CHANNEL}),
         [(Severity.ERROR, ProblemKind.INVALID, "spec.numNodes", "greater than or equal to 0")]),
    Case("misspelt-allocation-mode", compute_domain(allocation_mode="single"),
         [(Severity.ERROR, ProblemKind.UNSUPPORTED, "spec.channel.allocationMode",
           'supported values: "All", "Single"')]),
    Case("template-name-the-controller-cannot-create", compute_domain(template="IMEX_channel"),
         [(Severity.ERROR, ProblemKind.INVALID, "spec.channel.resourceClaimTemplate.name",
           "the ComputeDomain controller cannot create a ResourceClaimTemplate of this name")]),
    Case("empty-template-name", compute_domain(template=""),
         [(Severity.ERROR, ProblemKind.INVALID, "spec.channel.resourceClaimTemplate.name", "must not be empty")]),
    Case("no-channel", _with({"numNodes": 2}),
         [(Severity.ERROR, ProblemKind.REQUIRED, "spec.channel", "")]),
    Case("no-template-name", _with({"channel": {"resourceClaimTemplate": {}}}),
         [(Severity.ERROR, ProblemKind.REQUIRED, "spec.channel.resourceClaimTemplate.name", "")]),
    Case("unknown-field", _with({"channel": {**CHANNEL, "allocation": "All"}}),
         [(Severity.ERROR, ProblemKind.UNKNOWN_FIELD, "spec.channel.allocation", "no such field")]),
    Case("num-nodes-as-a-string", _with({"numNodes": "2", "channel": CHANNEL}),
         [(Severity.ERROR, ProblemKind.INVALID, "spec.numNodes", "must be an integer")]),
    Case("bad-name", compute_domain(name="Imex"),
         [(Severity.ERROR, ProblemKind.INVALID, "metadata.name", "DNS subdomain")]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_compute_domain_rules(case: Case) -> None:
    problems = validate(case.obj)
    got = [(p.severity, p.kind, p.field, p.message) for p in problems]
    assert len(got) == len(case.expect), got
    for (severity, kind, path, message), expected in zip(got, case.expect, strict=True):
        assert (severity, kind, path) == expected[:3]
        assert expected[3] in message


def test_problems_point_at_the_line_written() -> None:
    [problem] = validate(compute_domain(allocation_mode="Singel"))
    assert problem.line == 10  # apiVersion, kind, metadata (3), spec, channel, resourceClaimTemplate (2), mode
    assert problem.hint == 'did you mean "Single"?'


def test_an_older_version_is_an_error_naming_the_served_one() -> None:
    domain = {**compute_domain(), "apiVersion": "resource.nvidia.com/v1alpha1"}
    [problem] = validate(domain)
    assert problem.severity is Severity.ERROR
    assert "resource.nvidia.com/v1beta1 only" in problem.message


def test_the_daemons_cliques_are_skipped_with_a_warning() -> None:
    clique = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomainClique",
              "metadata": {"name": "x.y", "namespace": "nvidia-dra-driver-gpu"}}
    [problem] = validate(clique)
    assert (problem.severity, problem.kind) == (Severity.WARNING, ProblemKind.NOT_CHECKED)


def test_the_spec_is_immutable() -> None:
    changed = compute_domain(num_nodes=2)
    [problem] = [p for p in validate_files({"a.yaml": [compute_domain(num_nodes=1)], "b.yaml": [changed]})
                 if p.is_error]
    assert "spec" in problem.message
