"""How Kueue writes a Workload's status: its conditions, reasons and messages (at Kueue ``ff69552``).

``apimachinery`` meta.SetStatusCondition; ``pkg/workload/workload.go``, ``admissionchecks.go`` and
``evict/evict.go``; the reasons of ``apis/kueue/v1beta2/workload_types.go``; the Job controller's own
condition messages for a Job that ends.
"""

from __future__ import annotations

import copy
from typing import Any

from dratwin.cluster.naming import object_uid

Raw = dict[str, Any]

# batch/v1 Job conditions that end a Job (the Job controller's reasons and messages).
JOB_COMPLETE_MESSAGE = "Reached expected number of succeeded pods"
JOB_FAILED_MESSAGE = "Job has reached the specified backoff limit"

# Eviction and requeue reasons and messages (apis/kueue/v1beta2/workload_types.go, workload_controller.go).
PREEMPTED = "Preempted"
PODS_READY_TIMEOUT = "PodsReadyTimeout"
DEACTIVATED_BY_LIMIT = "DeactivatedDueToRequeuingLimitExceeded"
DEACTIVATED_MESSAGE = "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
PENDING_EVALUATION = "PendingEvaluation"
ADMISSION_CHECK = "AdmissionCheck"
DEACTIVATED = "Deactivated"
UNSATISFIED_CHECKS = ("UnsatisfiedAdmissionChecks", "The workload has not all checks ready")
NO_RESERVATION = ("NoReservation", "The workload has no reservation")
BACKOFF_FINISHED = ("BackoffFinished", "The workload backoff was finished")


def set_condition(conditions: list[dict[str, str]], new: dict[str, str]) -> list[dict[str, str]]:
    """``apimeta.SetStatusCondition``: a condition of the same type is updated where it is, its
    lastTransitionTime kept when its status does not change; a new type is appended."""
    out = list(conditions)
    for index, old in enumerate(out):
        if old.get("type") == new["type"]:
            if old.get("status") == new["status"]:
                new = {**new, "lastTransitionTime": old.get("lastTransitionTime", new["lastTransitionTime"])}
            out[index] = new
            return out
    return [*out, new]


def checks_message(checks: list[dict[str, Any]], state: str) -> str:
    """buildAdmissionChecksMessage: ``AdmissionCheck in Retry state: "name" (message)``."""
    parts = [f'"{c["name"]}" ({c["message"]})' if c.get("message") else f'"{c["name"]}"'
             for c in sorted(checks, key=lambda c: str(c["name"]))]
    noun = "AdmissionChecks" if len(checks) > 1 else "AdmissionCheck"
    return f"{noun} in {state} state: {'; '.join(parts)}"


def reset_check(check: dict[str, Any], at: str) -> dict[str, Any]:
    """resetChecksOnEviction: every check back to Pending (a Retry one counts its retry)."""
    if check.get("state") == "Pending":
        return check
    out = {"name": check["name"], "state": "Pending", "lastTransitionTime": at,
           "message": f"Reset to Pending after eviction. Previously: {check.get('state')}"}
    if check.get("state") == "Retry":
        out["retryCount"] = int(check.get("retryCount", 0)) + 1
    return out


def find_condition(workload: Raw, kind: str) -> dict[str, str] | None:
    for condition in (workload.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return dict(condition)
    return None


def new_condition(kind: str, status: str, reason: str, message: str, now: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}


def with_uid(raw: Raw) -> Raw:
    """The Job with the uid the API server gives it (the twin's deterministic one when the input has none)."""
    meta = raw.get("metadata") or {}
    if meta.get("uid"):
        return raw
    out = copy.deepcopy(raw)
    out["metadata"]["uid"] = object_uid("batch/v1", "Job", meta.get("namespace") or "default", meta.get("name") or "")
    return out
