"""KEDA's ScaledObject as a pure decision core: activation, cooldown to zero, and the HPA it drives.

Semantics of kedacore/keda (v2, ``pkg/scaling/scale_handler.go`` and ``pkg/scaling/executor/
scale_scaledobjects.go``; docs: "Scaling Deployments, StatefulSets & Custom Resources"):

- Every ``pollingInterval`` (30 s) KEDA asks its scaler for the metric. The ScaledObject is active when
  the value is above the trigger's ``activationThreshold`` (0 unless set). A CPU or memory trigger has no
  activity of its own: with only such triggers the object is always active, and KEDA's webhook refuses
  ``minReplicaCount: 0`` for it.
- Active: a target at 0 replicas is scaled to ``max(minReplicaCount, 1)``; otherwise KEDA only records
  the time (``lastActiveTime``) and leaves the count to the HPA.
- Inactive: a target above 0 with ``minReplicaCount: 0`` is scaled to 0, from any count, once
  ``cooldownPeriod`` (300 s) has passed since ``lastActiveTime`` (or ``initialCooldownPeriod`` since the
  ScaledObject was created, when it was never active); a target below ``minReplicaCount`` is raised to
  it.
- Above zero the HPA KEDA created decides, on its own sync period: min ``max(minReplicaCount, 1)``, max
  ``maxReplicaCount`` (100), the trigger's metric as an External metric with an AverageValue target (a
  CPU trigger: a Resource metric with a Utilization target). That HPA is
  :class:`~dratwin.autoscaling.hpa.HorizontalPodAutoscaler`, not a copy of it.

Faithful quirk worth seeing in a report: with a GPU-utilization trigger the metric is 0 while there are
no replicas, so the object never activates from zero unless the activation is decided on another value
(pass it as ``activation_value``, e.g. the request rate) (kedacore/keda#7538).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dratwin.autoscaling import behavior as settings
from dratwin.autoscaling.behavior import AutoscalerSettingsError
from dratwin.autoscaling.calculator import PodSample
from dratwin.autoscaling.hpa import HorizontalPodAutoscaler, HpaConfig, MetricSpec, ScaleDecision
from dratwin.scenario.model import AutoscalerSpec

POLLING_INTERVAL_SECONDS = 30.0  # ScaledObject spec.pollingInterval default
COOLDOWN_PERIOD_SECONDS = 300.0  # spec.cooldownPeriod default
INITIAL_COOLDOWN_PERIOD_SECONDS = 0.0  # spec.initialCooldownPeriod default
MAX_REPLICA_COUNT = 100  # spec.maxReplicaCount default

KEDA_SETTINGS = ("pollingInterval", "cooldownPeriod", "initialCooldownPeriod", "activationThreshold")


@dataclass(frozen=True)
class KedaConfig:
    """One ScaledObject with one trigger."""

    hpa: HpaConfig  # the HPA KEDA creates for the target
    min_replicas: int = 0
    max_replicas: int = MAX_REPLICA_COUNT
    polling_interval_seconds: float = POLLING_INTERVAL_SECONDS
    cooldown_period_seconds: float = COOLDOWN_PERIOD_SECONDS
    initial_cooldown_period_seconds: float = INITIAL_COOLDOWN_PERIOD_SECONDS
    activation_threshold: float = 0.0
    resource_trigger: bool = False  # a cpu/memory trigger: always active, evaluated by the HPA alone

    @classmethod
    def from_spec(cls, spec: AutoscalerSpec) -> KedaConfig:
        """The ScaledObject a scenario's ``kind: keda`` autoscaler describes.

        ``target`` is the trigger's threshold: per replica (AverageValue) for a DCGM trigger, a utilization
        percentage for ``cpu``. ``settings`` holds KEDA's fields in camelCase (``pollingInterval``,
        ``cooldownPeriod``, ``initialCooldownPeriod``, ``activationThreshold``) and the HPA's (``behavior``,
        as in KEDA's ``advanced.horizontalPodAutoscalerConfig``, and the controller's flags).
        """
        raw, path = spec.settings, "autoscaler.settings"
        cpu = spec.metric == "cpu"
        if spec.min_replicas < 0 or spec.max_replicas < max(spec.min_replicas, 1):
            raise AutoscalerSettingsError(
                "autoscaler.max_replicas",
                f"KEDA needs 0 <= min_replicas <= max_replicas and max_replicas >= 1, got {spec.min_replicas} and "
                f"{spec.max_replicas}",
            )
        if cpu and spec.min_replicas == 0:
            raise AutoscalerSettingsError(
                "autoscaler.min_replicas",
                "KEDA cannot scale a CPU trigger to zero (its webhook refuses minReplicaCount 0 with only cpu or "
                "memory triggers)",
                "set min_replicas: 1, or scale on DCGM_FI_DEV_GPU_UTIL",
            )
        metric = MetricSpec("Resource", spec.target) if cpu else MetricSpec("External", spec.target, False)
        hpa = HpaConfig.from_settings(
            metric, max(spec.min_replicas, 1), spec.max_replicas, raw, "autoscaler", KEDA_SETTINGS
        )
        return cls(
            hpa,
            spec.min_replicas,
            spec.max_replicas,
            settings.number(raw, "pollingInterval", path, POLLING_INTERVAL_SECONDS, minimum=1),
            settings.number(raw, "cooldownPeriod", path, COOLDOWN_PERIOD_SECONDS),
            settings.number(raw, "initialCooldownPeriod", path, INITIAL_COOLDOWN_PERIOD_SECONDS),
            settings.number(raw, "activationThreshold", path, 0.0, minimum=float("-inf")),
            cpu,
        )


class KedaAutoscaler:
    """One ScaledObject's state (``lastActiveTime``) and the HPA it owns.

    The caller runs :meth:`poll` every ``polling_interval_seconds`` and :meth:`sync` (the HPA) every
    ``hpa.sync_period_seconds``; both return a :class:`ScaleDecision`.
    """

    def __init__(self, config: KedaConfig, created_at: float = 0.0) -> None:
        self.config = config
        self.hpa = HorizontalPodAutoscaler(config.hpa)
        self.created_at = created_at
        self.last_active_at: float | None = None

    def poll(
        self, now: float, replicas: int, value: float | None, activation_value: float | None = None
    ) -> ScaleDecision:
        """KEDA's scale loop at ``now``: ``value`` is the trigger's metric (None: the scaler failed);
        activity is decided on ``activation_value`` when given, else on ``value``."""
        cfg = self.config
        deciding = value if activation_value is None else activation_value
        if cfg.resource_trigger:
            active = True
        elif deciding is None:
            return ScaleDecision(now, replicas, replicas, "TriggerError", usage=value)
        else:
            active = deciding > cfg.activation_threshold
        if active:
            return self._active(now, replicas, value)
        return self._inactive(now, replicas, value)

    def sync(
        self,
        now: float,
        replicas: int,
        *,
        value: float | None = None,
        pods: Sequence[PodSample] = (),
        status_replicas: int | None = None,
    ) -> ScaleDecision:
        """The HPA's sync: the External metric's ``value`` (or the pods, for a CPU trigger)."""
        return self.hpa.reconcile(now, replicas, pods=pods, external_value=value, status_replicas=status_replicas)

    def _active(self, now: float, replicas: int, value: float | None) -> ScaleDecision:
        self.last_active_at = now
        if replicas == 0:
            return ScaleDecision(now, 0, max(self.config.min_replicas, 1), "ScaledFromZero", usage=value)
        return ScaleDecision(now, replicas, replicas, "ActiveLeftToHpa", usage=value)

    def _inactive(self, now: float, replicas: int, value: float | None) -> ScaleDecision:
        cfg = self.config
        if replicas > 0 and cfg.min_replicas == 0:
            if self.last_active_at is None:
                cooled = self.created_at + cfg.initial_cooldown_period_seconds < now
            else:
                cooled = self.last_active_at + cfg.cooldown_period_seconds < now
            if cooled:
                return ScaleDecision(now, replicas, 0, "ScaledToZero", usage=value)
            return ScaleDecision(now, replicas, replicas, "CoolingDown", usage=value)
        if replicas < cfg.min_replicas:
            return ScaleDecision(now, replicas, cfg.min_replicas, "BelowMinReplicaCount", usage=value)
        return ScaleDecision(now, replicas, replicas, "Inactive", usage=value)
