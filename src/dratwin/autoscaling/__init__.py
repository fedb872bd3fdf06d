"""Autoscalers as pure decision cores: Kubernetes' HPA and KEDA's ScaledObject.

They read no clock and no cluster: the caller passes the time, the replica count and the metric samples,
and gets back a :class:`ScaleDecision` (the count to set and the rule that decided it). Each object keeps
only the history its upstream controller keeps (recommendations, scale events, ``lastActiveTime``).
"""

from dratwin.autoscaling.behavior import AutoscalerSettingsError, Behavior, ScalingPolicy, ScalingRules
from dratwin.autoscaling.calculator import PodSample, Recommendation, Tolerances
from dratwin.autoscaling.hpa import HorizontalPodAutoscaler, HpaConfig, MetricSpec, ScaleDecision
from dratwin.autoscaling.keda import KedaAutoscaler, KedaConfig

__all__ = [
    "AutoscalerSettingsError",
    "Behavior",
    "HorizontalPodAutoscaler",
    "HpaConfig",
    "KedaAutoscaler",
    "KedaConfig",
    "MetricSpec",
    "PodSample",
    "Recommendation",
    "ScaleDecision",
    "ScalingPolicy",
    "ScalingRules",
    "Tolerances",
]
