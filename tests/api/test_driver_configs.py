"""Opaque configuration the Neuron DRA driver would refuse at prepare time: warnings, never API errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from tests.builders.validation import claim, errors, validate

from dratwin.api.validation import Severity

NEURON_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "neuron.aws.com"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "neuron.aws.com"'}}]},
}
PARAMETERS = "spec.spec.devices.config[0].opaque.parameters"


def neuron_template(parameters: Any, driver: str = "neuron.aws.com") -> dict[str, Any]:
    devices = {
        "requests": [{"name": "neurons", "exactly": {"deviceClassName": "neuron.aws.com", "allocationMode": "All"}}],
        "config": [{"requests": ["neurons"], "opaque": {"driver": driver, "parameters": parameters}}],
    }
    return claim(devices, name="all-neurons-lnc-1", kind="ResourceClaimTemplate")


@dataclass(frozen=True)
class ConfigCase:
    id: str
    parameters: Any
    warnings: list[tuple[str, str]]  # (field under parameters, what the message says)
    driver: str = "neuron.aws.com"
    hint: str = ""


CASES = [
    # The Neuron docs' own configs (lnc-setting-trn2.yaml, 4-node-inference-us.yaml, us-and-lnc-config.yaml).
    ConfigCase("docs: LNC 1", {"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCore": 1}, []),
    ConfigCase("docs: 4-node UltraServer",
               {"apiVersion": "neuron.aws.com/v1", "kind": "UltraServerConfig", "ultraserverMode": 4}, []),
    ConfigCase("LNC 2 (the Trn2 default)",
               {"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCore": 2}, []),
    ConfigCase("beta apiVersion",
               {"apiVersion": "neuron.aws.com/v1alphav1", "kind": "NeuronConfig", "logicalNeuronCore": 1},
               [("apiVersion", "the beta Neuron DRA driver's apiVersion")], hint="use neuron.aws.com/v1"),
    ConfigCase("older beta group",
               {"apiVersion": "resource.neuron.aws.com/v1alphav1", "kind": "NeuronConfig", "logicalNeuronCore": 1},
               [("apiVersion", "the beta Neuron DRA driver's apiVersion")]),
    ConfigCase("no apiVersion", {"kind": "NeuronConfig", "logicalNeuronCore": 1},
               [("apiVersion", "config types are neuron.aws.com/v1")]),
    ConfigCase("misspelt field (strict decoding)",
               {"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCoreCount": 1},
               [("logicalNeuronCoreCount", "has no field 'logicalNeuronCoreCount'")],
               hint='did you mean "logicalNeuronCore"?'),
    ConfigCase("LNC 4", {"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCore": 4},
               [("logicalNeuronCore", "must be one of 1, 2")]),
    ConfigCase("LNC as a string", {"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCore": "1"},
               [("logicalNeuronCore", "must be one of 1, 2")]),
    ConfigCase("UltraServer mode 3",
               {"apiVersion": "neuron.aws.com/v1", "kind": "UltraServerConfig", "ultraserverMode": 3},
               [("ultraserverMode", "must be one of 1, 2, 4")]),
    ConfigCase("LNC field in the UltraServer kind",
               {"apiVersion": "neuron.aws.com/v1", "kind": "UltraServerConfig", "logicalNeuronCore": 1},
               [("logicalNeuronCore", "UltraServerConfig has no field")]),
    ConfigCase("unknown kind", {"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfg", "logicalNeuronCore": 1},
               [("kind", "config kinds are NeuronConfig and UltraServerConfig")], hint='did you mean "NeuronConfig"?'),
    ConfigCase("another driver's parameters are not read",
               {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}, [], driver="gpu.nvidia.com"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_neuron_config(case: ConfigCase) -> None:
    problems = validate(NEURON_CLASS, neuron_template(case.parameters, case.driver))
    assert errors(problems) == []  # the API server accepts any object: never an error
    found = [(p.field.removeprefix(f"{PARAMETERS}."), p.message) for p in problems]
    assert len(found) == len(case.warnings), found
    for (field, message), (expected_field, expected) in zip(found, case.warnings, strict=True):
        assert field == expected_field
        assert expected in message
        assert "the API server stores it unread" in message and "ContainerCreating" in message
    assert all(p.severity is Severity.WARNING for p in problems)
    if case.hint:
        assert problems[0].hint == case.hint


def test_the_warning_points_at_the_line_of_the_field() -> None:
    problems = validate(NEURON_CLASS, neuron_template({"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig",
                                                       "logicalNeuronCore": 4}))
    [problem] = problems
    assert problem.file == "test.yaml" and problem.line > 1
