"""Kueue's v1beta1 objects and Configuration, converted to v1beta2 as Kueue converts them.

Kueue stores ``kueue.x-k8s.io`` objects as v1beta2 and serves v1beta1 (deprecated) through its conversion
webhook (``apis/kueue/v1beta1/*_conversion.go``); its manager reads a v1beta1 Configuration the same way
(``apis/config/v1beta1/configuration_conversion.go``). dratwin reads v1beta2, so it converts on the way in,
as a pure function from raw dict to raw dict, recording each move so that a problem found later points at
the line the user wrote. What changes:

- ClusterQueue: ``spec.cohort`` → ``spec.cohortName``; ``spec.admissionChecks`` (names) →
  ``spec.admissionChecksStrategy.admissionChecks[{name}]``; the removed ``flavorFungibility`` values
  ``whenCanBorrow: Borrow`` and ``whenCanPreempt: Preempt`` → ``MayStopSearch``.
- Workload: ``spec.priorityClassSource`` + ``spec.priorityClassName`` → ``spec.priorityClassRef``
  (``kueue.x-k8s.io/WorkloadPriorityClass`` or ``scheduling.k8s.io/PriorityClass``); the misspelt
  ``status.accumulatedPastExexcutionTimeSeconds`` → ``accumulatedPastExecutionTimeSeconds``.
- AdmissionCheck: ``spec.retryDelayMinutes`` (deprecated, unused) is dropped.
- Status fields v1beta2 no longer has (LocalQueue ``flavors``/``flavorUsage``, ClusterQueue
  ``pendingWorkloadsStatus``, ``admissionFairSharingStatus``, topology ``domains``) are dropped: Kueue
  recomputes status.
- Configuration: ``fairSharing.enable`` and ``waitForPodsReady.enable`` are gone in v1beta2, where the
  stanza's presence turns the feature on: ``enable: true`` keeps the stanza (without the flag),
  ``enable: false`` (or unset) removes it.

Everything else (metadata, unknown fields) is kept as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dratwin.api.conversion import Conversion, _own
from dratwin.api.kueue import API_VERSION, CONFIG_API_VERSION, CONFIG_GROUP, GROUP, KUEUE_KINDS, OLDER_VERSIONS

CONVERTED_VERSIONS = tuple(f"{group}/{v}" for group in (GROUP, CONFIG_GROUP) for v in OLDER_VERSIONS)
WORKLOAD_PRIORITY = ("kueue.x-k8s.io", "WorkloadPriorityClass")
POD_PRIORITY = ("scheduling.k8s.io", "PriorityClass")
_PRIORITY_SOURCES = {"kueue.x-k8s.io/workloadpriorityclass": WORKLOAD_PRIORITY,
                     "scheduling.k8s.io/priorityclass": POD_PRIORITY}
_DROPPED_STATUS = {
    "ClusterQueue": ("pendingWorkloadsStatus",),
    "LocalQueue": ("flavors", "flavorUsage"),
}


def needs_kueue_conversion(raw: Mapping[str, Any]) -> bool:
    version, kind = raw.get("apiVersion"), raw.get("kind")
    if version not in CONVERTED_VERSIONS:
        return False
    return kind == "Configuration" if str(version).startswith(CONFIG_GROUP) else kind in KUEUE_KINDS


def convert_to_v1beta2(raw: Mapping[str, Any]) -> Conversion:
    """The v1beta2 form of a Kueue v1beta1 object or Configuration; ``raw`` is not changed."""
    version = str(raw.get("apiVersion"))
    out = dict(raw)
    config = version.startswith(CONFIG_GROUP)
    out["apiVersion"] = CONFIG_API_VERSION if config else API_VERSION
    conversion = Conversion(out, version)
    kind = str(raw.get("kind"))
    if config:
        _configuration(out)
    elif kind == "ClusterQueue":
        _cluster_queue(out, conversion)
    elif kind == "Workload":
        _workload(out, conversion)
    elif kind == "AdmissionCheck" and isinstance(out.get("spec"), dict):
        _own(out, "spec").pop("retryDelayMinutes", None)
    _drop_status(out, kind)
    return conversion


def _cluster_queue(out: dict[str, Any], conversion: Conversion) -> None:
    spec = _own(out, "spec")
    if not isinstance(spec, dict):
        return
    if "cohort" in spec:
        spec["cohortName"] = spec.pop("cohort")
        conversion.moved[("spec", "cohortName")] = ("spec", "cohort")
    checks = spec.pop("admissionChecks", None)
    if isinstance(checks, list) and checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": name} for name in checks]}
        conversion.moved[("spec", "admissionChecksStrategy")] = ("spec", "admissionChecks")
        for index in range(len(checks)):
            conversion.moved[("spec", "admissionChecksStrategy", "admissionChecks", index, "name")] = (
                "spec", "admissionChecks", index)
    elif checks is not None and not isinstance(checks, list):
        spec["admissionChecks"] = checks  # not a list: left for the structural check of v1beta1 to have reported
    fungibility = _own(spec, "flavorFungibility")
    if isinstance(fungibility, dict):
        for key, old in (("whenCanBorrow", "Borrow"), ("whenCanPreempt", "Preempt")):
            if fungibility.get(key) == old:
                fungibility[key] = "MayStopSearch"


def _workload(out: dict[str, Any], conversion: Conversion) -> None:
    spec = _own(out, "spec")
    if isinstance(spec, dict):
        source = spec.pop("priorityClassSource", None)
        name = spec.pop("priorityClassName", None)
        ref = _PRIORITY_SOURCES.get(str(source).lower()) if source else None
        if ref is not None and name:
            spec["priorityClassRef"] = {"group": ref[0], "kind": ref[1], "name": name}
            conversion.moved[("spec", "priorityClassRef")] = ("spec", "priorityClassSource")
            conversion.moved[("spec", "priorityClassRef", "name")] = ("spec", "priorityClassName")
    status = _own(out, "status")
    if isinstance(status, dict) and "accumulatedPastExexcutionTimeSeconds" in status:
        status["accumulatedPastExecutionTimeSeconds"] = status.pop("accumulatedPastExexcutionTimeSeconds")


def _drop_status(out: dict[str, Any], kind: str) -> None:
    status = out.get("status")
    if not isinstance(status, dict):
        return
    dropped = [key for key in _DROPPED_STATUS.get(kind, ()) if key in status]
    fair = status.get("fairSharing")
    if not dropped and not (isinstance(fair, dict) and "admissionFairSharingStatus" in fair):
        return
    status = _own(out, "status")
    for key in dropped:
        status.pop(key)
    fair = _own(status, "fairSharing")
    if isinstance(fair, dict):
        fair.pop("admissionFairSharingStatus", None)


def _configuration(out: dict[str, Any]) -> None:
    for stanza in ("fairSharing", "waitForPodsReady"):
        value = out.get(stanza)
        if not isinstance(value, dict):
            continue
        if value.get("enable") is True:
            kept = dict(value)
            kept.pop("enable")
            out[stanza] = kept
        else:
            del out[stanza]  # v1beta1's default is off; in v1beta2 the stanza itself turns it on
