"""Admission checks (sim/admission_checks.py): quota reserved first, Admitted only when every check is Ready;
Retry evicts and requeues, Rejected deactivates; the scripted check and the data-readiness (LADF) check.

Kueue at ff69552: site/content/en/docs/concepts/admission_check.md; pkg/workload/admissionchecks.go
(SyncAdmittedCondition: UnsatisfiedAdmissionChecks); pkg/controller/core/workload_controller.go
(reconcileCheckBasedEviction, buildAdmissionChecksMessage); pkg/workload/evict/evict.go
(resetChecksOnEviction). The two controllers are the twin's own (dratwin.io/...): upstream has no such built-in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from tests.builders.kueue import cluster_queue, flavor_quotas, group, local_queue, quota, resource_flavor
from tests.builders.kueue_sim import kueue_basics, queued_job, simulate_objects
from tests.builders.manifests import manifest, node
from tests.builders.sim import simulate_text

from dratwin.scenario.model import ColdStartSpec
from dratwin.sim.admission_checks import MODEL_CACHE, SCRIPTED, Step, parse_script
from dratwin.sim.run import Simulation

Raw = dict[str, Any]
GIB = 1024**3


def admission_check(name: str, controller: str) -> Raw:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": name},
            "spec": {"controllerName": controller}}


def checked_queue(*checks: str | tuple[str, list[str]], cpu: int = 4) -> Raw:
    """ClusterQueue cq (cpu in flavor default) whose admissionChecksStrategy names ``checks`` (a name, or a
    name with its onFlavors)."""
    rules = [{"name": c} if isinstance(c, str) else {"name": c[0], "onFlavors": c[1]} for c in checks]
    return cluster_queue("cq", group(["cpu"], flavor_quotas("default", quota("cpu", cpu))),
                         admissionChecksStrategy={"admissionChecks": rules})


def scripted_job(name: str, script: str | None, check: str = "budget", **args: Any) -> Raw:
    raw = queued_job(name, **args)
    if script is not None:
        raw["metadata"].setdefault("annotations", {})[f"dratwin.io/admission-check.{check}"] = script
    return raw


def _cluster(*objects: Raw, checks: tuple[str | tuple[str, list[str]], ...] = ("budget",),
             controller: str = SCRIPTED) -> list[Raw]:
    names = {c if isinstance(c, str) else c[0] for c in checks}
    return [node("n1", cpu="8"), resource_flavor("default"), checked_queue(*checks),
            local_queue("lq", "cq", namespace="default"),
            *(admission_check(n, controller) for n in sorted(names)), *objects]


def _view(sim: Simulation, job: str) -> Any:
    assert sim.kueue is not None
    return next(w for w in sim.kueue.view().workloads if w.key == sim.kueue.by_job[f"default/{job}"])


def _workload(sim: Simulation, job: str) -> Raw:
    assert sim.kueue is not None
    return sim.store.state.workloads[sim.kueue.by_job[f"default/{job}"]]


def _pods_created(sim: Simulation, job: str) -> list[float]:
    return [c.time for c in sim.events if c.kind == "Pod" and c.type == "Added" and c.key.startswith(f"default/{job}-")]


@dataclass(frozen=True)
class CheckCase:
    name: str
    cite: str
    objects: list[Raw]
    reserved_at: float | None
    admitted_at: float | None
    checks: list[Raw] = field(default_factory=list)  # status.admissionChecks at the end, without times
    conditions: dict[str, tuple[str, str]] = field(default_factory=dict)
    active: bool = True
    until: str = "1h"


def _states(raw: Raw) -> list[Raw]:
    return [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in raw["status"].get("admissionChecks", [])]


CHECK_CASES = [
    CheckCase("ready-later-admits-later", "admission_check.md: Admitted once every check is Ready",
              _cluster(scripted_job("a", "Ready@5m")), 0.0, 300.0,
              [{"name": "budget", "state": "Ready", "message": "scripted: Ready 300 s after the quota reservation"}],
              {"QuotaReserved": ("True", "QuotaReserved"), "Admitted": ("True", "Admitted")}),
    CheckCase("pending-holds-quota-not-admitted", "SyncAdmittedCondition: reservation without checks Ready",
              _cluster(scripted_job("a", "Ready@2h")), 0.0, None,
              [{"name": "budget", "state": "Pending", "message": ""}],
              {"QuotaReserved": ("True", "QuotaReserved"), "Admitted": ("False", "UnsatisfiedAdmissionChecks")}),
    CheckCase("retry-evicts-then-ready", "reconcileCheckBasedEviction (Retry), resetChecksOnEviction",
              _cluster(scripted_job("a", "Retry@2m,Ready@1m")), 120.0, 180.0,
              [{"name": "budget", "state": "Ready", "message": "scripted: Ready 60 s after the quota reservation",
                "retryCount": 1}],
              {"Evicted": ("False", "QuotaReserved"), "Requeued": ("True", "BackoffFinished"),
               "Admitted": ("True", "Admitted")}),
    CheckCase("rejected-deactivates", "reconcileCheckBasedEviction (Rejected): SetDeactivationTarget",
              _cluster(scripted_job("a", "Rejected@1m")), None, None,
              [{"name": "budget", "state": "Pending",
                "message": "Reset to Pending after eviction. Previously: Rejected"}],
              {"Evicted": ("True", "DeactivatedDueToAdmissionCheck"),
               "QuotaReserved": ("False", "PendingEvaluation")}, active=False),
    CheckCase("no-script-ready-at-once", "the scripted controller without a step: Ready at once",
              _cluster(scripted_job("a", None)), 0.0, 0.0),
    CheckCase("on-flavors-elsewhere-not-needed", "cluster_queue.md admissionChecksStrategy onFlavors",
              _cluster(scripted_job("a", "Ready@5m"), checks=(("budget", ["other"]),)), 0.0, 0.0),
    CheckCase("unknown-controller-stays-pending", "a check whose controller does not run is never Ready",
              _cluster(queued_job("a"), controller="kueue.x-k8s.io/provisioning-request"), 0.0, None,
              [{"name": "budget", "state": "Pending", "message": ""}]),
]


@pytest.mark.parametrize("case", CHECK_CASES, ids=lambda c: c.name)
def test_admission_checks(case: CheckCase) -> None:
    sim = simulate_objects(case.objects, until=case.until)
    view = _view(sim, "a")
    assert (view.reserved_at, view.admitted_at, view.active) == (case.reserved_at, case.admitted_at, case.active)
    raw = _workload(sim, "a")
    if case.checks:
        assert _states(raw) == case.checks
    found = {c["type"]: (c["status"], c["reason"]) for c in raw["status"]["conditions"]}
    assert {k: found.get(k) for k in case.conditions} == case.conditions
    if case.admitted_at is not None:
        assert _pods_created(sim, "a")[:1] == [case.admitted_at]


def test_retry_message_as_kueue_writes_it() -> None:
    sim = simulate_objects(_cluster(scripted_job("a", "Retry@2m,Rejected@1h")), until="10m")
    """buildAdmissionChecksMessage; after the next reservation resetActiveCondition keeps it as "Previously"."""
    evicted = next(c for c in _workload(sim, "a")["status"]["conditions"] if c["type"] == "Evicted")
    assert (evicted["status"], evicted["reason"]) == ("False", "QuotaReserved")
    assert evicted["message"] == ('Previously: Evicted due to AdmissionCheck in Retry state: "budget" '
                                  "(scripted: Retry 120 s after the quota reservation)")


def test_unknown_controller_is_noted() -> None:
    sim = simulate_objects(_cluster(queued_job("a"), controller="example.com/mine"))
    assert any("AdmissionCheck budget: controller 'example.com/mine' is not modelled" in n for n in sim.result.notes)


def test_quota_is_held_while_checks_are_pending() -> None:
    """Two-phase admission: the quota is reserved in the first phase, so the next Workload waits for it."""
    sim = simulate_objects(_cluster(scripted_job("a", "Ready@5m", cpu="4"), queued_job("b", "4", at="1s")))
    # b was set aside: requeued in the cohort's 1 s batch after a finishes
    assert (_view(sim, "b").reserved_at, _view(sim, "b").admitted_at) == (901.0, 901.0)


@pytest.mark.parametrize(("text", "expected"), [
    ("Ready@5m", [Step("Ready", 300.0)]),
    ("Retry@2m, Ready@0s", [Step("Retry", 120.0), Step("Ready", 0.0)]),
    ("Pending@1m", "'Pending@1m': expected STATE@DURATION with STATE one of Ready, Retry, Rejected (e.g. Ready@5m)"),
])
def test_parse_script(text: str, expected: list[Step] | str) -> None:
    assert parse_script(text) == expected


@dataclass(frozen=True)
class CacheCase:
    name: str
    cold_start: ColdStartSpec
    admitted_at: float


CACHE_CASES = [  # the LADF pattern: the check is Ready when the model data is in the cluster cache
    CacheCase("download-takes-time", ColdStartSpec(model_bytes={"default/a": 20 * GIB}, object_storage_bandwidth=GIB,
                                                   cluster_cache=True), 20.0),
    CacheCase("no-cluster-cache-nothing-to-wait-for",
              ColdStartSpec(model_bytes={"default/a": 20 * GIB}, object_storage_bandwidth=GIB), 0.0),
    CacheCase("no-model-size", ColdStartSpec(object_storage_bandwidth=GIB, cluster_cache=True), 0.0),
]


@pytest.mark.parametrize("case", CACHE_CASES, ids=lambda c: c.name)
def test_model_cache_check(case: CacheCase) -> None:
    objects = _cluster(queued_job("a", "1"), checks=("data",), controller=MODEL_CACHE)
    sim = simulate_text(manifest(*objects), until="1h", cold_start_spec=case.cold_start)
    view = _view(sim, "a")
    assert (view.reserved_at, view.admitted_at) == (0.0, case.admitted_at)
    assert _pods_created(sim, "a") == [case.admitted_at]  # the pods come once their data is cached


def test_without_checks_nothing_changes() -> None:
    sim = simulate_objects([*kueue_basics(4), queued_job("a", "1")])
    assert "admissionChecks" not in _workload(sim, "a")["status"]
