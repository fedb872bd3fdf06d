"""The admission check controllers of the twin: a scripted check, and the data-readiness check of LADF.

Kueue's two-phase admission (``site/content/en/docs/concepts/admission_check.md``, ``pkg/workload/
admissionchecks.go`` at ``ff69552``): a ClusterQueue's ``admissionChecksStrategy`` names AdmissionChecks
(each for every flavor, or ``onFlavors`` only); a Workload that reserves quota there gets one entry per check
in ``status.admissionChecks``, state ``Pending``; it is Admitted, and its Job unsuspended, only when every
check is ``Ready``. ``Retry`` evicts it (its quota is freed, it is queued again, the checks reset to
Pending); ``Rejected`` deactivates it. Each AdmissionCheck's ``spec.controllerName`` says which controller
sets its state. Upstream's own (ProvisioningRequest, MultiKueue) are not modelled: a check of an unknown
controller stays Pending, with a note. The twin adds two of its own, named in its domain:

- ``dratwin.io/scripted``: the states the scenario writes on the Job, in the annotation
  ``dratwin.io/admission-check.<check name>``: steps ``STATE@DURATION`` separated by commas, each DURATION
  counted from the quota reservation (``"Retry@2m,Ready@1m"``: Retry two minutes after the first
  reservation, then Ready a minute after the next one). A step is used once; with no step left (or no
  annotation) the check is Ready at once;
- ``dratwin.io/model-cache``: the data-readiness check of the LADF pattern. Its check is Pending until the
  Workload's model data (``spec.coldStart.models``, by Job ``namespace/name``) is in the in-cluster cache;
  asking starts the model's one download (:mod:`dratwin.sim.coldstart`, the same cache the pods read), so
  the Job's pods are created only when their data is there. Without a model size, or without a cluster cache
  (``spec.coldStart.clusterCache``), there is nothing to wait for: Ready at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dratwin.api.kueue import AdmissionCheck, ClusterQueue
from dratwin.scenario.quantities import NotationError, parse_duration
from dratwin.sim.engine import CONTROLLER, Engine

Raw = dict[str, Any]
SCRIPTED = "dratwin.io/scripted"
MODEL_CACHE = "dratwin.io/model-cache"
SCRIPT_ANNOTATION = "dratwin.io/admission-check."
STATES = ("Pending", "Ready", "Retry", "Rejected")
SetState = Callable[[str, str, str, str, int], None]  # workload key, check, state, message, reservation serial
DataReadyAt = Callable[[str, float], float]  # Job key, now -> when its model is in the cluster cache


@dataclass(frozen=True)
class Step:
    state: str
    after: float


def parse_script(text: str) -> list[Step] | str:
    """The steps of a scripted check's annotation, or what is wrong with it."""
    steps = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        state, at, duration = part.partition("@")
        if state not in STATES[1:] or not at:
            return f"{part!r}: expected STATE@DURATION with STATE one of Ready, Retry, Rejected (e.g. Ready@5m)"
        try:
            steps.append(Step(state, parse_duration(duration)))
        except NotationError as error:
            return f"{part!r}: {duration!r} {error.message}: {error.hint}"
    return steps


def checks_for(cq: ClusterQueue, flavors: Sequence[str]) -> list[str]:
    """The AdmissionChecks a Workload admitted in ``cq`` with ``flavors`` must pass, sorted by name."""
    strategy = cq.spec.admission_checks_strategy
    rules = strategy.admission_checks if strategy is not None else []
    return sorted({r.name for r in rules if not r.on_flavors or set(r.on_flavors) & set(flavors)})


@dataclass
class AdmissionChecks:
    """The check controllers: told when a Workload reserves quota, they answer through ``set_state``."""

    engine: Engine
    checks: Mapping[str, AdmissionCheck]
    set_state: SetState
    data_ready_at: DataReadyAt | None = None
    notes: list[str] = field(default_factory=list)
    _used: dict[tuple[str, str], int] = field(default_factory=dict)  # (workload, check) -> script steps used
    _noted: set[str] = field(default_factory=set)

    def reserved(self, workload: str, job: Raw, names: Sequence[str], serial: int) -> None:
        """The Workload reserved quota (its ``serial``-th reservation): each check's controller starts."""
        for name in names:
            check = self.checks.get(name)
            controller = check.spec.controller_name if check is not None else ""
            if controller == SCRIPTED:
                self._scripted(workload, job, name, serial)
            elif controller == MODEL_CACHE:
                self._model_cache(workload, job, name, serial)
            elif name not in self._noted:
                self._noted.add(name)
                what = f"controller {controller!r} is not modelled" if check is not None else "it is not in the input"
                self.notes.append(f"AdmissionCheck {name}: {what}: its check stays Pending and the Workloads that "
                                  "need it are never admitted")

    def _scripted(self, workload: str, job: Raw, name: str, serial: int) -> None:
        text = str(((job.get("metadata") or {}).get("annotations") or {}).get(f"{SCRIPT_ANNOTATION}{name}") or "")
        steps = parse_script(text)
        if isinstance(steps, str):
            if (workload, name) not in self._used:
                self.notes.append(f"{_job_key(job)}: annotation {SCRIPT_ANNOTATION}{name}: {steps}; the check is "
                                  "Ready at once")
            self._used[(workload, name)] = 0
            steps = []
        used = self._used.get((workload, name), 0)
        step = steps[used] if used < len(steps) else Step("Ready", 0.0)
        self._used[(workload, name)] = used + 1
        message = f"scripted: {step.state} {step.after:g} s after the quota reservation"
        self._at(step.after, workload, name, step.state, message, serial)

    def _model_cache(self, workload: str, job: Raw, name: str, serial: int) -> None:
        now = self.engine.now()
        key = _job_key(job)
        ready = self.data_ready_at(key, now) if self.data_ready_at is not None else now
        message = (f"the model data of {key} is in the cluster cache" if ready > now
                   else f"no model data of {key} to wait for")
        self._at(max(ready - now, 0.0), workload, name, "Ready", message, serial)

    def _at(self, delay: float, workload: str, name: str, state: str, message: str, serial: int) -> None:
        self.engine.after(delay, CONTROLLER, lambda: self.set_state(workload, name, state, message, serial))


def _job_key(job: Raw) -> str:
    meta = job.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
