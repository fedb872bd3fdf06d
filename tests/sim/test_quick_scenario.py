"""The bare form of ``dratwin simulate``: its objects go through admission once, and what admission says
(refusals, conversions) reaches the run's notes."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.builders.manifests import gpu_class, gpu_slice, manifest, node, resource_claim
from tests.builders.sim import job, template

from dratwin.api import intake
from dratwin.api.intake import ReadObject
from dratwin.api.loader import LoadedObject
from dratwin.cli.main import main

Raw = dict[str, object]


def older_version(raw: Raw) -> Raw:
    return {**raw, "apiVersion": "resource.k8s.io/v1beta2"}


def unknown_field(raw: Raw) -> Raw:
    return {**raw, "spec": {**dict(raw["spec"]), "colour": "blue"}}  # type: ignore[call-overload]


@dataclass
class IntakeCase:
    name: str
    change: Callable[[Raw], Raw]  # what is done to the cluster's DeviceClass
    note: str  # the one note admission has for it
    code: int


INTAKE_CASES = [
    IntakeCase("as-written", lambda raw: raw, "", 0),
    IntakeCase("older-version", older_version, "resource.k8s.io/v1beta2 DeviceClass", 0),
    IntakeCase("refused", unknown_field, "colour", 1),
]


@pytest.mark.parametrize("case", INTAKE_CASES, ids=lambda c: c.name)
def test_the_bare_form_reads_each_object_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              case: IntakeCase) -> None:
    objects = [case.change(gpu_class()), node("n1"), gpu_slice("n1", 1), template("one"),
               job("a", "one", run_for="10m")]
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(manifest(*objects))
    reads: list[str] = []
    real = intake.read_object

    def counted(obj: LoadedObject) -> ReadObject:
        reads.append(obj.ref)
        return real(obj)

    monkeypatch.setattr(intake, "read_object", counted)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["simulate", str(scenario), "--until", "1h", "-o", "json"])
    assert sorted(reads) == sorted(set(reads)) and len(reads) == len(objects)
    notes = json.loads(buffer.getvalue())["notes"]
    if case.note:
        assert len([n for n in notes if case.note in n]) == 1, notes
    else:
        assert not [n for n in notes if "DeviceClass" in n], notes
    # a refused DeviceClass leaves the job's claim without a class: the pod is never placed
    assert code == case.code


def test_a_refused_claim_is_named_once_and_the_rest_runs(tmp_path: Path) -> None:
    shared = unknown_field(resource_claim("shared"))
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(manifest(gpu_class(), node("n1"), gpu_slice("n1", 1), template("one"), shared,
                                 job("a", "one", run_for="10m")))
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["simulate", str(scenario), "--until", "1h", "-o", "json"])
    result = json.loads(buffer.getvalue())
    assert len([n for n in result["notes"] if "ResourceClaim default/shared" in n and "colour" in n]) == 1
    assert result["pods_succeeded"] == 1 and code == 1
