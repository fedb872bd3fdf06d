"""spec.behavior of an HPA (HPAScalingRules per direction), and reading it from a scenario's settings.

The scenario writes the knobs as the HPA object (or KEDA's ``advanced.horizontalPodAutoscalerConfig``)
does, in camelCase: ``behavior: {scaleDown: {stabilizationWindowSeconds: 60, policies: [{type: Pods,
value: 1, periodSeconds: 60}]}}``. A direction that is written gets the API server's defaults for the
fields it leaves out (pkg/apis/autoscaling/v2/defaults.go); the other direction gets its defaults whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from dratwin.errors import InputError

SelectPolicy = Literal["Max", "Min", "Disabled"]
PolicyType = Literal["Pods", "Percent"]

DOWNSCALE_STABILIZATION_SECONDS = 300.0  # --horizontal-pod-autoscaler-downscale-stabilization


class AutoscalerSettingsError(InputError):
    """A scenario's autoscaler settings that the autoscaler would not accept; ``path`` names the field."""

    def __init__(self, path: str, problem: str, hint: str = "") -> None:
        self.path = path
        self.problem = problem
        self.hint = hint
        super().__init__(f"{path}: {problem}" + (f" ({hint})" if hint else ""))


@dataclass(frozen=True)
class ScalingPolicy:
    """One HPAScalingPolicy: change by ``value`` pods or percent within ``period_seconds``."""

    type: PolicyType
    value: int
    period_seconds: float


@dataclass(frozen=True)
class ScalingRules:
    """One direction of spec.behavior (HPAScalingRules)."""

    stabilization_window_seconds: float
    policies: tuple[ScalingPolicy, ...]
    select_policy: SelectPolicy = "Max"
    tolerance: float | None = None  # KEP-4951 (beta, on by default in 1.36); None: the controller's flag


# The API server's defaults (GenerateHPAScaleUpRules / GenerateHPAScaleDownRules).
DEFAULT_SCALE_UP = ScalingRules(0.0, (ScalingPolicy("Percent", 100, 15.0), ScalingPolicy("Pods", 4, 15.0)))
DEFAULT_SCALE_DOWN = ScalingRules(DOWNSCALE_STABILIZATION_SECONDS, (ScalingPolicy("Percent", 100, 15.0),))


@dataclass(frozen=True)
class Behavior:
    """spec.behavior with the API server's defaults for whatever the object leaves out."""

    scale_up: ScalingRules = DEFAULT_SCALE_UP
    scale_down: ScalingRules = DEFAULT_SCALE_DOWN


def known_keys(raw: Mapping[str, Any], allowed: tuple[str, ...], path: str) -> None:
    """Unknown keys are errors: a typo must not silently fall back to a default."""
    for key in raw:
        if key not in allowed:
            raise AutoscalerSettingsError(f"{path}.{key}", "unknown field", "known fields: " + ", ".join(allowed))


def number(raw: Mapping[str, Any], key: str, path: str, default: float, *, minimum: float = 0.0) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AutoscalerSettingsError(f"{path}.{key}", f"expected a number, got {value!r}")
    if value < minimum:
        raise AutoscalerSettingsError(f"{path}.{key}", f"must be at least {minimum:g}, got {value!r}")
    return float(value)


def mapping(raw: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise AutoscalerSettingsError(path, f"expected a mapping, got {raw!r}")
    return cast(Mapping[str, Any], raw)


def _policy(raw: Any, path: str) -> ScalingPolicy:
    data = mapping(raw, path)
    known_keys(data, ("type", "value", "periodSeconds"), path)
    kind = data.get("type")
    if kind not in ("Pods", "Percent"):
        raise AutoscalerSettingsError(f"{path}.type", f"expected Pods or Percent, got {kind!r}")
    value = number(data, "value", path, 0, minimum=1)
    period = number(data, "periodSeconds", path, 0, minimum=1)
    if period > 1800:
        raise AutoscalerSettingsError(f"{path}.periodSeconds", "must be at most 1800 (the API's limit)")
    return ScalingPolicy(cast(PolicyType, kind), int(value), period)


def scaling_rules(raw: Any, path: str, defaults: ScalingRules) -> ScalingRules:
    data = mapping(raw, path)
    known_keys(data, ("stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"), path)
    window = number(data, "stabilizationWindowSeconds", path, defaults.stabilization_window_seconds)
    select = data.get("selectPolicy", defaults.select_policy)
    if select not in ("Max", "Min", "Disabled"):
        raise AutoscalerSettingsError(f"{path}.selectPolicy", f"expected Max, Min or Disabled, got {select!r}")
    policies = defaults.policies
    if "policies" in data:
        items = data["policies"]
        if not isinstance(items, list) or not items:
            raise AutoscalerSettingsError(f"{path}.policies", "expected a non-empty list of policies")
        policies = tuple(_policy(item, f"{path}.policies[{i}]") for i, item in enumerate(items))
    tolerance = number(data, "tolerance", path, -1.0, minimum=-1.0) if "tolerance" in data else None
    if tolerance is not None and tolerance < 0:
        raise AutoscalerSettingsError(f"{path}.tolerance", "must be at least 0")
    return ScalingRules(window, policies, cast(SelectPolicy, select), tolerance)


def behavior(raw: Any, path: str, downscale_window: float = DOWNSCALE_STABILIZATION_SECONDS) -> Behavior:
    """spec.behavior from its API form; an unset scale-down window is the controller's flag value."""
    data = mapping(raw, path)
    known_keys(data, ("scaleUp", "scaleDown"), path)
    down_defaults = ScalingRules(downscale_window, DEFAULT_SCALE_DOWN.policies)
    up = scaling_rules(data["scaleUp"], f"{path}.scaleUp", DEFAULT_SCALE_UP) if "scaleUp" in data else DEFAULT_SCALE_UP
    down = (
        scaling_rules(data["scaleDown"], f"{path}.scaleDown", down_defaults) if "scaleDown" in data else down_defaults
    )
    return Behavior(up, down)
