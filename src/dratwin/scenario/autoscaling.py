"""A service's autoscaler as written (HPA or KEDA) read into an :class:`AutoscalerSpec` with upstream defaults.

The scenario's knobs, in seconds, with the upstream defaults (:func:`core_settings` hands them to the HPA and
KEDA cores under the keys those read):

- both: ``tolerance`` 0.1 (kube-controller-manager's ``--horizontal-pod-autoscaler-tolerance``; KEDA drives
  an HPA), ``syncPeriodSeconds`` 15 (``--horizontal-pod-autoscaler-sync-period``),
  ``scaleUpStabilizationSeconds`` 0 and ``scaleDownStabilizationSeconds`` 300 (the HPA's default
  ``behavior``);
- KEDA only: ``pollingIntervalSeconds`` 30, ``cooldownPeriodSeconds`` 300, ``activationThreshold`` 0 (the
  ScaledObject's defaults).

Replica bounds default to the HPA's ``minReplicas`` 1 (``maxReplicas`` has no upstream default: 10 here)
and to KEDA's ``minReplicaCount`` 0 and ``maxReplicaCount`` 100. An HPA cannot scale to zero without the
alpha ``HPAScaleToZero`` gate, so ``minReplicas: 0`` is for KEDA.
"""

from __future__ import annotations

import msgspec

from dratwin.api.loader import FieldPath
from dratwin.scenario import format as fmt
from dratwin.scenario.judge import Judge
from dratwin.scenario.model import AutoscalerSpec

HPA_DEFAULTS = {"tolerance": 0.1, "syncPeriodSeconds": 15.0, "scaleUpStabilizationSeconds": 0.0,
                "scaleDownStabilizationSeconds": 300.0}
KEDA_DEFAULTS = {**HPA_DEFAULTS, "pollingIntervalSeconds": 30.0, "cooldownPeriodSeconds": 300.0,
                 "activationThreshold": 0.0}
REPLICAS = {"hpa": (1, 10), "keda": (0, 100)}
_DURATIONS = {"sync_period": "syncPeriodSeconds", "scale_up_stabilization": "scaleUpStabilizationSeconds",
              "scale_down_stabilization": "scaleDownStabilizationSeconds",
              "polling_interval": "pollingIntervalSeconds", "cooldown_period": "cooldownPeriodSeconds"}
_KEDA_ONLY = {"polling_interval": "pollingInterval", "cooldown_period": "cooldownPeriod",
              "activation_threshold": "activationThreshold"}


def merged(base: fmt.Autoscaler | None, override: fmt.Autoscaler) -> fmt.Autoscaler:
    """``override``'s fields over ``base``'s (a variant that says ``metric: cpu`` keeps the replica bounds)."""
    if base is None:
        return override
    given = {name: value for name, value in msgspec.structs.asdict(override).items() if value is not None}
    return msgspec.structs.replace(base, **given)


def autoscaler_spec(written: fmt.Autoscaler, path: FieldPath, judge: Judge) -> AutoscalerSpec | None:
    """The autoscaler, or None (reported) when a value is wrong."""
    before = len(judge.reporter.sink)
    kind = written.kind or "hpa"
    metric = written.metric or "DCGM_FI_DEV_GPU_UTIL"
    if written.target is None:
        judge.required((*path, "target"), "the average utilization per replica to hold, in percent",
                       "e.g. target: 70")
    else:
        judge.number((*path, "target"), written.target, 0.0, 100.0, low_open=True)
    low, high = REPLICAS[kind]
    least = written.min_replicas if written.min_replicas is not None else low
    most = written.max_replicas if written.max_replicas is not None else high
    if least < 0 or (kind == "hpa" and least < 1):
        judge.invalid((*path, "minReplicas"), least, "an HPA keeps at least 1 replica" if kind == "hpa" else
                      "must not be negative", "scale to zero with kind: keda" if kind == "hpa" else "")
    if most < max(least, 1):
        judge.invalid((*path, "maxReplicas"), most, f"must be at least minReplicas ({least}) and at least 1")
    settings = dict(KEDA_DEFAULTS if kind == "keda" else HPA_DEFAULTS)
    if written.tolerance is not None and judge.number((*path, "tolerance"), written.tolerance, 0.0, 1.0):
        settings["tolerance"] = written.tolerance
    for name, key in _DURATIONS.items():
        value = getattr(written, name)
        if value is None:
            continue
        if kind == "hpa" and name in _KEDA_ONLY:
            judge.forbidden((*path, _KEDA_ONLY[name]), "a KEDA setting", "use kind: keda, or remove it")
            continue
        seconds = judge.duration((*path, fmt.Autoscaler.__struct_encode_fields__[
            fmt.Autoscaler.__struct_fields__.index(name)]), value)
        if seconds is not None:
            settings[key] = seconds
    if written.activation_threshold is not None:
        if kind == "hpa":
            judge.forbidden((*path, "activationThreshold"), "a KEDA setting", "use kind: keda, or remove it")
        elif judge.number((*path, "activationThreshold"), written.activation_threshold, 0.0) is not None:
            settings["activationThreshold"] = written.activation_threshold
    if any(p.is_error for p in judge.reporter.sink[before:]):
        return None
    given_up = written.scale_up_stabilization is not None
    return AutoscalerSpec(kind, metric, float(written.target or 0.0), least, most, core_settings(settings, given_up))


def core_settings(settings: dict[str, float], scale_up_given: bool) -> dict[str, object]:
    """The settings in the keys the HPA and KEDA cores read (:mod:`dratwin.autoscaling`): the scale-down
    window is the controller's ``downscaleStabilizationSeconds`` (the HPA without ``spec.behavior``); a
    scale-up window written in the scenario becomes a ``behavior`` with both windows, as an HPA object would
    have it; KEDA's durations are its ScaledObject fields ``pollingInterval`` and ``cooldownPeriod``."""
    core: dict[str, object] = {"tolerance": settings["tolerance"], "syncPeriodSeconds": settings["syncPeriodSeconds"],
                               "downscaleStabilizationSeconds": settings["scaleDownStabilizationSeconds"]}
    if scale_up_given:
        core["behavior"] = {
            "scaleUp": {"stabilizationWindowSeconds": settings["scaleUpStabilizationSeconds"]},
            "scaleDown": {"stabilizationWindowSeconds": settings["scaleDownStabilizationSeconds"]},
        }
    for ours, theirs in (("pollingIntervalSeconds", "pollingInterval"), ("cooldownPeriodSeconds", "cooldownPeriod"),
                         ("activationThreshold", "activationThreshold")):
        if ours in settings:
            core[theirs] = settings[ours]
    return core
